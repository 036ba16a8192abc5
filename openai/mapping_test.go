package openai

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

func TestReadChatMessageErrors(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{`[1]`, ": not a JSON object"},
		{`{"content":"x"}`, ".role: missing"},
		{`{"role":3}`, ".role: not a string"},
		{`{"role":"user","content":5}`, ".content: neither a string nor an array"},
		{`{"role":"user","content":[{"text":"x"}]}`, ".content[0].type: missing"},
		{`{"role":"user","content":[{"type":"text","text":1}]}`, ".content[0].text: not a string"},
		{`{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"f","arguments":"{}"}}]}`, ".tool_calls[0].id: missing"},
		{`{"role":"assistant","tool_calls":[{"id":"c","type":"function"}]}`, ".tool_calls[0].function: missing"},
		{`{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"f","arguments":[1]}}]}`, ".tool_calls[0].function.arguments: not a string"},
		{`{"role":"assistant","tool_calls":{}}`, ".tool_calls: not an array of objects"},
		{`{"role":"assistant","function_call":"f"}`, ".function_call: not an object"},
		{`{"role":"assistant","refusal":7}`, ".refusal: not a string"},
		{`{"role":"tool","tool_call_id":1,"content":"x"}`, ".tool_call_id: not a string"},
	} {
		_, err := ReadChatMessage([]byte(tc.raw))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: err = %v, want %q", tc.raw, err, tc.want)
		}
	}
}

func TestReadResponsesItemErrors(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{`"x"`, ": not a JSON object"},
		{`{"type":3}`, ".type: want a string, have 3"},
		{`{"type":"message","role":"user","content":7}`, ".content: want an array of content items or a string, have 7"},
		{`{"type":"message","role":"user","content":[7]}`, ".content[0]: want an object"},
		{`{"type":"message","role":"user","content":[{"type":"input_text","text":1}]}`, ".content[0].text: want a string, have 1"},
		{`{"type":"function_call","name":"x","arguments":"{}"}`, ".call_id: missing"},
		{`{"type":"function_call","call_id":"c","arguments":{}}`, ".arguments: want a string, have {}"},
		{`{"type":"reasoning","summary":{}}`, ".summary: want an array, have {}"},
		{`{"type":"function_call_output","call_id":"c","output":5}`, ".output: want a string, an array or an object, have 5"},
	} {
		_, err := ReadResponsesItem([]byte(tc.raw))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: err = %v, want %q", tc.raw, err, tc.want)
		}
	}
}

func TestReadResponsesItemKinds(t *testing.T) {
	for _, tc := range []struct {
		raw        string
		kind       ItemKind
		compaction bool
	}{
		{`{"role":"user","content":"hi"}`, ItemInput, false},
		{`{"type":"message","role":"developer","content":[]}`, ItemInput, false},
		{`{"type":"message","role":"assistant","content":[]}`, ItemModel, false},
		{`{"type":"reasoning","summary":[]}`, ItemModel, false},
		{`{"type":"mcp_call","id":"m"}`, ItemModel, false},
		{`{"type":"tool_search_call","execution":"server"}`, ItemModel, false},
		{`{"type":"tool_search_output","execution":"server"}`, ItemOther, false},
		{`{"type":"tool_search_output","call_id":"t","tools":[]}`, ItemOutput, false},
		{`{"type":"computer_call_output","call_id":"c","output":{"type":"computer_screenshot","image_url":"data:image/png;base64,AA"}}`, ItemOutput, false},
		{`{"type":"item_reference","id":"x"}`, ItemOther, false},
		{`{"type":"compaction","encrypted_content":"e"}`, ItemOther, true},
	} {
		it, err := ReadResponsesItem([]byte(tc.raw))
		if err != nil {
			t.Fatalf("%s: %v", tc.raw, err)
		}
		if it.Kind != tc.kind || it.Compaction != tc.compaction || it.Message == nil {
			t.Errorf("%s: kind %d compaction %v message %v", tc.raw, it.Kind, it.Compaction, it.Message)
		}
	}
}

