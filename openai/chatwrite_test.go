package openai

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/deepdiff"
)

// chatRoundTrips are request messages of every shape ReadChatMessage
// maps: each must read back from ChatMessages' output as it was read.
var chatRoundTrips = []string{
	`{"role":"user","content":"hello"}`,
	`{"role":"system","content":"be brief","name":"ops"}`,
	`{"role":"developer","content":[{"type":"text","text":"a"},{"type":"text","text":"b","cache_control":{"type":"ephemeral"}}]}`,
	`{"role":"user","content":[{"type":"text","text":"see"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo=","detail":"low"}}]}`,
	`{"role":"user","content":[{"type":"image_url","image_url":"data:image/jpeg;base64,/9j/"}]}`,
	`{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://example.com/cat.png"}}]}`,
	`{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"AAA=","format":"wav"}},{"type":"file","file":{"file_id":"f1"}}]}`,
	`{"role":"assistant","content":"Looking.","tool_calls":[{"id":"a","type":"function","function":{"name":"list_dir","arguments":"{\"path\":\".\"}"}}]}`,
	`{"role":"assistant","content":null,"tool_calls":[{"id":"b","type":"function","function":{"name":"read_file","arguments":"{broken"}},{"id":"c","type":"function","function":{"name":"f","arguments":" [1, 2] "}},{"id":"d","type":"function","function":{"name":"g","arguments":""}}]}`,
	`{"role":"assistant","content":"","tool_calls":[{"id":"e","type":"function","function":{"name":"h","arguments":{"x": 1}}}]}`,
	`{"role":"assistant","content":"","tool_calls":[{"id":"p","type":"custom","custom":{"name":"apply_patch","input":"*** Begin Patch <&>"}}]}`,
	`{"role":"assistant","content":null,"function_call":{"name":"legacy","arguments":"{\"q\":1}"}}`,
	`{"role":"assistant","content":null,"refusal":"I can't help with that."}`,
	`{"role":"assistant","content":[{"type":"refusal","refusal":"no"}],"refusal":null,"annotations":[]}`,
	`{"role":"assistant","reasoning":{"effort":"high"},"content":"ok"}`,
	`{"role":"tool","tool_call_id":"a","content":"x.txt"}`,
	`{"role":"tool","tool_call_id":"a","name":"list_dir","content":[{"type":"text","text":"one"},{"type":"text","text":"two"}]}`,
	`{"role":"function","name":"legacy","content":"42"}`,
}

// canonical returns a copy of m whose Extra values are re-encoded, so
// that two messages whose extras are the same JSON compare equal however
// that JSON was spaced or escaped.
func canonical(t testing.TB, m *compact.Message) *compact.Message {
	c := *m
	c.Extra = canonExtra(t, m.Extra)
	c.Content = nil
	for _, p := range m.Content {
		p.Extra = canonExtra(t, p.Extra)
		c.Content = append(c.Content, p)
	}
	return &c
}

func canonExtra(t testing.TB, extra map[string]json.RawMessage) map[string]json.RawMessage {
	if extra == nil {
		return nil
	}
	out := map[string]json.RawMessage{}
	for k, v := range extra {
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.UseNumber()
		var x any
		if err := dec.Decode(&x); err != nil {
			t.Fatalf("extra %q = %s: %v", k, v, err)
		}
		out[k], _ = json.Marshal(x)
	}
	return out
}

// chatRoundTrip reads raw, writes the message with ChatMessages and reads
// that back, failing on any error; it returns the two messages.
func chatRoundTrip(t testing.TB, raw string) (first, second *compact.Message, written json.RawMessage) {
	t.Helper()
	in, err := ReadChatMessage([]byte(raw))
	if err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	out, err := ChatMessages("", []*compact.Message{in.Message})
	if err != nil {
		t.Fatalf("%s: ChatMessages: %v", raw, err)
	}
	if len(out) != 1 {
		t.Fatalf("%s: %d messages written, want 1", raw, len(out))
	}
	back, err := ReadChatMessage(out[0])
	if err != nil {
		t.Fatalf("%s: written as %s, which reads as: %v", raw, out[0], err)
	}
	if bytes.Contains(out[0], []byte(`"role":"tool"`)) && bytes.Contains(out[0], []byte(`"name"`)) {
		t.Fatalf("%s: written as %s, a tool message with a name", raw, out[0])
	}
	if back.Message.Role == compact.RoleToolResult && back.Message.ToolName == "" {
		// A tool message carries no name: in a conversation, Calls finds
		// it again from the call; read alone, it comes back without one.
		back.Message.ToolName = in.Message.ToolName
	}
	return in.Message, back.Message, out[0]
}

