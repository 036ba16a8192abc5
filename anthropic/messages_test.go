package anthropic

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

func TestContent(t *testing.T) {
	tests := []struct {
		name    string
		role    compact.Role
		content string
		// want is one line per message: its role, then each part as
		// type:text (thinking, arguments for calls).
		want string
	}{
		{"string", compact.RoleUser, `"hi"`, "user text:hi"},
		{"absent", compact.RoleAssistant, ``, "assistant"},
		{"empty array", compact.RoleUser, `[]`, "user"},
		{"results first", compact.RoleUser,
			`[{"type":"tool_result","tool_use_id":"a","content":"out"},{"type":"tool_result","tool_use_id":"b","is_error":true},{"type":"text","text":"next"}]`,
			"toolResult(a) text:out\ntoolResult(b,error)\nuser text:next"},
		{"order kept", compact.RoleUser,
			`[{"type":"text","text":"before"},{"type":"tool_result","tool_use_id":"a","content":[{"type":"text","text":"x"},{"type":"text","text":"y"}]},{"type":"text","text":"after"}]`,
			"user text:before\ntoolResult(a) text:x text:y\nuser text:after"},
		{"result in an assistant message is not an answer", compact.RoleAssistant,
			`[{"type":"tool_result","tool_use_id":"a","content":"out"}]`,
			"assistant text:[tool_result]\nout"},
		{"thinking", compact.RoleAssistant,
			`[{"type":"thinking","thinking":"hm","signature":"s"},{"type":"redacted_thinking","data":"d"}]`,
			"assistant thinking:hm thinking:" + RedactedThinking},
		{"tool inputs", compact.RoleAssistant,
			`[{"type":"tool_use","id":"1","name":"a","input":{"k":1}},{"type":"tool_use","id":"2","name":"b","input":null},{"type":"tool_use","id":"3","name":"c","input":[1, 2]},{"type":"tool_use","id":"4","name":"d","input":"s"}]`,
			`assistant toolCall:{"k":1} toolCall:{} toolCall:{"input":[1, 2]} toolCall:{"input":"s"}`},
		{"unmodelled blocks", compact.RoleUser,
			`[{"type":"document","source":{"type":"content","content":[{"type":"text","text":"para"}]},"title":"T","context":"C"},{"type":"container_upload","file_id":"f1"},{"type":"mcp_tool_use","id":"m","name":"lookup","server_name":"s","input":{"q":1}}]`,
			"user text:[document]\nT\npara\nC text:[container_upload] text:[lookup {\"q\":1}]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ms, err := Content(tc.role, json.RawMessage(tc.content))
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, m := range ms {
				line := string(m.Role)
				if m.Role == compact.RoleToolResult {
					line += "(" + m.ToolCallID
					if m.IsError {
						line += ",error"
					}
					line += ")"
				}
				for _, p := range m.Content {
					line += " " + string(p.Type) + ":" + p.Text + p.Thinking
					if p.ToolCall != nil {
						line += string(p.ToolCall.Arguments)
					}
				}
				lines = append(lines, line)
			}
			if got := strings.Join(lines, "\n"); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestContentErrors(t *testing.T) {
	tests := []struct{ content, want string }{
		{`5`, ".content: want a string or an array of blocks, have 5"},
		{`{"type":"text"}`, ".content: want a string or an array of blocks"},
		{`[1]`, ".content[0]: want an object, have 1"},
		{`[{"text":"a"}]`, ".content[0].type: missing"},
		{`[{"type":7}]`, ".content[0].type: want a string, have 7"},
		{`[{"type":"text","text":1}]`, ".content[0].text: want a string, have 1"},
		{`[{"type":"tool_use","name":"x"}]`, ".content[0].id: missing"},
		{`[{"type":"image","source":"u"}]`, `.content[0].source: want an object`},
		{`[{"type":"tool_result","tool_use_id":"a","is_error":"no"}]`, `.content[0].is_error: want true or false, have "no"`},
		{`[{"type":"tool_result","tool_use_id":"a","content":[{"type":"text","text":false}]}]`, ".content[0].content[0].text: want a string, have false"},
	}
	for _, tc := range tests {
		_, err := Content(compact.RoleUser, json.RawMessage(tc.content))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Content(%s) = %v, want %q", tc.content, err, tc.want)
		}
	}
}

// TestPartExtras checks that the members the mapping does not model are
// kept, and the block it does not model kept whole.
func TestPartExtras(t *testing.T) {
	raw := `{"type":"text","text":"a","cache_control":{"type":"ephemeral"},"citations":[]}`
	bs, err := Blocks(json.RawMessage(`[` + raw + `,{"type":"search_result","source":"s","title":"t","content":[]}]`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Part(bs[0])
	if err != nil || string(p.Extra["cache_control"]) != `{"type":"ephemeral"}` || string(p.Extra["citations"]) != `[]` || len(p.Extra) != 2 {
		t.Errorf("text extras %v (%v)", p.Extra, err)
	}
	if typ := UnmodelledType(p); typ != "" {
		t.Errorf("text part taken for an unmodelled %q block", typ)
	}
	p, err = Part(bs[1])
	if err != nil || p.Type != compact.PartText || string(p.Extra[BlockExtra]) != `{"type":"search_result","source":"s","title":"t","content":[]}` {
		t.Errorf("search_result part %+v (%v)", p, err)
	}
	if typ := UnmodelledType(p); typ != "search_result" {
		t.Errorf("UnmodelledType = %q, want search_result", typ)
	}
}

// FuzzContent checks that Content never panics and that an error is one
// line naming where it is.
func FuzzContent(f *testing.F) {
	for _, s := range []string{`"hi"`, `[]`, `[{"type":"text","text":"a"}]`, `[{"type":"image","source":{"type":"base64","data":"x"}}]`,
		`[{"type":"tool_result","tool_use_id":"a","content":[{"type":"document","source":{"type":"text","data":"d"}}]}]`,
		`[{"type":"tool_use","id":"1","input":[1]},{"type":"redacted_thinking","data":"d"},{"type":"web_search_tool_result","content":{"error_code":"x"}}]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, content string) {
		for _, role := range []compact.Role{compact.RoleUser, compact.RoleAssistant} {
			ms, err := Content(role, json.RawMessage(content))
			if err != nil {
				if !strings.HasPrefix(err.Error(), ".content") || strings.Contains(err.Error(), "\n") {
					t.Fatalf("error %q", err)
				}
				continue
			}
			if len(ms) == 0 {
				t.Fatal("no message")
			}
		}
	})
}
