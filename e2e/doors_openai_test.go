package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/agents/codex"
	"github.com/compactkit/compact/agents/requestbody"
	"github.com/compactkit/compact/proxy"
)

// The OpenAI wire formats come in through three doors: the proxy reads
// request bodies to measure and summarize them, the request body reader
// (agents/requestbody) imports a captured Chat Completions body, and the
// Codex reader (agents/codex) imports a rollout, whose response_item
// lines are Responses input items. All three map with package openai, so
// the same conversation must give the same messages through each.
//
// Each row below is one conversation; want is what every door must make
// of it (see renderOpenAITurns). Before the doors shared the mapping they
// disagreed on most rows: the proxy dropped Chat images' types, legacy
// function calls, custom tools' names, refusals and Responses images,
// passed broken arguments as a bare string and named no Responses
// result; the Codex reader wrapped broken arguments as {"input": ...};
// the request body reader dropped a message-level refusal.

// openaiChatDoors are the Chat Completions rows.
var openaiChatDoors = []struct{ name, body, want string }{
	{"text", `{"model":"m","messages":[
		{"role":"system","content":"sys"},
		{"role":"user","content":"hi"},
		{"role":"assistant","content":"hello"},
		{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},
		{"role":"assistant","content":[{"type":"text","text":"x"},{"type":"text","text":"y"}]}]}`, `
user text "hi"
assistant text "hello"
user text "a" text "b"
assistant text "x" text "y"`},
	{"tool calls and their arguments", `{"model":"m","messages":[
		{"role":"user","content":"go"},
		{"role":"assistant","content":"","tool_calls":[
			{"id":"c1","type":"function","function":{"name":"bash","arguments":"{\"cmd\": \"ls\"}"}},
			{"id":"c2","type":"function","function":{"name":"bash","arguments":"ls -la"}},
			{"id":"c3","type":"function","function":{"name":"f","arguments":"[1,2]"}},
			{"id":"c4","type":"function","function":{"name":"g","arguments":""}}]},
		{"role":"tool","tool_call_id":"c1","content":"out1"},
		{"role":"tool","tool_call_id":"c2","name":"bash","content":[{"type":"text","text":"o2a"},{"type":"text","text":"o2b"}]},
		{"role":"tool","tool_call_id":"c3","content":null},
		{"role":"tool","tool_call_id":"c4","content":""}]}`, `
user text "go"
assistant call c1 bash {"cmd":"ls"} call c2 bash {"_raw":"ls -la"} call c3 f {"_raw":"[1,2]"} call c4 g {}
toolResult [c1 bash] text "out1"
toolResult [c2 bash] text "o2a" text "o2b"
toolResult [c3 f]
toolResult [c4 g] text ""`},
	{"arguments sent as an object", `{"model":"m","messages":[
		{"role":"user","content":"go"},
		{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":{"cmd":"ls"}}}]},
		{"role":"tool","tool_call_id":"c1","content":"ok"}]}`, `
user text "go"
assistant call c1 bash {"cmd":"ls"}
toolResult [c1 bash] text "ok"`},
	{"reasoning", `{"model":"m","messages":[
		{"role":"user","content":"q"},
		{"role":"assistant","reasoning_content":"think1","content":"a1"},
		{"role":"user","content":"q2"},
		{"role":"assistant","reasoning":"think2","content":"a2"}]}`, `
user text "q"
assistant thinking "think1" text "a1"
user text "q2"
assistant thinking "think2" text "a2"`},
	{"images", `{"model":"m","messages":[
		{"role":"user","content":[{"type":"text","text":"see"},
			{"type":"image_url","image_url":{"url":"https://x/y.png","detail":"low"}},
			{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]}]}`, `
user text "see" image (not inline) image image/png AAAA`},
	{"refusal", `{"model":"m","messages":[
		{"role":"user","content":"bad"},
		{"role":"assistant","content":[{"type":"refusal","refusal":"I can't"}]},
		{"role":"user","content":"bad2"},
		{"role":"assistant","content":null,"refusal":"No."}]}`, `
user text "bad"
assistant text "I can't"
user text "bad2"
assistant text "No."`},
	{"custom tool", `{"model":"m","messages":[
		{"role":"user","content":"patch"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"k1","type":"custom","custom":{"name":"apply_patch","input":"*** Begin"}}]},
		{"role":"tool","tool_call_id":"k1","content":"done"}]}`, `
user text "patch"
assistant call k1 apply_patch {"input":"*** Begin"}
toolResult [k1 apply_patch] text "done"`},
	{"legacy function call", `{"model":"m","messages":[
		{"role":"user","content":"w"},
		{"role":"assistant","content":null,"function_call":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}},
		{"role":"function","name":"weather","content":"sunny"}]}`, `
user text "w"
assistant call function_call_1 weather {"city":"Paris"}
toolResult [function_call_1 weather] text "sunny"`},
	{"audio and files", `{"model":"m","messages":[
		{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"AAA","format":"wav"}},{"type":"file","file":{"file_id":"f1"}}]}]}`, `
user text "[input_audio]" text "[file]"`},
}

