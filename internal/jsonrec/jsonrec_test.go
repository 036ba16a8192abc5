package jsonrec

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

func TestObject(t *testing.T) {
	data := []byte("{\"a\": 1,\n \"b\": [2, 3],\n\"c\":\"x\"}\n")
	ms, err := Object(data)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		key, value string
		line       int
	}{{"a", "1", 1}, {"b", "[2, 3]", 2}, {"c", `"x"`, 3}}
	if len(ms) != len(want) {
		t.Fatalf("%d members", len(ms))
	}
	for i, w := range want {
		if ms[i].Key != w.key || string(ms[i].Value) != w.value || Line(data, ms[i].Off) != w.line {
			t.Errorf("member %d = %s %s line %d, want %+v", i, ms[i].Key, ms[i].Value, Line(data, ms[i].Off), w)
		}
		if string(data[ms[i].Off:ms[i].Off+len(ms[i].Value)]) != w.value {
			t.Errorf("member %d offset %d does not point at its value", i, ms[i].Off)
		}
	}
	els, err := Array(data, "b", ms[1].Value, ms[1].Off)
	if err != nil || len(els) != 2 || string(data[els[1].Off:els[1].Off+1]) != "3" {
		t.Errorf("Array = %v, %v", els, err)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		data string
		doc  func([]byte) error
		want string
	}{
		{`[1]`, obj, "1: not a JSON object"},
		{"{\n\"a\":", obj, "2: truncated JSON"},
		{`{"a":1} x`, obj, "1: data after the JSON object"},
		{`{"a":1} {}`, obj, "1: data after the JSON object"},
		{"{\n\n\"a\" 1}", obj, "3: invalid JSON"},
		{`{}`, arr, "1: not a JSON array"},
		{`[1,`, arr, "1: truncated JSON"},
		{`[1] [2]`, arr, "1: data after the JSON array"},
		{``, obj, "1: truncated JSON"},
	}
	for _, tc := range tests {
		err := tc.doc([]byte(tc.data))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.data, err, tc.want)
		}
	}
	if _, err := Array([]byte("x\n{}"), "list", json.RawMessage("{}"), 2); err == nil || err.Error() != "2: list: not an array" {
		t.Errorf("Array on an object: %v", err)
	}
}

func obj(data []byte) error { _, err := Object(data); return err }
func arr(data []byte) error { _, err := ArrayDocument(data); return err }

func TestKeys(t *testing.T) {
	tests := []struct {
		head   string
		object bool
		seen   string
	}{
		{`{"a":[1],"b":{"c":2},"d":"x"}`, true, "a[ b{ d\""},
		{`  {"a": 1, "b": [1, 2`, true, "a1 b["},
		{"\xef\xbb\xbf{\"a\":null}", true, "an"},
		{`{"a`, true, ""},
		{`{"a":`, true, "a\x00"},
		{`[{"a":1}]`, false, ""},
		{`null`, false, ""},
		{``, false, ""},
	}
	for _, tc := range tests {
		var seen []string
		ok := Keys([]byte(tc.head), func(k string, first byte) bool {
			seen = append(seen, k+string(first))
			return true
		})
		if ok != tc.object || strings.Join(seen, " ") != tc.seen {
			t.Errorf("Keys(%q) = %v %q, want %v %q", tc.head, ok, strings.Join(seen, " "), tc.object, tc.seen)
		}
	}
	n := 0
	Keys([]byte(`{"a":1,"b":2}`), func(string, byte) bool { n++; return false })
	if n != 1 {
		t.Errorf("visit returning false did not stop: %d calls", n)
	}
}

func TestHelpers(t *testing.T) {
	for _, tc := range []struct {
		in, args string
		ok       bool
	}{{"", "{}", true}, {` {"a":1} `, `{"a":1}`, true}, {"not json", `{"_raw":"not json"}`, false}, {"[1]", `{"_raw":"[1]"}`, false}} {
		args, ok := Arguments(tc.in)
		if string(args) != tc.args || ok != tc.ok {
			t.Errorf("Arguments(%q) = %s %v", tc.in, args, ok)
		}
	}
	for _, tc := range []struct{ url, mime, data string }{
		{"data:image/png;base64,AAA=", "image/png", "AAA="},
		{"data:;base64,QQ==", "text/plain", "QQ=="},
		{"data:image/svg+xml;charset=utf-8;base64,PHN2Zz4=", "image/svg+xml", "PHN2Zz4="},
		{"data:text/plain,hello", "", ""},
		{"https://x/y.png", "", ""},
	} {
		mime, data, ok := SplitDataURL(tc.url)
		if mime != tc.mime || data != tc.data || ok != (tc.mime != "") {
			t.Errorf("SplitDataURL(%q) = %q %q %v", tc.url, mime, data, ok)
		}
	}
	f := map[string]json.RawMessage{"a": json.RawMessage(`"x"`), "b": json.RawMessage(`2`), "c": json.RawMessage(`null`)}
	var s string
	if err := String(f, "a", &s); err != nil || s != "x" {
		t.Errorf("String a = %q %v", s, err)
	}
	if err := String(f, "b", &s); err == nil || err.Error() != ".b: not a string" {
		t.Errorf("String b: %v", err)
	}
	if err := String(f, "c", &s); err != nil || s != "x" {
		t.Errorf("String null changed dst: %q %v", s, err)
	}
	if ex := Extras(f, "a", "c"); len(ex) != 1 || string(ex["b"]) != "2" {
		t.Errorf("Extras = %v", ex)
	}
	if Extras(f, "a", "b", "c") != nil {
		t.Error("Extras of nothing is not nil")
	}
	for raw, want := range map[string]bool{"": true, " null ": true, `""`: true, "[]": true, "{}": true, "0": false, `"a"`: false} {
		if IsEmpty(json.RawMessage(raw)) != want {
			t.Errorf("IsEmpty(%q) != %v", raw, want)
		}
	}
}

