package codex

import (
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/readertest"
)

// Small hand-written rollouts for what the samples lack; their lines
// have the shapes of codex-rs/protocol's types.

func line(typ, payload string) string {
	return `{"timestamp":"2025-11-03T09:00:00.000Z","type":"` + typ + `","payload":` + payload + `}`
}

func rollout(ls ...string) []byte { return []byte(strings.Join(ls, "\n") + "\n") }

const meta = `{"id":"s1","timestamp":"2025-11-03T09:00:00.000Z","cwd":"/w","originator":"codex_cli_rs","cli_version":"0.60.0","model_provider":"azure"}`

func TestItemMapping(t *testing.T) {
	data := rollout(
		line("session_meta", meta),
		line("turn_context", `{"cwd":"/w","model":"gpt-5"}`),
		line("response_item", `{"type":"message","role":"user","content":[{"type":"input_text","text":"see"},{"type":"input_image","image_url":"data:image/png;base64,iVBORw0K"}]}`),
		line("response_item", `{"type":"function_call","name":"view","arguments":"not json","call_id":"c1"}`),
		line("response_item", `{"type":"function_call_output","call_id":"c1","output":[{"type":"input_text","text":"pic"},{"type":"input_image","image_url":"data:image/jpeg;base64,/9j/"}]}`),
		line("response_item", `{"type":"function_call","name":"mcp__x","arguments":"{\"q\":1}","call_id":"c2"}`),
		line("response_item", `{"type":"function_call_output","call_id":"c2","output":{"content":"denied","success":false}}`),
		line("response_item", `{"type":"function_call_output","call_id":"nope","output":"stray"}`),
		line("response_item", `{"type":"tool_search_call","call_id":"ts1","execution":"client","arguments":{"query":"calendar"}}`),
		line("response_item", `{"type":"tool_search_output","call_id":"ts1","status":"completed","execution":"client","tools":[{"name":"cal"}]}`),
		line("response_item", `{"type":"frobnicate","id":"t1"}`),
		line("mystery", `{"a":1}`),
		line("response_item", `{"type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"think"}],"encrypted_content":null}`),
		line("response_item", `{"type":"message","role":"assistant","content":[{"type":"output_text","text":"half"}]}`),
		line("event_msg", `{"type":"turn_aborted","reason":"interrupted"}`),
	)
	tr, err := Read(data, "items.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Provider != "azure" || tr.Model != "gpt-5" {
		t.Errorf("provider %q model %q", tr.Provider, tr.Model)
	}
	if tr.Unknown["mystery"] != 1 || tr.Unknown["response_item.frobnicate"] != 1 || len(tr.Unknown) != 2 {
		t.Errorf("unknown %v", tr.Unknown)
	}
	readertest.CheckKinds(t, tr, "codex:session_meta codex:turn_context user assistant toolResult assistant toolResult custom assistant toolResult codex:response_item.frobnicate codex:mystery assistant codex:event_msg")
	img := tr.Entries[2].Message.Content[1]
	if img.Type != compact.PartImage || img.Image.MimeType != "image/png" || img.Image.Data != "iVBORw0K" {
		t.Errorf("user image %+v", img)
	}
	// A call after an output starts a new response.
	calls := append(tr.Entries[3].Message.ToolCalls(), tr.Entries[5].Message.ToolCalls()...)
	if len(calls) != 2 || string(calls[0].Arguments) != `{"_raw":"not json"}` || string(calls[1].Arguments) != `{"q":1}` {
		t.Errorf("calls %+v", calls)
	}
	if string(tr.Entries[3].Message.Content[0].Extra["codex.arguments"]) != `"not json"` {
		t.Errorf("arguments string not kept: %v", tr.Entries[3].Message.Content[0].Extra)
	}
	res := tr.Entries[4].Message
	if res.ToolName != "view" || len(res.Content) != 2 || res.Content[1].Image.MimeType != "image/jpeg" || res.IsError {
		t.Errorf("image result %+v", res)
	}
	if denied := tr.Entries[6].Message; !denied.IsError || denied.Text() != "denied" || denied.ToolName != "mcp__x" {
		t.Errorf("failed result %+v", denied)
	}
	if stray := tr.Entries[7].Message; stray.Text() != "[tool result without its call: nope]\nstray" || !compact.IsHarnessNote(stray) || len(tr.Warnings) != 1 || !strings.HasPrefix(tr.Warnings[0], `items.jsonl:8: function_call_output "nope" has no call`) {
		t.Errorf("stray output %q, warnings %q", stray.Text(), tr.Warnings)
	}
	search := tr.Entries[8].Message.ToolCalls()
	if len(search) != 1 || search[0].Name != "tool_search" || string(search[0].Arguments) != `{"query":"calendar"}` ||
		tr.Entries[9].Message.ToolName != "tool_search" || tr.Entries[9].Message.Text() != `[{"name":"cal"}]` {
		t.Errorf("tool search %+v, output %q", search, tr.Entries[9].Message.Text())
	}
	if last := tr.Entries[12].Message; last.StopReason != compact.StopAborted || last.Text() != "half" || last.Content[0].Thinking != "think" {
		t.Errorf("aborted answer: %s %q", last.StopReason, last.Text())
	}
	if tr.Entries[3].Message.StopReason != compact.StopToolUse {
		t.Errorf("calls stop %s", tr.Entries[3].Message.StopReason)
	}
	readertest.Import(t, tr, "items")
}