func TestChatMessagesRoundTrip(t *testing.T) {
	for _, raw := range chatRoundTrips {
		first, second, written := chatRoundTrip(t, raw)
		if d := deepdiff.Of("message", canonical(t, first), canonical(t, second)); d != "" {
			t.Errorf("%s\nwritten as %s\n%s", raw, written, d)
		}
	}
}

func TestChatMessagesWire(t *testing.T) {
	call := func(id, name, args string) compact.Part {
		return compact.Part{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}}
	}
	broken, _ := Arguments("{broken")
	for _, tc := range []struct {
		name string
		m    *compact.Message
		want string
	}{
		{"user text", compact.TextMessage(compact.RoleUser, "hi <b>"), `{"role":"user","content":"hi \u003cb\u003e"}`},
		{"empty user", &compact.Message{Role: compact.RoleUser}, `{"role":"user","content":""}`},
		{"summary as user", compact.TextMessage(compact.RoleCompactionSummary, "s"), `{"role":"user","content":"s"}`},
		{"assistant", &compact.Message{Role: compact.RoleAssistant, StopReason: compact.StopToolUse, Model: "m", Content: []compact.Part{
			{Type: compact.PartThinking, Thinking: "hidden"},
			{Type: compact.PartText, Text: "Looking."},
			call("a", "list_dir", `{"path":"."}`),
			call("b", "read_file", string(broken)),
			call("c", "old", `"{as a string"`),
			call("d", "none", ``),
			call("e", "kept", `{"_raw":"{}"}`),
		}}, `{"role":"assistant","content":"Looking.","tool_calls":[` +
			`{"id":"a","type":"function","function":{"name":"list_dir","arguments":"{\"path\":\".\"}"}},` +
			`{"id":"b","type":"function","function":{"name":"read_file","arguments":"{broken"}},` +
			`{"id":"c","type":"function","function":{"name":"old","arguments":"{as a string"}},` +
			`{"id":"d","type":"function","function":{"name":"none","arguments":"{}"}},` +
			`{"id":"e","type":"function","function":{"name":"kept","arguments":"{\"_raw\":\"{}\"}"}}]}`},
		{"thinking only", &compact.Message{Role: compact.RoleAssistant, Content: []compact.Part{{Type: compact.PartThinking, Thinking: "x"}}},
			`{"role":"assistant","content":""}`},
		{"tool result", &compact.Message{Role: compact.RoleToolResult, ToolCallID: "a", ToolName: "list_dir", IsError: true,
			Content: []compact.Part{{Type: compact.PartText, Text: "error: no"}}},
			`{"role":"tool","tool_call_id":"a","content":"error: no"}`},
		{"images", &compact.Message{Role: compact.RoleUser, Content: []compact.Part{
			{Type: compact.PartImage, Image: &compact.Image{MimeType: "image/png", Data: "AA=="}},
			{Type: compact.PartImage, Extra: map[string]json.RawMessage{"source": json.RawMessage(`{"type":"url"}`)}},
		}}, `{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,AA=="}},{"type":"text","text":"[image]"}]}`},
		{"marks are not sent", &compact.Message{Role: compact.RoleAssistant, Content: []compact.Part{
			{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: "function_call_1", Name: "f", Arguments: json.RawMessage(`{}`)},
				Extra: map[string]json.RawMessage{ExtraLegacyCall: json.RawMessage("true")}},
		}}, `{"role":"assistant","content":"","function_call":{"name":"f","arguments":"{}"}}`},
	} {
		out, err := ChatMessages("", []*compact.Message{tc.m})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if string(out[0]) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, out[0], tc.want)
		}
	}
}

func TestChatMessagesSystemAndErrors(t *testing.T) {
	out, err := ChatMessages("be brief", []*compact.Message{compact.TextMessage(compact.RoleUser, "hi")})
	if err != nil || len(out) != 2 || string(out[0]) != `{"role":"system","content":"be brief"}` {
		t.Errorf("ChatMessages = %s, %v", out, err)
	}
	if out, err := ChatMessages("", nil); err != nil || len(out) != 0 {
		t.Errorf("no messages gave %s, %v", out, err)
	}
	for _, tc := range []struct {
		msgs []*compact.Message
		want string
	}{
		{[]*compact.Message{compact.TextMessage(compact.RoleUser, "a"), nil}, "openai: message 1: nil message"},
		{[]*compact.Message{{Role: compact.RoleUser, Extra: map[string]json.RawMessage{"x": json.RawMessage("{")}}},
			"openai: message 0: .x: extra member is not JSON"},
		{[]*compact.Message{{Role: compact.RoleUser, Content: []compact.Part{{Type: compact.PartText}, {Type: compact.PartText, Extra: map[string]json.RawMessage{"y": json.RawMessage("nope")}}}}},
			"openai: message 0: .content[1].y: extra member is not JSON"},
	} {
		_, err := ChatMessages("", tc.msgs)
		if err == nil || err.Error() != tc.want {
			t.Errorf("err = %v, want %q", err, tc.want)
		}
	}
}

