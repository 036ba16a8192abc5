package jsontext

import (
	"errors"
	"testing"
)

// skipStringByByte is SkipString read one byte at a time.
func skipStringByByte(raw []byte, start int) int {
	for i := start + 1; i < len(raw); i++ {
		switch raw[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// FuzzSkipString: jumping from quote to quote ends a string where reading
// it byte by byte does.
func FuzzSkipString(f *testing.F) {
	for _, s := range []string{`"a"`, `"a\"b"x`, `"a\\"b`, `"\\\"`, `"`, `"\`, `"x\\\\"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) == 0 || s[0] != '"' {
			return
		}
		if got, want := SkipString([]byte(s), 0), skipStringByByte([]byte(s), 0); got != want {
			t.Fatalf("%q: %d, want %d", s, got, want)
		}
	})
}

func TestSkipValue(t *testing.T) {
	for _, tt := range []struct {
		raw  string
		i    int
		want int
	}{
		{`"a\"b",`, 0, 6},
		{`  {"a":[1,"]"]} x`, 0, 15},
		{`[1,[2,[3]]]`, 0, 11},
		{`123,`, 0, 3},
		{`true`, 0, 4},
		{`{"a":`, 0, -1},
		{`"open`, 0, -1},
		{`,1`, 0, -1}, // no value, a separator
		{`]`, 0, -1},
		{`   `, 0, -1},
	} {
		if got := SkipValue([]byte(tt.raw), tt.i); got != tt.want {
			t.Errorf("SkipValue(%q, %d) = %d, want %d", tt.raw, tt.i, got, tt.want)
		}
	}
}

func TestObject(t *testing.T) {
	body := []byte(` {"model":"m", "messages" : [ {"role":"user"} , 2 ],"k\u0065y":true} `)
	ms, err := Object(body)
	if err != nil {
		t.Fatal(err)
	}
	var keys, vals []string
	for _, m := range ms {
		keys = append(keys, m.Key)
		vals = append(vals, string(body[m.Value.Start:m.Value.End]))
	}
	if got := keys; len(got) != 3 || got[0] != "model" || got[1] != "messages" || got[2] != "key" {
		t.Fatalf("keys %q", got)
	}
	if vals[1] != `[ {"role":"user"} , 2 ]` || vals[2] != "true" {
		t.Fatalf("values %q", vals)
	}
	if all := ms[1].All; string(body[all.Start:all.End]) != `"messages" : [ {"role":"user"} , 2 ]` {
		t.Fatalf("member span %q", body[all.Start:all.End])
	}
	els, end, err := ArrayElements(body, ms[1].Value.Start)
	if err != nil || end != ms[1].Value.End || len(els) != 2 ||
		string(body[els[0].Start:els[0].End]) != `{"role":"user"}` || string(body[els[1].Start:els[1].End]) != "2" {
		t.Fatalf("elements %v end %d err %v", els, end, err)
	}
	if m := Find(ms, "messages"); m != &ms[1] {
		t.Fatalf("Find = %v", m)
	}
	if Find(ms, "nope") != nil {
		t.Fatal("Find found an absent key")
	}
}

func TestObjectErrors(t *testing.T) {
	for _, raw := range []string{
		``, `[]`, `{"a":1} x`, `{"a":1,}`, `{"a" 1}`, `{"a":}`, `{"a":1`, `{a:1}`, `{"\q":1}`,
	} {
		if _, err := Object([]byte(raw)); !errors.Is(err, ErrSyntax) {
			t.Errorf("Object(%q): %v, want ErrSyntax", raw, err)
		}
	}
	for _, raw := range []string{`{}`, ` { } `, `{"a":{}}`} {
		if _, err := Object([]byte(raw)); err != nil {
			t.Errorf("Object(%q): %v", raw, err)
		}
	}
}

func TestWithoutKey(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{"a":1,"cache_control":{"type":"ephemeral"}}`, `{"a":1}`},
		{`{"cache_control":{},"a":1}`, `{"a":1}`},
		{`{"cache_control":{}}`, `{}`},
		{`[{"type":"text","text":"x","cache_control":{"type":"ephemeral"}},{"b":[{"cache_control":1,"c":2}]}]`,
			`[{"type":"text","text":"x"},{"b":[{"c":2}]}]`},
		{`{"text":"\"cache_control\" in a string"}`, `{"text":"\"cache_control\" in a string"}`},
		{`{"a":1}`, `{"a":1}`},
		{`{"cache_control":`, `{"cache_control":`}, // unreadable: as it was
	} {
		if got := WithoutKey([]byte(tt.in), "cache_control"); string(got) != tt.want {
			t.Errorf("WithoutKey(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
