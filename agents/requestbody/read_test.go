package requestbody

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/readertest"
)

func TestReadFiles(t *testing.T) {
	// shapes is the shape DetectShape finds in each file.
	shapes := map[string]Shape{"pi-anthropic.json": ShapeAnthropic, "pi-chat.json": ShapeChat, "opencode-chat.json": ShapeChat,
		"claude-code-shaped.json": ShapeAnthropic, "opencode-shaped.json": ShapeChat}
	readertest.RunSamples(t, ReadFile, Format, []readertest.Sample{
		{
			File: "pi-anthropic.json", Model: "fake-model",
			Roles:   map[compact.Role]int{compact.RoleUser: 1, compact.RoleAssistant: 3, compact.RoleToolResult: 3},
			Customs: map[string]int{"request-body:request": 1, "request-body:system": 1},
			Check: func(t *testing.T, tr *compact.Transcript) {
				last := tr.Entries[len(tr.Entries)-1].Message
				if last.Role != compact.RoleToolResult || last.ToolName != "bash" || last.Text() != "STEP-3\n1\n2\n3\n4\n" {
					t.Errorf("last result = %s %q %q", last.Role, last.ToolName, last.Text())
				}
				if got := string(last.Extra["cache_control"]); got != `{"type":"ephemeral"}` {
					t.Errorf("cache_control of the result not kept: %q", got)
				}
				sys := tr.Entries[1]
				if sys.Metadata().CustomType != "request-body:system" || !strings.Contains(string(sys.Metadata().Data), "operating inside pi") {
					t.Errorf("system entry = %s %.60s", sys.Metadata().CustomType, sys.Metadata().Data)
				}
				var req map[string]json.RawMessage
				if err := json.Unmarshal(tr.Entries[0].Metadata().Data, &req); err != nil {
					t.Fatal(err)
				}
				if _, ok := req["tools"]; !ok || len(req) != 4 {
					t.Errorf("request entry keys: %v", keys(req))
				}
			},
		},
		{
			File: "pi-chat.json", Model: "fake-model",
			Roles:   map[compact.Role]int{compact.RoleUser: 1, compact.RoleAssistant: 3, compact.RoleToolResult: 3},
			Customs: map[string]int{"request-body:request": 1, "request-body:system": 1},
			Check: func(t *testing.T, tr *compact.Transcript) {
				a := tr.Entries[3].Message
				calls := a.ToolCalls()
				if a.Role != compact.RoleAssistant || len(a.Content) != 1 || len(calls) != 1 || a.StopReason != compact.StopToolUse {
					t.Fatalf("first assistant message = %+v", a)
				}
				if calls[0].ID != "call_fake0001" || string(calls[0].Arguments) != `{"command":"echo STEP-1; seq 1 4"}` {
					t.Errorf("call = %s %s", calls[0].ID, calls[0].Arguments)
				}
			},
		},
		{
			File: "opencode-chat.json", Model: "fake-model",
			Roles:   map[compact.Role]int{compact.RoleUser: 1, compact.RoleAssistant: 2, compact.RoleToolResult: 2},
			Customs: map[string]int{"request-body:request": 1, "request-body:system": 1},
			Check: func(t *testing.T, tr *compact.Transcript) {
				var req struct {
					Tools []json.RawMessage `json:"tools"`
				}
				if err := json.Unmarshal(tr.Entries[0].Metadata().Data, &req); err != nil || len(req.Tools) != 10 {
					t.Errorf("request entry holds %d tools (%v)", len(req.Tools), err)
				}
				// opencode sends "" beside tool calls: no empty text part.
				if a := tr.Entries[3].Message; len(a.Content) != 1 || a.Content[0].Type != compact.PartToolCall {
					t.Errorf("assistant content = %+v", a.Content)
				}
			},
		},
		{
			File: "claude-code-shaped.json", Model: "claude-sonnet-4-6", Session: "0b6c3c0e-1111-4222-8333-944445555666",
			// The first prompt's and the last turn's <system-reminder>
			// blocks are harness notes (custom messages).
			Roles:   map[compact.Role]int{compact.RoleUser: 2, compact.RoleAssistant: 4, compact.RoleToolResult: 4, compact.RoleCustom: 2},
			Customs: map[string]int{"request-body:request": 1, "request-body:system": 1},
			Check: func(t *testing.T, tr *compact.Transcript) {
				var redacted, signed int
				for _, e := range tr.Entries {
					if e.Message == nil {
						continue
					}
					for _, p := range e.Message.Content {
						if p.Type != compact.PartThinking {
							continue
						}
						if string(p.Extra["redacted"]) == "true" {
							redacted++
						}
						if len(p.Extra["thinkingSignature"]) > 0 {
							signed++
						}
					}
				}
				if redacted != 1 || signed != 5 {
					t.Errorf("redacted %d, signed %d thinking parts; want 1, 5", redacted, signed)
				}
				// The last user message: two results, then the reminder
				// text, a harness note.
				n := len(tr.Entries)
				if m := tr.Entries[n-1].Message; !compact.IsHarnessNote(m) || m.Text() != "<system-reminder>Tests ran.</system-reminder>" {
					t.Errorf("last entry = %s %q", m.Role, m.Text())
				}
				// The first prompt without its reminder.
				for _, e := range tr.Entries {
					if m := e.Message; m != nil && m.Role == compact.RoleUser {
						if m.Text() != "Find the bug in main.go and fix it" {
							t.Errorf("first prompt = %q", m.Text())
						}
						break
					}
				}
				if m := tr.Entries[n-2].Message; m.Role != compact.RoleToolResult || m.ToolCallID != "toolu_04D" {
					t.Errorf("entry before last = %s %s", m.Role, m.ToolCallID)
				}
				if tr.Model != "claude-sonnet-4-6" {
					t.Errorf("model %q", tr.Model)
				}
			},
		},
		{
			File: "opencode-shaped.json", Model: "qwen3-coder-30b", Warnings: 1,
			Roles:   map[compact.Role]int{compact.RoleUser: 2, compact.RoleAssistant: 3, compact.RoleToolResult: 3},
			Customs: map[string]int{"request-body:request": 1, "request-body:system": 2},
			Check: func(t *testing.T, tr *compact.Transcript) {
				last := tr.Entries[len(tr.Entries)-1].Message
				if len(last.Content) != 2 || last.Content[1].Type != compact.PartImage || last.Content[1].Image.MimeType != "image/png" || last.Content[1].Image.Data != "iVBORw0KGgo=" {
					t.Errorf("image part = %+v", last.Content)
				}
				first := tr.Entries[4].Message
				if first.Content[0].Type != compact.PartThinking || first.Content[0].Thinking != "Use find." {
					t.Errorf("reasoning_content not a thinking part: %+v", first.Content)
				}
				var broken *compact.ToolCall
				for _, e := range tr.Entries {
					if e.Message != nil {
						for _, c := range e.Message.ToolCalls() {
							if c.ID == "call_c3" {
								broken = c
							}
						}
					}
				}
				if broken == nil || string(broken.Arguments) != `{"_raw":"not json"}` {
					t.Errorf("broken arguments = %+v", broken)
				}
				if !strings.Contains(tr.Warnings[0], `"call_c3"`) {
					t.Errorf("warning %q", tr.Warnings[0])
				}
			},
		},
	}, func(t *testing.T, path string, tr *compact.Transcript) {
		if got, want := DetectShape([]byte(readertest.File(t, path))), shapes[filepath.Base(path)]; got != want {
			t.Errorf("shape %q, want %q", got, want)
		}
		for i, e := range tr.Entries {
			if m := e.Message; m != nil && m.Role == compact.RoleAssistant && m.Usage != nil {
				t.Errorf("entry %d: a request carries no usage, got %+v", i, m.Usage)
			}
		}
	})
}