func TestEarlyRollout(t *testing.T) {
	// The layout before the envelope: a bare meta object, bare items and
	// state lines.
	data := rollout(
		`{"id":"old-1","timestamp":"2025-05-07T17:24:21.123Z","instructions":null,"git":{"branch":"main"}}`,
		`{"record_type":"state"}`,
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"list files"}]}`,
		`{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"enc"}`,
		`{"type":"function_call","id":"fc_1","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"call_1"}`,
		`{"type":"function_call_output","call_id":"call_1","output":{"content":"a.go\n","success":true}}`,
		`{"record_type":"state"}`,
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a.go"}]}`,
	)
	if !Detect(data) {
		t.Error("Detect is false for an early rollout")
	}
	tr, err := Read(data, "old.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if tr.SessionID != "old-1" || tr.Timestamp != "2025-05-07T17:24:21.123Z" || len(tr.Unknown) != 0 {
		t.Errorf("session %q timestamp %q unknown %v", tr.SessionID, tr.Timestamp, tr.Unknown)
	}
	roles := map[compact.Role]int{}
	for _, e := range tr.Entries {
		if e.Message != nil {
			roles[e.Message.Role]++
		}
	}
	if roles[compact.RoleUser] != 1 || roles[compact.RoleAssistant] != 2 || roles[compact.RoleToolResult] != 1 {
		t.Errorf("roles %v", roles)
	}
	call := tr.Entries[3].Message.Content[1]
	if string(call.Extra["itemId"]) != `"fc_1"` || call.ToolCall.ID != "call_1" {
		t.Errorf("call %+v", call)
	}
	if res := tr.Entries[4].Message; res.Text() != "a.go\n" || res.IsError {
		t.Errorf("output %+v", res)
	}
}

func TestBadInput(t *testing.T) {
	good := line("session_meta", meta)
	readertest.RunBad(t, Read, "bad.jsonl", []readertest.Bad{
		{Name: "cut last line", Body: good + "\n" + `{"timestamp":"t","type":"respo`, Warnings: []string{"bad.jsonl:2: the last line is cut short"}},
		{Name: "bad middle line", Body: good + "\n{oops\n" + good + "\n", Err: "bad.jsonl:2: not a JSON object"},
		{Name: "payload not an object", Body: line("response_item", `[1]`) + "\n", Err: "bad.jsonl:1: field payload: want an object"},
		{Name: "payload type a number", Body: line("response_item", `{"type":3}`) + "\n", Err: "bad.jsonl:1: field payload.type: want a string"},
		{Name: "call without id", Body: line("response_item", `{"type":"function_call","name":"x","arguments":"{}"}`) + "\n", Err: "bad.jsonl:1: field payload.call_id: missing"},
		{Name: "arguments not a string", Body: line("response_item", `{"type":"function_call","name":"x","arguments":{},"call_id":"c"}`) + "\n", Err: "bad.jsonl:1: field payload.arguments: want a string"},
		{Name: "tokens not a number", Body: line("event_msg", `{"type":"token_count","info":{"last_token_usage":{"input_tokens":"9"}}}`) + "\n", Err: "bad.jsonl:1: field payload.info.last_token_usage.input_tokens: want an integer"},
		{Name: "window not a number", Body: line("event_msg", `{"type":"token_count","info":{"model_context_window":"big"}}`) + "\n", Err: "bad.jsonl:1: field payload.info.model_context_window: want an integer"},
		{Name: "started window not a number", Body: line("event_msg", `{"type":"task_started","model_context_window":[1]}`) + "\n", Err: "bad.jsonl:1: field payload.model_context_window: want an integer"},
		{Name: "content not a list", Body: line("response_item", `{"type":"message","role":"user","content":7}`) + "\n", Err: "bad.jsonl:1: field payload.content: want an array"},
		{Name: "output a number", Body: line("response_item", `{"type":"function_call_output","call_id":"c","output":5}`) + "\n", Err: "bad.jsonl:1: field payload.output: want a string, an array or an object"},
		{Name: "crlf, bom, blank lines", Body: "\xef\xbb\xbf" + good + "\r\n\r\n\n"},
	}, func(t *testing.T, tr *compact.Transcript) {
		if len(tr.Entries) != 1 || tr.SessionID != "s1" {
			t.Errorf("%d entries, session %q", len(tr.Entries), tr.SessionID)
		}
	})
}