func TestArgumentsText(t *testing.T) {
	for _, s := range []string{"{broken", "[1,2]", " x ", "null", `"q"`, `{"a": 1}`, `{"_raw":"x"}`, `{"_raw":"{}"}`, ""} {
		args, _ := Arguments(s)
		back, _ := Arguments(ArgumentsText(args))
		if !bytes.Equal(back, args) {
			t.Errorf("%q: stored %s, sent %q, read back %s", s, args, ArgumentsText(args), back)
		}
	}
}

func TestWrappedArguments(t *testing.T) {
	broken, _ := Arguments("{broken")
	for _, tc := range []struct {
		args string
		s    string
		ok   bool
	}{
		{string(broken), "{broken", true},
		{`{"_raw":"{broken"}`, "{broken", true},
		{`{"_raw": "{broken"}`, "", false}, // not as Arguments writes it
		{`{"_raw":"{}"}`, "", false},       // "{}" is an object: a model's own _raw
		{`{"_raw":"x","y":"z"}`, "", false},
		{`{"path":"."}`, "", false},
		{`"text"`, "", false},
		{``, "", false},
	} {
		s, ok := WrappedArguments(json.RawMessage(tc.args))
		if s != tc.s || ok != tc.ok {
			t.Errorf("WrappedArguments(%s) = %q, %v; want %q, %v", tc.args, s, ok, tc.s, tc.ok)
		}
	}
}

func TestReadChatAnswer(t *testing.T) {
	raw := `{"content":"x","tool_calls":[{"type":"function","function":{"name":"f","arguments":"{}"}}]}`
	if _, err := ReadChatMessage([]byte(raw)); err == nil {
		t.Error("ReadChatMessage took a message without role")
	}
	a, err := ReadChatAnswer([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if a.Role != "assistant" || a.Message.Role != compact.RoleAssistant || len(a.Message.ToolCalls()) != 1 || a.Message.ToolCalls()[0].ID != "" {
		t.Errorf("answer %+v, message %+v", a, a.Message)
	}
	if _, err := ReadChatAnswer([]byte(`{"role":"user","content":"x"}`)); err == nil || err.Error() != `.role: "user", want assistant` {
		t.Errorf("an answer from the user gave %v", err)
	}
}

// FuzzChatMessages checks that every request message ReadChatMessage
// reads is written by ChatMessages in a form that reads back the same,
// but for what the ChatMessages comment lists as not going out.
func FuzzChatMessages(f *testing.F) {
	for _, raw := range chatRoundTrips {
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, mark := range []string{ExtraPart, ExtraCallType, ExtraCustomInput, ExtraLegacyCall, ExtraLegacyResult} {
			if strings.Contains(raw, mark) {
				// A member named like a mark this package sets is
				// read over by the mark: not a round trip to keep.
				return
			}
		}
		if _, err := ReadChatMessage([]byte(raw)); err != nil {
			return
		}
		first, second, written := chatRoundTrip(t, raw)
		if d := deepdiff.Of("message", canonical(t, sent(first)), canonical(t, second)); d != "" {
			t.Errorf("%s\nwritten as %s\n%s", raw, written, d)
		}
	})
}

// sent is m as ChatMessages can carry it: without thinking, with the
// content "" a user or tool message without parts goes out with, an
// image without picture or link as "[image]", and a custom call typed.
func sent(m *compact.Message) *compact.Message {
	c := *m
	c.Content = nil
	for _, p := range m.Content {
		switch {
		case p.Type == compact.PartThinking:
			continue
		case p.Type == compact.PartImage && p.Image == nil && p.Extra["image_url"] == nil:
			p = compact.Part{Type: compact.PartText, Text: "[image]"}
		case p.Type == compact.PartToolCall && p.Extra[ExtraCustomInput] != nil && p.Extra[ExtraCallType] == nil:
			extra := map[string]json.RawMessage{ExtraCallType: json.RawMessage(`"custom"`)}
			for k, v := range p.Extra {
				extra[k] = v
			}
			p.Extra = extra
		}
		c.Content = append(c.Content, p)
	}
	if len(c.Content) == 0 && c.Role != compact.RoleAssistant {
		c.Content = []compact.Part{{Type: compact.PartText}}
	}
	return &c
}