// openaiResponsesDoors are the Responses rows; the Codex door reads each
// input item as the payload of a response_item line.
var openaiResponsesDoors = []struct{ name, body, want string }{
	{"text", `{"model":"m","input":[
		{"type":"message","role":"developer","content":[{"type":"input_text","text":"dev"}]},
		{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"},{"type":"input_text","text":"there"}]},
		{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hello"}]},
		{"role":"user","content":"plain"}]}`, `
user text "hi" text "there"
assistant text "hello"
user text "plain"`},
	{"reasoning: summary, encrypted, readable", `{"model":"m","input":[
		{"type":"message","role":"user","content":[{"type":"input_text","text":"q"}]},
		{"type":"reasoning","id":"r1","summary":[{"type":"summary_text","text":"s1"},{"type":"summary_text","text":"s2"}],"encrypted_content":"gAAAA"},
		{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a"}]},
		{"type":"message","role":"user","content":[{"type":"input_text","text":"q2"}]},
		{"type":"reasoning","id":"r2","summary":[],"encrypted_content":"gAAAB"},
		{"type":"message","role":"assistant","content":[{"type":"output_text","text":"b"}]},
		{"type":"message","role":"user","content":[{"type":"input_text","text":"q3"}]},
		{"type":"reasoning","id":"r3","summary":[],"content":[{"type":"reasoning_text","text":"raw thoughts"}]},
		{"type":"message","role":"assistant","content":[{"type":"output_text","text":"c"}]}]}`, `
user text "q"
assistant thinking "s1\n\ns2" text "a"
user text "q2"
assistant thinking "" text "b"
user text "q3"
assistant thinking "raw thoughts" text "c"`},
	{"function calls and their arguments", `{"model":"m","input":[
		{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]},
		{"type":"function_call","call_id":"c1","name":"bash","arguments":"{\"cmd\":\"ls\"}"},
		{"type":"function_call","call_id":"c2","name":"bash","arguments":"ls -la"},
		{"type":"function_call","call_id":"c3","name":"f","arguments":"[1]"},
		{"type":"function_call","call_id":"c4","name":"g","arguments":""},
		{"type":"function_call_output","call_id":"c1","output":"out1"},
		{"type":"function_call_output","call_id":"c2","output":[{"type":"input_text","text":"o2"},{"type":"input_image","image_url":"data:image/png;base64,BBBB"}]},
		{"type":"function_call_output","call_id":"c3","output":"o3"},
		{"type":"function_call_output","call_id":"c4","output":"o4"}]}`, `
user text "go"
assistant call c1 bash {"cmd":"ls"} call c2 bash {"_raw":"ls -la"} call c3 f {"_raw":"[1]"} call c4 g {}
toolResult [c1 bash] text "out1"
toolResult [c2 bash] text "o2" image image/png BBBB
toolResult [c3 f] text "o3"
toolResult [c4 g] text "o4"`},
	{"custom tool", `{"model":"m","input":[
		{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]},
		{"type":"custom_tool_call","call_id":"k1","name":"apply_patch","input":"*** Begin"},
		{"type":"custom_tool_call_output","call_id":"k1","output":"done"}]}`, `
user text "go"
assistant call k1 apply_patch {"input":"*** Begin"}
toolResult [k1 apply_patch] text "done"`},
	{"local shell", `{"model":"m","input":[
		{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]},
		{"type":"local_shell_call","id":"ls1","call_id":"s1","status":"completed","action":{"type":"exec","command":["ls"]}},
		{"type":"local_shell_call_output","call_id":"s1","output":"files"}]}`, `
user text "go"
assistant call s1 local_shell {"type":"exec","command":["ls"]}
toolResult [s1 local_shell] text "files"`},
	{"web search run by the provider", `{"model":"m","input":[
		{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]},
		{"type":"web_search_call","id":"ws1","status":"completed","action":{"type":"search","query":"go"}},
		{"type":"message","role":"assistant","content":[{"type":"output_text","text":"found"}]}]}`, `
user text "go"
assistant text "{\"type\":\"web_search_call\",\"id\":\"ws1\",\"status\":\"completed\",\"action\":{\"type\":\"search\",\"query\":\"go\"}}" text "found"`},
	{"images", `{"model":"m","input":[
		{"type":"message","role":"user","content":[{"type":"input_text","text":"see"},
			{"type":"input_image","image_url":"https://x/y.png","detail":"auto"},
			{"type":"input_image","image_url":"data:image/png;base64,AAAA"}]}]}`, `
user text "see" image (not inline) image image/png AAAA`},
	{"refusal", `{"model":"m","input":[
		{"type":"message","role":"user","content":[{"type":"input_text","text":"bad"}]},
		{"type":"message","role":"assistant","content":[{"type":"refusal","refusal":"I can't"}]}]}`, `
user text "bad"
assistant text "I can't"`},
}