func TestExtraNamesKeptApart(t *testing.T) {
	// Item members whose names the session reader would take for its own
	// fields (it ignores case) are renamed, not lost.
	data := rollout(line("response_item", `{"type":"message","role":"user","Content":"x","content":[{"type":"input_text","text":"hi","Text":"z"}]}`))
	tr, err := Read(data, "x.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	readertest.CheckExtrasKeptApart(t, tr, tr.Entries[0].Message, "codex", "hi",
		map[string]string{"Content": `"x"`}, map[string]string{"Text": `"z"`})
}

func TestThreadRollback(t *testing.T) {
	user := func(text string) string {
		return line("response_item", `{"type":"message","role":"user","content":[{"type":"input_text","text":"`+text+`"}]}`)
	}
	answer := func(text string) string {
		return line("response_item", `{"type":"message","role":"assistant","content":[{"type":"output_text","text":"`+text+`"}]}`)
	}
	data := rollout(
		line("session_meta", meta),
		user("<environment_context>\\n</environment_context>"),
		user("one"), answer("A1"),
		user("two"), answer("A2"),
		user("three"), answer("A3"),
		line("event_msg", `{"type":"thread_rolled_back","num_turns":2}`),
		user("four"), answer("A4"),
	)
	tr, err := Read(data, "rb.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	s := readertest.Import(t, tr, "rb")
	var got []string
	for _, m := range s.Context().Messages {
		got = append(got, m.Text())
	}
	if strings.Join(got, "|") != "<environment_context>\n</environment_context>|one|A1|four|A4" {
		t.Errorf("context after rolling back two turns: %q", got)
	}
	// The dropped turns stay in the file, off the path.
	if len(s.Entries()) != len(tr.Entries) || len(s.Path()) != len(tr.Entries)-4 {
		t.Errorf("%d entries, path %d, transcript %d", len(s.Entries()), len(s.Path()), len(tr.Entries))
	}
}

// TestRecordedWindow: the transcript's ContextWindow is the window Codex
// recorded last, from task_started or token_count events; none recorded
// (or a nonsense one) leaves it 0.
func TestRecordedWindow(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		want int
	}{
		{"none", rollout(line("session_meta", meta)), 0},
		{"task started", rollout(line("event_msg", `{"type":"task_started","turn_id":"t","model_context_window":258400}`)), 258400},
		{"token count", rollout(line("event_msg", `{"type":"token_count","info":{"total_token_usage":{},"last_token_usage":{"input_tokens":5},"model_context_window":272000}}`)), 272000},
		{"latest wins", rollout(
			line("event_msg", `{"type":"task_started","model_context_window":272000}`),
			line("event_msg", `{"type":"token_count","info":{"model_context_window":258400}}`),
			line("event_msg", `{"type":"token_count","info":null,"rate_limits":{}}`)), 258400},
		{"zero or negative ignored", rollout(
			line("event_msg", `{"type":"task_started","model_context_window":128000}`),
			line("event_msg", `{"type":"task_started","model_context_window":0}`),
			line("event_msg", `{"type":"task_started","model_context_window":-5}`)), 128000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := Read(tc.data, "w.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			if tr.ContextWindow != tc.want {
				t.Errorf("ContextWindow %d, want %d", tr.ContextWindow, tc.want)
			}
		})
	}
	for file, want := range map[string]int{"exec-0.135.jsonl": 258400, "pomodoro.jsonl": 272000, "compaction-constructed.jsonl": 272000} {
		if tr := readertest.ReadTestdata(t, ReadFile, file); tr.ContextWindow != want {
			t.Errorf("%s: ContextWindow %d, want %d", file, tr.ContextWindow, want)
		}
	}
}
