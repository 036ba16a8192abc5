package jsonrec

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLines(t *testing.T) {
	decode := func(line []byte, n int) (int, error) {
		var v map[string]json.RawMessage
		if err := json.Unmarshal(line, &v); err != nil || v == nil {
			return 0, errors.New("not an object")
		}
		return n, nil
	}
	for _, tc := range []struct {
		name, data string
		lines      []int
		warn, err  string
	}{
		{"plain", "{}\n\n {} \n", []int{1, 3}, "", ""},
		{"bom", "\xef\xbb\xbf{}\n{}", []int{1, 2}, "", ""},
		{"cut last line", "{}\n{\"a\":", []int{1}, "f:2: the last line is cut short (5 bytes, no newline)", ""},
		{"bad last line with newline", "{}\n{\"a\":\n", nil, "", "f:2: not an object"},
		{"bad middle line", "{}\n[1]\n{}\n", nil, "", "f:2: not an object"},
		{"valid but refused last line", "{}\n[1]", nil, "", "f:2: not an object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, warnings, err := Lines([]byte(tc.data), "f", decode)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.lines) {
				t.Fatalf("lines %v, want %v", got, tc.lines)
			}
			for i := range got {
				if got[i] != tc.lines[i] {
					t.Errorf("lines %v, want %v", got, tc.lines)
				}
			}
			if tc.warn == "" && len(warnings) > 0 || tc.warn != "" && (len(warnings) != 1 || !strings.HasPrefix(warnings[0], tc.warn)) {
				t.Errorf("warnings %q, want %q", warnings, tc.warn)
			}
		})
	}
}

func TestOptFields(t *testing.T) {
	f := map[string]json.RawMessage{"s": []byte(`"x"`), "b": []byte("true"), "i": []byte("7"),
		"o": []byte(`{"k":1}`), "n": []byte("null"), "bad": []byte(`[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]`)}
	if s, err := OptString(f, "s"); s != "x" || err != nil {
		t.Errorf("OptString(s) = %q, %v", s, err)
	}
	if s, err := OptString(f, "n"); s != "" || err != nil {
		t.Errorf("OptString(null) = %q, %v", s, err)
	}
	if b, err := OptBool(f, "b"); !b || err != nil {
		t.Errorf("OptBool = %v, %v", b, err)
	}
	if i, err := OptInt(f, "i"); i != 7 || err != nil {
		t.Errorf("OptInt = %v, %v", i, err)
	}
	if o, ok, err := OptObject(f, "o"); !ok || err != nil || string(o["k"]) != "1" {
		t.Errorf("OptObject = %v, %v, %v", o, ok, err)
	}
	if _, ok, err := OptObject(f, "missing"); ok || err != nil {
		t.Errorf("OptObject(missing) = %v, %v", ok, err)
	}
	for _, tc := range []struct {
		got  error
		want string
	}{
		{second(OptString(f, "i")), "field i: want a string, have 7"},
		{second(OptBool(f, "s")), `field s: want true or false, have "x"`},
		{second(OptInt(f, "bad")), "field bad: want an integer, have [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,..."},
		{third(OptObject(f, "s")), `field s: want an object, have "x"`},
	} {
		if tc.got == nil || tc.got.Error() != tc.want {
			t.Errorf("error %v, want %q", tc.got, tc.want)
		}
	}
}

func second[A any](_ A, err error) error { return err }

func third[A, B any](_ A, _ B, err error) error { return err }

func TestFirstObject(t *testing.T) {
	for _, tc := range []struct {
		head, line string
		obj, cut   bool
	}{
		{"", "", false, false},
		{"\n  \n", "", false, false},
		{"\xef\xbb\xbf {\"a\":1} \n{}", `{"a":1}`, true, false},
		{"\n\n{\"a\":", `{"a":`, false, true},
		{"{\"a\":\n{}", `{"a":`, false, false},
		{"[1,", "[1,", false, false},
		{"{}\r\n", "{}", true, false},
	} {
		obj, line, cut := FirstObject([]byte(tc.head))
		if string(line) != tc.line || (obj != nil) != tc.obj || cut != tc.cut {
			t.Errorf("FirstObject(%q) = %v, %q, %v; want object %v, %q, %v", tc.head, obj, line, cut, tc.obj, tc.line, tc.cut)
		}
	}
}

func TestLineObjectAndMillis(t *testing.T) {
	if f, err := LineObject([]byte(`{"a":1}`)); err != nil || string(f["a"]) != "1" {
		t.Errorf("LineObject = %v, %v", f, err)
	}
	for line, want := range map[string]string{"null": "not a JSON object: null", "[1]": "not a JSON object: json: cannot unmarshal array into Go value of type map[string]json.RawMessage"} {
		if _, err := LineObject([]byte(line)); err == nil || err.Error() != want {
			t.Errorf("LineObject(%s) error %v, want %q", line, err, want)
		}
	}
	for ts, want := range map[string]int64{"": 0, "yesterday": 0, "2026-01-02T03:04:05.678Z": 1767323045678, "2026-01-02T04:04:05+01:00": 1767323045000} {
		if got := Millis(ts); got != want {
			t.Errorf("Millis(%q) = %d, want %d", ts, got, want)
		}
	}
}

func TestReadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.jsonl")
	if err := os.WriteFile(path, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	read := func(data []byte, name string) (string, error) { return name + "=" + string(data), nil }
	if got, err := ReadFile(path, "fmt", read); err != nil || got != path+"=abc" {
		t.Errorf("ReadFile = %q, %v", got, err)
	}
	_, err := ReadFile(filepath.Join(t.TempDir(), "missing"), "fmt", read)
	if !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "fmt: ") {
		t.Errorf("missing file: %v", err)
	}
}