// TestReadCases covers what the captured files do not: results without
// their call, unknown roles and blocks, legacy function calls, images by
// URL.
func TestReadCases(t *testing.T) {
	readertest.RunCases(t, Read, "b.json", []readertest.Case{
		{
			Name:     "chat result without its call",
			Body:     `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"gone","content":"out"}]}`,
			Roles:    map[compact.Role]int{compact.RoleUser: 1, compact.RoleCustom: 1},
			Customs:  map[string]int{"request-body:request": 1},
			Warnings: []string{`b.json:1: messages[1]: tool result for call "gone"`},
			Check: func(t *testing.T, tr *compact.Transcript) {
				m := tr.Entries[2].Message
				if !compact.IsHarnessNote(m) || m.Text() != "[tool result without its call: gone]\nout" || string(m.Extra["tool_call_id"]) != `"gone"` {
					t.Errorf("orphan = %q %v", m.Text(), m.Extra)
				}
			},
		},
		{
			Name:     "anthropic result without its call",
			Body:     "{\"system\":\"be brief\",\n\"messages\":[\n{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"t9\",\"is_error\":true,\"content\":[{\"type\":\"text\",\"text\":\"boom\"}]}]}]}",
			Roles:    map[compact.Role]int{compact.RoleCustom: 1},
			Customs:  map[string]int{"request-body:request": 1, "request-body:system": 1},
			Warnings: []string{`b.json:3: messages[0]: tool result for call "t9"`},
			Check: func(t *testing.T, tr *compact.Transcript) {
				m := tr.Entries[2].Message
				if !compact.IsHarnessNote(m) || m.Text() != "[tool result without its call: t9; it reports an error]\nboom" || string(m.Extra["tool_use_id"]) != `"t9"` || string(m.Extra["is_error"]) != "true" {
					t.Errorf("orphan = %q %v", m.Text(), m.Extra)
				}
			},
		},
		{
			Name:    "unknown role and blocks",
			Body:    `{"model":"claude","max_tokens":9,"messages":[{"role":"critic","content":"x"},{"role":"user","content":[{"type":"document","source":{"type":"text","data":"d"}},{"type":"text","text":"read it"}]},{"role":"assistant","content":[{"type":"server_tool_use","id":"s1","name":"web_search","input":{}},{"type":"tool_use","id":"c1","name":"Read","input":{"path":"a"},"cache_control":{"type":"ephemeral"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":[{"type":"image","source":{"type":"url","url":"https://x/y.png"}}]}]}]}`,
			Roles:   map[compact.Role]int{compact.RoleUser: 1, compact.RoleAssistant: 1, compact.RoleToolResult: 1},
			Customs: map[string]int{"request-body:request": 1, "request-body:critic": 1},
			Unknown: map[string]int{"critic": 1, "document block": 1, "server_tool_use block": 1},
			Check: func(t *testing.T, tr *compact.Transcript) {
				u := tr.Entries[2].Message
				// A block the mapping does not model: its readable text, the
				// block kept as sent (see anthropic.Part).
				if u.Content[0].Text != "[document]\nd" || !strings.Contains(string(u.Content[0].Extra["anthropicBlock"]), `"data":"d"`) {
					t.Errorf("document placeholder = %+v", u.Content[0])
				}
				a := tr.Entries[3].Message
				if string(a.Content[1].Extra["cache_control"]) != `{"type":"ephemeral"}` || a.StopReason != compact.StopToolUse {
					t.Errorf("tool_use extras = %v, stop %s", a.Content[1].Extra, a.StopReason)
				}
				r := tr.Entries[4].Message
				// An image by URL is still an image, its source kept.
				if r.ToolName != "Read" || r.Content[0].Type != compact.PartImage || !strings.Contains(string(r.Content[0].Extra["source"]), "https://x/y.png") {
					t.Errorf("result = %s %+v", r.ToolName, r.Content)
				}
			},
		},
		{
			Name:    "custom tool call",
			Body:    `{"model":"gpt-5","messages":[{"role":"user","content":"patch it"},{"role":"assistant","tool_calls":[{"id":"ct1","type":"custom","custom":{"name":"apply_patch","input":"*** Begin Patch"}}]},{"role":"tool","tool_call_id":"ct1","content":"Done"}]}`,
			Roles:   map[compact.Role]int{compact.RoleUser: 1, compact.RoleAssistant: 1, compact.RoleToolResult: 1},
			Customs: map[string]int{"request-body:request": 1},
			Check: func(t *testing.T, tr *compact.Transcript) {
				p := tr.Entries[2].Message.Content[0]
				if p.ToolCall.Name != "apply_patch" || string(p.ToolCall.Arguments) != `{"input":"*** Begin Patch"}` || string(p.Extra["callType"]) != `"custom"` {
					t.Errorf("custom call = %+v %v", p.ToolCall, p.Extra)
				}
				if r := tr.Entries[3].Message; r.ToolName != "apply_patch" {
					t.Errorf("result names %q", r.ToolName)
				}
			},
		},
		{
			Name:    "legacy function call and developer message",
			Body:    `{"model":"gpt","messages":[{"role":"developer","content":"rules"},{"role":"user","content":"weather?"},{"role":"assistant","content":null,"function_call":{"name":"weather","arguments":"{\"city\":\"Oslo\"}"}},{"role":"function","name":"weather","content":"rain"},{"role":"assistant","content":"It rains.","refusal":null}]}`,
			Roles:   map[compact.Role]int{compact.RoleUser: 1, compact.RoleAssistant: 2, compact.RoleToolResult: 1},
			Customs: map[string]int{"request-body:request": 1, "request-body:system": 1},
			Check: func(t *testing.T, tr *compact.Transcript) {
				c := tr.Entries[3].Message.ToolCalls()
				r := tr.Entries[4].Message
				if len(c) != 1 || c[0].ID != "function_call_1" || r.ToolCallID != "function_call_1" || r.ToolName != "weather" {
					t.Errorf("legacy pairing: calls %+v, result %s %s", c, r.ToolCallID, r.ToolName)
				}
				last := tr.Entries[5].Message
				if last.StopReason != compact.StopEnd || string(last.Extra["refusal"]) != "null" {
					t.Errorf("last = %s %v", last.StopReason, last.Extra)
				}
			},
		},
	})
}

