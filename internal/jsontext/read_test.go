package jsontext

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestTopLevelString(t *testing.T) {
	raw := []byte(`{"content":"{\"path\":\"inner\"}","nested":{"path":"no"},"path":"/a \"b\".go","n":3}`)
	for _, tt := range []struct {
		name, raw, key string
		want           string
		ok             bool
	}{
		{"escaped value", string(raw), "path", `/a "b".go`, true},
		{"a number is not a string", string(raw), "n", "", false},
		{"missing key", string(raw), "missing", "", false},
		{"not an object", `["path"]`, "path", "", false},
		{"first member wins", `{"path":"a","path":"b"}`, "path", "a", true},
		// A value missing before the key: the object cannot be read up to
		// it. (Before the scanners were merged this read "x".)
		{"value missing", `{"a":,"path":"x"}`, "path", "", false},
	} {
		got, ok := TopLevelString([]byte(tt.raw), tt.key)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: %q %v, want %q %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

func TestTopLevelValues(t *testing.T) {
	keys := []string{"path", "cmd", "missing"}
	for _, tt := range []struct {
		name, raw string
		ok        bool
		want      []string // "" for nil
	}{
		{"members", `{"path":"a.go","x":{"path":"no"},"cmd":["go","test"],"n":3}`, true, []string{`"a.go"`, `["go","test"]`, ""}},
		{"last wins", `{"path":"a","path":"b"}`, true, []string{`"b"`, "", ""}},
		{"blanks", ` { "cmd" : 1 , "path" : "x\"y" } `, true, []string{`"x\"y"`, "1", ""}},
		{"not an object", `["path"]`, true, []string{"", "", ""}},
		{"escaped key", `{"p\u0061th":"a"}`, false, nil},
		{"cut short", `{"path":"a`, false, nil},
		{"value missing", `{"cmd":,"path":"a"}`, false, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			vals := make([][]byte, len(keys))
			if ok := TopLevelValues([]byte(tt.raw), keys, vals); ok != tt.ok {
				t.Fatalf("ok %v, want %v", ok, tt.ok)
			}
			if !tt.ok {
				return
			}
			for k := range keys {
				if string(vals[k]) != tt.want[k] {
					t.Errorf("%s = %q, want %q", keys[k], vals[k], tt.want[k])
				}
			}
		})
	}
}

// TopLevelString decodes a value with escapes as encoding/json does: the
// same string, or a refusal where encoding/json refuses. Only values with
// a backslash go through the decoder checked here; values without one are
// returned as stored.
func FuzzTopLevelStringEscapes(f *testing.F) {
	for _, s := range []string{`a\nb`, `\"quoted\" \\ \/`, `\u00e9\ud83d\ude00`, `\ud800 lone`, `\udc00\ud800`, "bad\xffbyte\\t",
		`\u12`, `\x`, "ctl\x01\\n", `\b\f\r\t`, `\uD83D\uDE00 upper`, `\ud83d\u0041`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, inner string) {
		if !strings.Contains(inner, `\`) || strings.Count(inner, `"`) != strings.Count(inner, `\"`) {
			return // no escape, or a quote that would end the literal early
		}
		raw := []byte(`{"command":"` + inner + `"}`)
		var want struct{ Command *string }
		err := json.Unmarshal(raw, &want)
		got, ok := TopLevelString(raw, "command")
		if err != nil || want.Command == nil {
			if ok && SkipValue(raw, len(`{"command":`)) == len(raw)-1 {
				t.Fatalf("%q: TopLevelString gave %q where encoding/json refused: %v", inner, got, err)
			}
			return
		}
		if !ok || got != *want.Command {
			t.Fatalf("%q: TopLevelString %q (%v), encoding/json %q", inner, got, ok, *want.Command)
		}
	})
}
