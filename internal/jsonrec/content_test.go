package jsonrec

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/compactkit/compact"
)

func TestContent(t *testing.T) {
	part := func(raw json.RawMessage) (compact.Part, error) {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return compact.Part{}, errors.New(".text: not a string")
		}
		return compact.Part{Type: compact.PartText, Text: "<" + s + ">"}, nil
	}
	for _, tc := range []struct {
		raw, want, err string
	}{
		{"", "", ""},
		{" null ", "", ""},
		{`"hi"`, "hi", ""},
		{`["a","b"]`, "<a><b>", ""},
		{`["a",1]`, "", ".content[1].text: not a string"},
		{`7`, "", ".content: neither a string nor a list"},
		{`[1,`, "", ".content: unexpected end of JSON input"},
	} {
		parts, err := Content(json.RawMessage(tc.raw), "a list", part)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: error %v, want %q", tc.raw, err, tc.err)
			}
			continue
		}
		got := ""
		for _, p := range parts {
			got += p.Text
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.raw, got, err, tc.want)
		}
	}
}

func TestEachObject(t *testing.T) {
	f := map[string]json.RawMessage{"ok": []byte(`[{"a":1},{"a":2}]`), "null": []byte("null"), "bad": []byte(`[1]`)}
	n := 0
	count := func(map[string]json.RawMessage) error { n++; return nil }
	if err := EachObject(f, "ok", count); err != nil || n != 2 {
		t.Errorf("ok: %d calls, %v", n, err)
	}
	for _, key := range []string{"null", "missing"} {
		if err := EachObject(f, key, count); err != nil || n != 2 {
			t.Errorf("%s: %d calls, %v", key, n, err)
		}
	}
	if err := EachObject(f, "bad", count); err == nil || err.Error() != ".bad: not an array of objects" {
		t.Errorf("bad: %v", err)
	}
	err := EachObject(f, "ok", func(o map[string]json.RawMessage) error {
		if string(o["a"]) == "2" {
			return errors.New(".a: two")
		}
		return nil
	})
	if err == nil || err.Error() != ".ok[1].a: two" {
		t.Errorf("element error: %v", err)
	}
}