func TestDoorsOpenAI(t *testing.T) {
	type row = struct{ name, body, want string }
	for _, api := range []struct {
		api  proxy.API
		rows []row
		// reader is the door that imports a file of the format.
		reader func(t *testing.T, body []byte) (string, *compact.Transcript, error)
	}{
		{proxy.Chat, openaiChatDoors, func(_ *testing.T, body []byte) (string, *compact.Transcript, error) {
			tr, err := requestbody.Read(body, "body.json")
			return "request body reader", tr, err
		}},
		{proxy.Responses, openaiResponsesDoors, func(t *testing.T, body []byte) (string, *compact.Transcript, error) {
			tr, err := codex.Read(codexRollout(t, body), "rollout.jsonl")
			return "codex reader", tr, err
		}},
	} {
		for _, tc := range api.rows {
			t.Run(string(api.api)+"/"+tc.name, func(t *testing.T) {
				body := []byte(tc.body)
				want := strings.TrimPrefix(tc.want, "\n") + "\n"
				px, err := proxy.Messages(api.api, body)
				if err != nil {
					t.Fatalf("proxy: %v", err)
				}
				reader, tr, err := api.reader(t, body)
				if err != nil {
					t.Fatalf("%s: %v", reader, err)
				}
				for door, msgs := range map[string][]*compact.Message{"proxy": px, reader: openaiTurns(tr)} {
					if got := renderOpenAITurns(msgs); got != want {
						t.Errorf("%s door:\n%swant\n%s", door, got, want)
					}
				}
			})
		}
	}
}

// codexRollout wraps the input items of a Responses body as the
// response_item lines of a Codex rollout, after its session_meta line.
func codexRollout(t *testing.T, body []byte) []byte {
	t.Helper()
	var req struct {
		Input []json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	b.WriteString(`{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"s1","cwd":"/w"}}` + "\n")
	for _, it := range req.Input {
		var c bytes.Buffer
		if err := json.Compact(&c, it); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, `{"timestamp":"2026-01-01T00:00:01Z","type":"response_item","payload":%s}`+"\n", c.Bytes())
	}
	return b.Bytes()
}

// openaiTurns returns the messages of a transcript that are turns of the
// conversation: not harness notes (a Codex developer message, which the
// proxy keeps out of its units as the list's head) and not custom entries
// (a Chat system message).
func openaiTurns(t *compact.Transcript) []*compact.Message {
	var out []*compact.Message
	for _, e := range t.Entries {
		if e.Kind == compact.KindMessage && !compact.IsHarnessNote(e.Message) {
			out = append(out, e.Message)
		}
	}
	return out
}

// renderOpenAITurns writes one line per message with what the wire mapping
// decides: role, tool call id and tool name, error flag, and each part
// (text, thinking, call with its arguments compacted, image). It leaves
// out what a door adds from outside the messages (timestamps, usage, stop
// reasons, model) and Extra, which keeps unmodelled members for a
// reader's round trip and is neither measured nor summarized.
func renderOpenAITurns(msgs []*compact.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(string(m.Role))
		if m.ToolCallID != "" || m.ToolName != "" {
			fmt.Fprintf(&b, " [%s %s]", m.ToolCallID, m.ToolName)
		}
		if m.IsError {
			b.WriteString(" error")
		}
		for _, p := range m.Content {
			switch p.Type {
			case compact.PartText:
				b.WriteString(" text " + strconv.Quote(p.Text))
			case compact.PartThinking:
				b.WriteString(" thinking " + strconv.Quote(p.Thinking))
			case compact.PartToolCall:
				var args bytes.Buffer
				if err := json.Compact(&args, p.ToolCall.Arguments); err != nil {
					args.Reset()
					args.WriteString("(not JSON: " + string(p.ToolCall.Arguments) + ")")
				}
				fmt.Fprintf(&b, " call %s %s %s", p.ToolCall.ID, p.ToolCall.Name, args.String())
			case compact.PartImage:
				if p.Image == nil {
					b.WriteString(" image (not inline)")
				} else {
					fmt.Fprintf(&b, " image %s %s", p.Image.MimeType, p.Image.Data)
				}
			default:
				fmt.Fprintf(&b, " %s", p.Type)
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}