func TestReadErrors(t *testing.T) {
	readertest.RunBad(t, Read, "b.json", []readertest.Bad{
		{Body: `[]`, Err: "b.json:1: not a JSON object"},
		{Body: `{"model":"m"}`, Err: "b.json:1: field messages: missing"},
		{Body: `{"messages":{}}`, Err: "b.json:1: field messages: not an array"},
		{Body: `{"messages":[{"role":"user","content":5}]}`, Err: "b.json:1: messages[0].content: neither a string nor an array"},
		{Body: "{\"messages\":[\n{\"role\":\"user\",\"content\":\"a\"},\n\n{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"c\",\"function\":{\"name\":7}}]}]}", Err: "b.json:4: messages[1].tool_calls[0].function.name: not a string"},
		{Body: `{"messages":[{"content":"a"}]}`, Err: "b.json:1: messages[0].role: missing"},
		{Body: `{"messages":[{"role":"assistant","tool_calls":[{"function":{"name":"x","arguments":"{}"}}]}]}`, Err: "b.json:1: messages[0].tool_calls[0].id: missing"},
		{Body: `{"system":"s","messages":[{"role":"user","content":[{"text":"a"}]}]}`, Err: "b.json:1: messages[0].content[0].type: missing"},
		{Body: `{"system":"s","messages":[{"role":"assistant","content":[{"type":"tool_use","name":"n","input":{}}]}]}`, Err: "b.json:1: messages[0].content[0].id: missing"},
		{Body: `{"system":"s","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","is_error":"yes"}]}]}`, Err: "b.json:1: messages[0].content[0].is_error: want true or false"},
		{Body: "{\"messages\":[\n{\"role\":\"user\"", Err: "b.json:2: truncated JSON"},
		{Body: `{"messages":[]} {}`, Err: "b.json:1: data after the JSON object"},
		{Body: `{"messages":[}`, Err: "b.json:1: invalid JSON"},
	}, nil)
}

