package compact

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"unicode/utf16"
)

func TestEstimateTokens(t *testing.T) {
	exit := 1
	call := func(name, args string) Part {
		return Part{Type: PartToolCall, ToolCall: &ToolCall{Name: name, Arguments: json.RawMessage(args)}}
	}
	tests := []struct {
		name string
		msg  *Message
		want int
	}{
		{"empty", &Message{Role: RoleUser}, 0},
		{"rounds up per message", TextMessage(RoleUser, "abcde"), 2},
		{"utf-16 units: é is one, 😀 is two", TextMessage(RoleUser, "é😀é"), 1},
		{"text parts add up", &Message{Role: RoleUser, Content: []Part{{Type: PartText, Text: "abcd"}, {Type: PartText, Text: "efgh"}}}, 2},
		{"user image counts 1200", &Message{Role: RoleUser, Content: []Part{{Type: PartText, Text: "look"}, {Type: PartImage, Image: &Image{Data: "xx"}}}}, 1201},
		{"tool result image", &Message{Role: RoleToolResult, Content: []Part{{Type: PartImage}, {Type: PartImage}}}, 2400},
		{"assistant text, thinking, tool call", &Message{Role: RoleAssistant, Content: []Part{
			{Type: PartText, Text: "1234"}, {Type: PartThinking, Thinking: "5678"}, call("read", `{"path":"a"}`)}}, 2 + 4},
		// JSON.stringify keeps key order, drops whitespace, does not escape <>&.
		{"tool call args as JavaScript prints them", &Message{Role: RoleAssistant, Content: []Part{
			call("bash", `{ "z": "<&>", "a" : [1, 2.50, true, null] }`)}}, (4 + len(`{"z":"<&>","a":[1,2.5,true,null]}`) + 3) / 4},
		{"escapes in args", &Message{Role: RoleAssistant, Content: []Part{
			call("w", `{"t":"line\nnext \"q\" \u00e9 \/"}`)}}, (1 + len(`{"t":"line\nnext \"q\" é /"}`) - 1 + 3) / 4},
		{"bash execution", &Message{Role: RoleBash, Meta: &MessageMeta{Command: "ls", Output: "a\nb", ExitCode: &exit}}, 2},
		{"summary", TextMessage(RoleCompactionSummary, strings.Repeat("s", 40)), 10},
	}
	for _, tt := range tests {
		if got := EstimateTokens(tt.msg); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestJSStringifyLenFastMatchesSlow(t *testing.T) {
	cases := []string{
		`{}`, `[]`, `{"a":1}`, `{"a":"b","c":[1,2,{"d":null}]}`, ` { "x" : -0.5e3 } `,
		`{"s":"\u0001\u001f\b\t\u2028😀"}`, `{"n":1e21,"m":0.000001,"k":1e-7,"big":12345678901234567890}`,
		`{"pair":"\ud83d\ude00","lone":"\ud800x"}`, `"just a string"`, `true`, `[false,null]`,
	}
	for _, c := range cases {
		fast, ok := jsStringifyLenFast([]byte(c))
		slow, ok2 := jsLen([]byte(c))
		if !ok || !ok2 || fast != slow {
			t.Errorf("%s: fast %d (%v), slow %d (%v)", c, fast, ok, slow, ok2)
		}
	}
	if got := JSStringifyLen(json.RawMessage(`{"a":`)); got != len(`{"a":`) {
		t.Errorf("invalid JSON counts its raw length, got %d", got)
	}
	if raw := `{ "a" : "bad \q escape" }`; JSStringifyLen(json.RawMessage(raw)) != len(raw) {
		t.Errorf("an invalid escape counts the raw length %d, got %d", len(raw), JSStringifyLen(json.RawMessage(raw)))
	}
	if got := JSStringifyLen(nil); got != 4 {
		t.Errorf("missing arguments count as null, got %d", got)
	}
}

func FuzzJSStringifyLen(f *testing.F) {
	for _, s := range []string{`{"a":"b"}`, `[1,2.0,"\u00e9"]`, `{"x":{"y":[true,false,null]}}`, `"\ud83d\ude00"`,
		`{"long":"abcdefghijklmnop\"qrstuvwxyz\\u00e9abcdefgh\nxyz0123456789é😀0123456789\u0007tail"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) {
			JSStringifyLen(json.RawMessage(s)) // must not panic
			return
		}
		fast, ok := jsStringifyLenFast([]byte(s))
		slow, ok2 := jsLen([]byte(s))
		if ok && ok2 && fast != slow {
			t.Fatalf("%q: fast %d, slow %d", s, fast, slow)
		}
	})
}

func TestTopLevelString(t *testing.T) {
	raw := []byte(`{"content":"{\"path\":\"inner\"}","nested":{"path":"no"},"path":"/a \"b\".go","n":3}`)
	if got, ok := TopLevelString(raw, "path"); !ok || got != `/a "b".go` {
		t.Fatalf("path = %q %v", got, ok)
	}
	if _, ok := TopLevelString(raw, "n"); ok {
		t.Fatal("a number is not a string")
	}
	if _, ok := TopLevelString(raw, "missing"); ok {
		t.Fatal("missing key found")
	}
	if _, ok := TopLevelString([]byte(`["path"]`), "path"); ok {
		t.Fatal("not an object")
	}
}

func FuzzUTF16Len(f *testing.F) {
	for _, s := range []string{"", "plain ascii text, long enough", "é😀x", "\x83\xff", "abcdefg\xe2\x82"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// []rune turns each invalid byte into U+FFFD, one unit.
		want := len(utf16.Encode([]rune(s)))
		if got := utf16Len(s); got != want {
			t.Fatalf("%q: %d, want %d", s, got, want)
		}
	})
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
		{"escaped key", `{"p\u0061th":"a"}`, false, []string{"", "", ""}},
		{"cut short", `{"path":"a`, false, []string{"", "", ""}},
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

// skipStringByByte is skipString as it was, one byte at a time.
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
		if got, want := skipString([]byte(s), 0), skipStringByByte([]byte(s), 0); got != want {
			t.Fatalf("%q: %d, want %d", s, got, want)
		}
	})
}

// Tokens computes the estimate on its first call and caches it; the cache
// is safe for goroutines that share a message (run with -race), holds 0
// as a real estimate, and ResetTokens makes the next call re-estimate.
func TestTokensCache(t *testing.T) {
	m := &Message{Role: RoleUser, Content: []Part{{Type: PartText, Text: strings.Repeat("abcd", 250)}}}
	const goroutines = 8
	got := make([]int, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() { got[g] = m.Tokens() })
	}
	wg.Wait()
	for g, n := range got {
		if n != 250 {
			t.Errorf("goroutine %d: Tokens() = %d, want 250", g, n)
		}
	}

	// The cached value stands until ResetTokens, even after a change.
	m.Content[0].Text = "abcdefgh"
	if n := m.Tokens(); n != 250 {
		t.Errorf("cached Tokens() after a change without reset = %d, want 250", n)
	}
	m.ResetTokens()
	if n := m.Tokens(); n != 2 {
		t.Errorf("Tokens() after ResetTokens = %d, want 2", n)
	}

	empty := &Message{Role: RoleUser}
	for range 2 {
		if n := empty.Tokens(); n != 0 {
			t.Errorf("empty message: Tokens() = %d, want 0", n)
		}
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
			if ok && skipValue(raw, len(`{"command":`)) == len(raw)-1 {
				t.Fatalf("%q: TopLevelString gave %q where encoding/json refused: %v", inner, got, err)
			}
			return
		}
		if !ok || got != *want.Command {
			t.Fatalf("%q: TopLevelString %q (%v), encoding/json %q", inner, got, ok, *want.Command)
		}
	})
}