func FuzzObject(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":2}],"c":"d"}`, `[1,2]`, `{"a":`, "{\n}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if ms, err := Object(data); err == nil {
			for _, m := range ms {
				if m.Off < 0 || m.Off+len(m.Value) > len(data) {
					t.Fatalf("member %q offset %d out of range", m.Key, m.Off)
				}
				Array(data, m.Key, m.Value, m.Off)
			}
		}
		ArrayDocument(data)
		Keys(data, func(string, byte) bool { return true })
	})
}

func TestOneLine(t *testing.T) {
	tr := &compact.Transcript{Entries: []*compact.Entry{
		{Kind: compact.KindCustom, Meta: &compact.EntryMeta{Data: json.RawMessage("{\n  \"a\": [1,\n 2]\n}")}},
		{Kind: compact.KindMessage, Message: &compact.Message{Role: compact.RoleAssistant,
			Extra: map[string]json.RawMessage{"x": json.RawMessage("[\r\n1]"), "y": json.RawMessage(`"keep  this"`)},
			Content: []compact.Part{{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: "c", Arguments: json.RawMessage("{\n\"s\": \"a b\"\n}")},
				Extra: map[string]json.RawMessage{"z": json.RawMessage("{\n}")}}}}},
	}}
	OneLine(tr)
	m := tr.Entries[1].Message
	got := []string{string(tr.Entries[0].Metadata().Data), string(m.Extra["x"]), string(m.Extra["y"]), string(m.Content[0].ToolCall.Arguments), string(m.Content[0].Extra["z"])}
	want := []string{`{"a":[1,2]}`, `[1]`, `"keep  this"`, `{"s":"a b"}`, `{}`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("OneLine: %q, want %q", got, want)
	}
}

func TestSafeExtras(t *testing.T) {
	tr := &compact.Transcript{Entries: []*compact.Entry{
		{Kind: compact.KindMessage, Message: &compact.Message{Role: compact.RoleUser,
			Extra:   map[string]json.RawMessage{"Model": json.RawMessage(`"x"`), "agent": json.RawMessage(`"main"`), "f.Model": json.RawMessage(`1`), "details": json.RawMessage(`{}`)},
			Content: []compact.Part{{Type: compact.PartText, Text: "hi", Extra: map[string]json.RawMessage{"ID": json.RawMessage(`7`), "cache_control": json.RawMessage(`{}`)}}}}},
		{Kind: compact.KindCustom, Meta: &compact.EntryMeta{Data: json.RawMessage(`{"model":1}`)}},
	}}
	SafeExtras(tr, "f")
	m := tr.Entries[0].Message
	// details: a tool result's "details" is read back as its Details.
	want := map[string]string{"f.f.Model": `"x"`, "agent": `"main"`, "f.Model": `1`, "f.details": `{}`}
	got := map[string]string{}
	for k, v := range m.Extra {
		got[k] = string(v)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("message extras %v, want %v", got, want)
	}
	if p := m.Content[0].Extra; string(p["f.ID"]) != "7" || string(p["cache_control"]) != "{}" || len(p) != 2 {
		t.Errorf("part extras %v", p)
	}
}

func TestMergeAndSkipSpace(t *testing.T) {
	b := map[string]json.RawMessage{"k": []byte("2"), "y": []byte("3")}
	if got := Merge(nil, b); !reflect.DeepEqual(got, b) {
		t.Errorf("Merge(nil, b) = %v", got)
	}
	got := Merge(map[string]json.RawMessage{"k": []byte("1"), "x": []byte("0")}, b)
	want := map[string]json.RawMessage{"k": []byte("2"), "x": []byte("0"), "y": []byte("3")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Merge = %v, want %v", got, want)
	}
	data := []byte("[1 ,\n\t 2]  ")
	for _, tc := range []struct{ off, want int64 }{{0, 0}, {2, 7}, {7, 7}, {8, 8}, {9, 11}, {20, 20}} {
		if got := SkipSpace(data, tc.off); got != tc.want {
			t.Errorf("SkipSpace(%d) = %d, want %d", tc.off, got, tc.want)
		}
	}
}

func TestEachElement(t *testing.T) {
	data := []byte("{\"h\": [\n 1,\n 2,\n 3]}")
	elems, err := Array(data, "field h", data[6:len(data)-1], 6)
	if err != nil || len(elems) != 3 {
		t.Fatalf("Array = %v, %v", elems, err)
	}
	var seen []int
	err = EachElement(data, "h", elems, func(i int, e Element) error {
		seen = append(seen, i)
		if string(e.Raw) == "2" {
			return errors.New(": two")
		}
		return nil
	})
	if err == nil || err.Error() != "3: h[1]: two" || len(seen) != 2 {
		t.Errorf("EachElement = %v after %v, want 3: h[1]: two after [0 1]", err, seen)
	}
}