func TestReadResponsesItemLongRaw(t *testing.T) {
	raw := `{"type":"image_generation_call","id":"ig","result":"` + strings.Repeat("A", 10000) + `"}`
	it, err := ReadResponsesItem([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	p := it.Message.Content[0]
	if len(p.Text) > maxRawText+40 || !strings.HasSuffix(p.Text, "more bytes)") || string(p.Extra[ExtraPart]) != raw {
		t.Errorf("text %d bytes, ends %q, extra kept %v", len(p.Text), p.Text[len(p.Text)-20:], p.Extra[ExtraPart] != nil)
	}
}

func TestCalls(t *testing.T) {
	call := func(id, name string, legacy bool) compact.Part {
		p := compact.Part{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: id, Name: name, Arguments: json.RawMessage("{}")}}
		if legacy {
			p.Extra = map[string]json.RawMessage{ExtraLegacyCall: json.RawMessage("true")}
		}
		return p
	}
	legacyCall := call("", "weather", true)
	shared := []compact.Part{legacyCall}
	a1 := &compact.Message{Role: compact.RoleAssistant, Content: shared}
	r1 := &compact.Message{Role: compact.RoleToolResult, Extra: map[string]json.RawMessage{ExtraLegacyResult: json.RawMessage("true")}}
	a2 := &compact.Message{Role: compact.RoleAssistant, Content: []compact.Part{call("c1", "bash", false)}}
	r2 := &compact.Message{Role: compact.RoleToolResult, ToolCallID: "c1"}
	r3 := &compact.Message{Role: compact.RoleToolResult, ToolCallID: "c1", ToolName: "own"}
	stray := &compact.Message{Role: compact.RoleToolResult, ToolCallID: "nope"}
	var c Calls
	got := []bool{c.Add(a1), c.Add(r1), c.Add(a2), c.Add(r2), c.Add(r3), c.Add(stray)}
	if want := []bool{false, true, false, true, true, false}; !slices.Equal(got, want) {
		t.Errorf("paired %v, want %v", got, want)
	}
	if id := a1.Content[0].ToolCall.ID; id != "function_call_1" || r1.ToolCallID != id || r1.ToolName != "weather" {
		t.Errorf("legacy call %q, result %q named %q", id, r1.ToolCallID, r1.ToolName)
	}
	if shared[0].ToolCall.ID != "" || legacyCall.ToolCall.ID != "" {
		t.Error("Add modified a part it should have replaced")
	}
	if r2.ToolName != "bash" || r3.ToolName != "own" || stray.ToolName != "" {
		t.Errorf("names %q %q %q", r2.ToolName, r3.ToolName, stray.ToolName)
	}
}

func FuzzReadChatMessage(f *testing.F) {
	for _, s := range []string{
		`{"role":"user","content":[{"type":"image_url","image_url":"data:image/png;base64,AA"}]}`,
		`{"role":"assistant","reasoning":{"x":1},"content":"","tool_calls":[{"id":"c","type":"custom","custom":{"name":"p","input":"x"}}]}`,
		`{"role":"function","name":"f","content":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := ReadChatMessage(raw)
		if err == nil && m.Message == nil {
			t.Fatal("no message and no error")
		}
	})
}

func FuzzReadResponsesItem(f *testing.F) {
	for _, s := range []string{
		`{"type":"function_call_output","call_id":"c","output":{"content_items":[{"type":"input_image","image_url":"x"}],"success":false}}`,
		`{"type":"local_shell_call","id":"l","action":[1]}`,
		`{"type":"reasoning","summary":null,"content":[{"text":"t"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		it, err := ReadResponsesItem(raw)
		if err == nil && it.Message == nil {
			t.Fatal("no message and no error")
		}
	})
}