func TestDetect(t *testing.T) {
	heads := readertest.FileHeads(t, true, 120, "testdata/*.json")
	heads = append(heads, readertest.Heads(false, ``, `   `, `null`, `[{"role":"user"}]`, `{"type":"session","version":3}`+"\n", `{"trajectory":[],"history":[]}`,
		`{"model":"m","messages":"x"}`, `{"model":"m"}`, `{"model":"m","input":[{"role":"user"}]}`, `{"mod`, `not json`)...)
	heads = append(heads, readertest.Heads(true, `{"messages":[`, `{"model":"m","max_tokens":100,"system":"long sys`, " {\"stream\":true,\"model\":\"m\",\"tools\":[{\"na")...)
	readertest.CheckDetect(t, Detect, heads)
	// A Responses API body (input, not messages) is another format.
	readertest.DetectsNone(t, Detect, []string{"../../../shared/testdata/sessions/pi/before-compaction.jsonl", "../../proxy/testdata/responses_codex.json"},
		"../sweagent/testdata/*.traj", "../openhands/testdata/*.json", "../openhands/testdata/*/*.json")
}

func TestReadFileMissing(t *testing.T) {
	_, err := ReadFile("testdata/none.json")
	if err == nil || !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("err = %v", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

func keys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// FuzzRead checks that Read never panics. The seeds are whole files, so
// run it with -fuzzminimizetime 1x: minimizing a large interesting input
// otherwise takes most of the fuzzing time.
func FuzzRead(f *testing.F) {
	readertest.SeedFiles(f, "testdata/*.json", 0)
	f.Add([]byte(`{"system":[{"type":"text"}],"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"x"}]}]}`))
	readertest.FuzzDetectRead(f, "fuzz.json", Detect, Read)
}

// TestReadPretty reads each body pretty-printed, as bodies saved by hand
// often are: the transcript must be the same, and still import.
func TestReadPretty(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.json")
	for _, f := range files {
		data, _ := os.ReadFile(f)
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, data, "", "  "); err != nil {
			t.Fatal(err)
		}
		flat, err := Read(data, f)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := Read(pretty.Bytes(), f)
		if err != nil {
			t.Fatal(err)
		}
		if len(tr.Entries) != len(flat.Entries) {
			t.Fatalf("%s: %d entries pretty, %d flat", f, len(tr.Entries), len(flat.Entries))
		}
		for i := range tr.Entries {
			if a, b := readertest.EntryFacts(tr.Entries[i]), readertest.EntryFacts(flat.Entries[i]); a != b {
				t.Errorf("%s entry %d differs when pretty-printed:\n%s\n%s", f, i, a, b)
			}
		}
		r := readertest.Roles(tr)
		readertest.RoundTrip(t, tr, readertest.Context(r)+r[compact.RoleCustom])
	}
}

// BenchmarkRead reads the package's largest test file; the benchmark
// reports its throughput.
func BenchmarkRead(b *testing.B) {
	readertest.BenchRead(b, "testdata/claude-code-shaped.json", Read)
}
