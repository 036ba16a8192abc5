package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/agents/claudecode"
	"github.com/compactkit/compact/agents/cline"
	"github.com/compactkit/compact/agents/requestbody"
	"github.com/compactkit/compact/anthropic"
	"github.com/compactkit/compact/proxy"
)

// TestDoorsAnthropic feeds the same Anthropic Messages API conversations
// through the four doors that read them (the proxy's codec, the
// request-body reader, the Claude Code reader, the messages wrapped as
// Claude Code JSONL records, and the Cline reader, the messages as a
// Cline api_conversation_history.json) and checks that all four see the
// same compact messages: the same conversation is then measured and summarized
// the same whichever way it came in. Each case also checks the behaviour
// the one mapping (anthropic.Content) chose for its blocks.
//
// What the doors add of their own is left out of the comparison: message
// extras (the reader's record fields, the body's other members), stop
// reasons (a body has none, a record its own), ids and timestamps.
func TestDoorsAnthropic(t *testing.T) {
	const prompt = `{"role":"user","content":"Fix the failing test."}`
	tests := []struct {
		name     string
		messages []string
		// check looks at the messages all doors agree on.
		check func(t *testing.T, ms []*compact.Message)
	}{
		{
			name: "text",
			messages: []string{prompt,
				`{"role":"assistant","content":[{"type":"text","text":"Looking.","citations":null}]}`,
				`{"role":"user","content":[{"type":"text","text":"Go on.","cache_control":{"type":"ephemeral"}}]}`},
			check: func(t *testing.T, ms []*compact.Message) {
				if len(ms) != 3 || ms[0].Text() != "Fix the failing test." || ms[1].Text() != "Looking." || ms[2].Text() != "Go on." {
					t.Errorf("texts %q", texts(ms))
				}
			},
		},
		{
			name: "thinking with signature",
			messages: []string{prompt,
				`{"role":"assistant","content":[{"type":"thinking","thinking":"The test expects 3.","signature":"c2lnLTE="},{"type":"text","text":"Done."}]}`},
			check: func(t *testing.T, ms []*compact.Message) {
				p := ms[1].Content[0]
				if p.Type != compact.PartThinking || p.Thinking != "The test expects 3." || string(p.Extra["thinkingSignature"]) != `"c2lnLTE="` {
					t.Errorf("thinking part %+v", p)
				}
			},
		},
		{
			name: "redacted_thinking",
			messages: []string{prompt,
				`{"role":"assistant","content":[{"type":"redacted_thinking","data":"RU5DUllQVEVE"},{"type":"text","text":"Done."}]}`},
			check: func(t *testing.T, ms []*compact.Message) {
				p := ms[1].Content[0]
				if p.Type != compact.PartThinking || p.Thinking != anthropic.RedactedThinking ||
					string(p.Extra["redacted"]) != "true" || string(p.Extra["thinkingSignature"]) != `"RU5DUllQVEVE"` {
					t.Errorf("redacted thinking part %+v", p)
				}
			},
		},
		{
			name: "tool_use with an object input",
			messages: []string{prompt,
				`{"role":"assistant","content":[{"type":"text","text":"Reading."},{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"/w/a_test.go"}}]}`,
				`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"package a"}]}`},
			check: func(t *testing.T, ms []*compact.Message) {
				c := ms[1].ToolCalls()
				if len(c) != 1 || c[0].ID != "toolu_1" || string(c[0].Arguments) != `{"file_path":"/w/a_test.go"}` {
					t.Errorf("calls %+v", c)
				}
				if r := ms[2]; r.Role != compact.RoleToolResult || r.ToolCallID != "toolu_1" || r.ToolName != "Read" || r.Text() != "package a" {
					t.Errorf("result %s %s %s %q", r.Role, r.ToolCallID, r.ToolName, r.Text())
				}
			},
		},
		{
			name: "tool_use with a non-object input",
			messages: []string{prompt,
				`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_2","name":"Bash","input":"go test ./..."},{"type":"tool_use","id":"toolu_3","name":"Noop"}]}`,
				`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_2","content":"ok"},{"type":"tool_result","tool_use_id":"toolu_3"}]}`},
			check: func(t *testing.T, ms []*compact.Message) {
				c := ms[1].ToolCalls()
				if len(c) != 2 || string(c[0].Arguments) != `{"input":"go test ./..."}` || string(c[1].Arguments) != `{}` {
					t.Errorf("calls %+v", c)
				}
				if len(ms) != 4 || len(ms[3].Content) != 0 {
					t.Errorf("a result without content has parts: %d messages", len(ms))
				}
			},
		},
		{
			name: "tool_result with text, array, image and is_error",
			messages: []string{prompt,
				`{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"make"}},{"type":"tool_use","id":"t2","name":"Screenshot","input":{}}]}`,
				`{"role":"user","content":[` +
					`{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":[{"type":"text","text":"make: *** [all] Error 1"},{"type":"text","text":"exit 2"}]},` +
					`{"type":"tool_result","tool_use_id":"t2","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]},` +
					`{"type":"text","text":"Why did it fail?"}]}`},
			check: func(t *testing.T, ms []*compact.Message) {
				if len(ms) != 5 {
					t.Fatalf("%d messages, want prompt, call, two results, text", len(ms))
				}
				if r := ms[2]; !r.IsError || len(r.Content) != 2 || r.Content[1].Text != "exit 2" {
					t.Errorf("error result %+v", r)
				}
				if r := ms[3]; len(r.Content) != 1 || r.Content[0].Type != compact.PartImage || r.Content[0].Picture().MimeType != "image/png" {
					t.Errorf("image result %+v", r.Content)
				}
				if ms[4].Role != compact.RoleUser || ms[4].Text() != "Why did it fail?" {
					t.Errorf("text after the results: %s %q", ms[4].Role, ms[4].Text())
				}
			},
		},
		{
			name: "images",
			messages: []string{
				`{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"/9j/4AAQ"}},{"type":"image","source":{"type":"url","url":"https://example.com/shot.png"}},{"type":"text","text":"What is wrong here?"}]}`},
			check: func(t *testing.T, ms []*compact.Message) {
				c := ms[0].Content
				if len(c) != 3 || c[0].Type != compact.PartImage || c[0].Picture().Data != "/9j/4AAQ" ||
					c[1].Type != compact.PartImage || !strings.Contains(string(c[1].Extra["source"]), "shot.png") {
					t.Errorf("image parts %+v", c)
				}
			},
		},
		{
			name: "documents",
			messages: []string{
				`{"role":"user","content":[{"type":"document","title":"notes","source":{"type":"text","media_type":"text/plain","data":"Step one: build."}},{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0x"}},{"type":"text","text":"Summarize."}]}`},
			check: func(t *testing.T, ms []*compact.Message) {
				c := ms[0].Content
				if len(c) != 3 || c[0].Text != "[document]\nnotes\nStep one: build." || c[1].Text != "[document]" || len(c[1].Extra[anthropic.BlockExtra]) == 0 {
					t.Errorf("document parts %q", texts(ms))
				}
			},
		},
		{
			name: "server tool use, its result and a search result",
			messages: []string{prompt,
				`{"role":"assistant","content":[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"go 1.26 release"}},` +
					`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"https://go.dev/doc/go1.26","title":"Go 1.26 Release Notes","encrypted_content":"RU5D","page_age":null}]},` +
					`{"type":"text","text":"Go 1.26 is out.","citations":[{"type":"web_search_result_location","url":"https://go.dev/doc/go1.26","title":"Go 1.26 Release Notes","encrypted_index":"RU5D","cited_text":"Go 1.26 is out"}]},` +
					`{"type":"tool_use","id":"toolu_9","name":"Search","input":{"q":"x"}}]}`,
				`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_9","content":[{"type":"search_result","source":"https://wiki/x","title":"X","content":[{"type":"text","text":"X is a letter."}]}]}]}`},
			check: func(t *testing.T, ms []*compact.Message) {
				c := ms[1].Content
				if len(c) != 4 || c[0].Text != `[web_search {"query":"go 1.26 release"}]` ||
					c[1].Text != "[web_search_tool_result]\nGo 1.26 Release Notes\nhttps://go.dev/doc/go1.26" || len(c[2].Extra["citations"]) == 0 {
					t.Errorf("assistant parts %q", texts(ms[1:2]))
				}
				if r := ms[2]; r.Content[0].Text != "[search_result]\nX\nhttps://wiki/x\nX is a letter." {
					t.Errorf("search result %q", r.Content[0].Text)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := []byte(`{"model":"claude-test","max_tokens":1024,"system":"You are an agent.","messages":[` + strings.Join(tc.messages, ",") + `]}`)
			fromProxy, err := proxy.Messages(proxy.Anthropic, body)
			if err != nil {
				t.Fatal(err)
			}
			rb, err := requestbody.Read(body, "body.json")
			if err != nil {
				t.Fatal(err)
			}
			cc, err := claudecode.Read(claudeCodeJSONL(t, tc.messages), "session.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			cl, err := cline.Read([]byte("["+strings.Join(tc.messages, ",")+"]"), "api_conversation_history.json")
			if err != nil {
				t.Fatal(err)
			}
			if len(rb.Warnings)+len(cc.Warnings)+len(cl.Warnings) > 0 {
				t.Errorf("warnings: %q %q %q", rb.Warnings, cc.Warnings, cl.Warnings)
			}
			want := facts(fromProxy)
			for _, door := range []struct {
				name string
				ms   []*compact.Message
			}{{"request-body", messagesOf(rb)}, {"claude-code", messagesOf(cc)}, {"cline", messagesOf(cl)}} {
				if got := facts(door.ms); got != want {
					t.Errorf("%s reads differently from the proxy:\n%s\nproxy:\n%s", door.name, got, want)
				}
			}
			tc.check(t, fromProxy)
		})
	}
}

// claudeCodeJSONL wraps API messages as the records of a Claude Code
// transcript, each assistant message one response.
func claudeCodeJSONL(t *testing.T, messages []string) []byte {
	t.Helper()
	var b strings.Builder
	parent := "null"
	for i, raw := range messages {
		var m struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatal(err)
		}
		uuid := fmt.Sprintf(`"u-%d"`, i)
		msg := `{"role":"user","content":` + string(m.Content) + `}`
		if m.Role == "assistant" {
			msg = fmt.Sprintf(`{"id":"msg_%d","type":"message","role":"assistant","model":"claude-test","content":%s,"stop_reason":null}`, i, m.Content)
		}
		fmt.Fprintf(&b, `{"type":%q,"uuid":%s,"parentUuid":%s,"isSidechain":false,"sessionId":"s1","cwd":"/w","timestamp":"2026-01-02T03:04:05.000Z","message":%s}`+"\n",
			m.Role, uuid, parent, msg)
		parent = uuid
	}
	return []byte(b.String())
}

// messagesOf returns a transcript's messages in order.
func messagesOf(tr *compact.Transcript) []*compact.Message {
	var out []*compact.Message
	for _, e := range tr.Entries {
		if e.Kind == compact.KindMessage && e.Message != nil {
			out = append(out, e.Message)
		}
	}
	return out
}

// facts renders what a door's messages give the engine to measure and
// summarize, one line per message and part.
func facts(ms []*compact.Message) string {
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, "%s call=%q tool=%q error=%v\n", m.Role, m.ToolCallID, m.ToolName, m.IsError)
		for _, p := range m.Content {
			fmt.Fprintf(&b, "  %s text=%q thinking=%q", p.Type, p.Text, p.Thinking)
			if c := p.ToolCall; c != nil {
				fmt.Fprintf(&b, " call=%s/%s %s", c.ID, c.Name, c.Arguments)
			}
			if p.Image != nil {
				fmt.Fprintf(&b, " image=%s %q", p.Image.MimeType, p.Image.Data)
			}
			keys := make([]string, 0, len(p.Extra))
			for k := range p.Extra {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				fmt.Fprintf(&b, " %s=%s", k, p.Extra[k])
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// texts lists the text of each message, for failure messages.
func texts(ms []*compact.Message) []string {
	var out []string
	for _, m := range ms {
		for _, p := range m.Content {
			out = append(out, p.Text+p.Thinking)
		}
	}
	return out
}
