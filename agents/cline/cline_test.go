package cline

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/anthropic"
	"github.com/compactkit/compact/internal/testing/readertest"
)

func TestReadTasks(t *testing.T) {
	tests := []struct {
		dir                            string
		user, assistant, results       int
		notes                          int // harness notes (environment details, reminders)
		compactions                    int
		contextMessages                int
		usageID                        string
		usage                          compact.Usage
		model, cwd                     string
		unknown                        map[string]int
		stops                          map[string]compact.StopReason
		firstKept                      string
		summaryHas                     string
		tokensBefore, tokensAfter      int
		customs                        int
		sessionID                      string
		resultText, resultTool, callID string
		// noUsage names an assistant message whose request recorded no
		// usage; usageID "" means no message has usage.
		noUsage string
		// warnings are substrings of the expected warnings, one each.
		warnings []string
	}{
		{
			dir: "xml-task", user: 2, notes: 11, assistant: 10, results: 8, compactions: 1,
			// summary + m6..m8.1 (5 messages kept before it) + the 17 after it, the resumption split in its note and the user's words
			contextMessages: 1 + 5 + 17,
			usageID:         "m3", usage: compact.Usage{Input: 4, Output: 180, CacheWrite: 420, CacheRead: 11820},
			cwd:       "/home/dev/sum",
			stops:     map[string]compact.StopReason{"m1": compact.StopToolUse, "m15": compact.StopAborted, "m19": compact.StopToolUse}, // m19: attempt_completion
			firstKept: "m6", summaryHas: "The sum function in main.go returns the wrong result", tokensBefore: 13364,
			sessionID:  "xml-task",
			resultText: "Command executed.\nOutput:\nok  \tsum\t0.002s", resultTool: "execute_command", callID: "m10",
		},
		{
			dir: "native-task", user: 2, notes: 6, assistant: 6, results: 5, compactions: 1,
			// the range ends right before the compaction: summary + the 6 messages after it
			contextMessages: 1 + 6,
			usageID:         "m3", usage: compact.Usage{Input: 440, Output: 180, CacheRead: 14200},
			model: "claude-sonnet-4-5-20250929", cwd: "/Users/ana/todo-api",
			stops:     map[string]compact.StopReason{"m7": compact.StopToolUse, "m11": compact.StopAborted},
			firstKept: "m7", summaryHas: "8. Required Files:", tokensBefore: 161422,
			sessionID:  "native-task",
			resultText: "[read_file for 'src/routes.ts'] Result:\nimport", resultTool: "read_file", callID: "m2",
		},
		{
			dir: "roo-task", user: 1, notes: 6, assistant: 6, results: 5, compactions: 2,
			// the latest compaction (the fresh-start summary) keeps nothing before it
			contextMessages: 1 + 4,
			usageID:         "m4", usage: compact.Usage{Input: 310, Output: 60, CacheRead: 9700},
			cwd:       "/home/lu/notes",
			unknown:   map[string]int{"block:thoughtSignature": 1},
			stops:     map[string]compact.StopReason{"m11": compact.StopToolUse, "m13": compact.StopEnd},
			firstKept: "m11", summaryHas: "## Conversation Summary", tokensBefore: 10690, tokensAfter: 2380,
			sessionID:  "roo-task",
			resultText: "Changes successfully applied to README.md", resultTool: "apply_diff", callID: "m7",
		},
		// The real-* tasks were recorded by the extensions (see
		// testdata/SOURCE.md).
		{
			// Roo Code of September 2025: the history after a condensation that Roo
			// wrote over the file (first message, summary, kept messages);
			// the ui still holds the requests of the condensed messages.
			// The read_file of m7 is answered by two headers: one result.
			dir: "real-roo-condensed", user: 5, notes: 18, assistant: 9, results: 7, compactions: 1,
			contextMessages: 1 + 37, // m0, which Roo kept before the summary, is dropped; 4 resumption notes
			usageID:         "m3", usage: compact.Usage{Input: 10754, Output: 1483, CacheRead: 107134},
			noUsage:   "m13",
			cwd:       "c:/dev/roo-code",
			stops:     map[string]compact.StopReason{"m3": compact.StopToolUse, "m5": compact.StopToolUse}, // m3: attempt_completion
			firstKept: "m2", summaryHas: "**1. Previous Conversation:**", tokensBefore: 124669, tokensAfter: 57960,
			customs:    4,
			sessionID:  "real-roo-condensed",
			resultText: "DIAGNOSTIC-ARCHITECTURAL-UI.md\n", resultTool: "list_files", callID: "m10",
			// the result of a call the condensation removed
			warnings: []string{`message 3: "[update_todo_list] Result:" has no assistant message before it`},
		},
		{
			// Roo Code of October 2025, XML tools; the first request recorded no usage,
			// so only the times pair requests with answers.
			dir: "real-roo-mixed-ops", user: 1, notes: 20, assistant: 20, results: 19,
			contextMessages: 60,
			usageID:         "m3", usage: compact.Usage{Input: 642, Output: 304, CacheRead: 40979},
			noUsage:    "m1",
			cwd:        "c:/dev/roo-code",
			stops:      map[string]compact.StopReason{"m1": compact.StopToolUse, "m39": compact.StopToolUse}, // m39: attempt_completion
			sessionID:  "real-roo-mixed-ops",
			resultText: "<file_write_result>\n<path>src/core/condense/", resultTool: "apply_diff", callID: "m22",
		},
		{
			// Roo Code of February 2025 on Anthropic: tokensIn without the cache.
			dir: "real-roo-2025-02", user: 1, notes: 2, assistant: 2, results: 1,
			contextMessages: 6,
			usageID:         "m3", usage: compact.Usage{Input: 2, Output: 112, CacheRead: 16042, CacheWrite: 732},
			cwd:        "f:/Develop/project/tools/Roo-Code",
			stops:      map[string]compact.StopReason{"m1": compact.StopToolUse, "m3": compact.StopToolUse}, // m3: read_file, its result trimmed
			sessionID:  "real-roo-2025-02",
			resultText: "Cline.ts\nCodeActionProvider.ts\n", resultTool: "list_files", callID: "m2",
		},
		{
			// Cline of October 2025 with a local model that reported no tokens; resumed.
			dir: "real-cline-resume", user: 1, notes: 4, assistant: 2, results: 2,
			contextMessages: 9,
			usageID:         "m3", usage: compact.Usage{},
			cwd:        "c:/Users/imitr/OneDrive/Desktop/test",
			stops:      map[string]compact.StopReason{"m1": compact.StopToolUse, "m3": compact.StopToolUse},
			sessionID:  "real-cline-resume",
			resultText: "index.html\njs.js\nstyles.css", resultTool: "list_files", callID: "m2",
		},
		{
			// The same Cline, the api history alone; ends interrupted by the user.
			// Two responses wrote attempt_completion after write_to_file; Cline
			// answered each "Tool [attempt_completion] was not executed".
			dir: "real-cline-todo", user: 1, notes: 9, assistant: 8, results: 9,
			contextMessages: 27,
			cwd:             "c:/Users/imitr/OneDrive/Desktop/test",
			stops:           map[string]compact.StopReason{"m11": compact.StopToolUse, "m15": compact.StopAborted},
			sessionID:       "real-cline-todo",
			resultText:      "The tool execution failed with the following error:", resultTool: "attempt_completion", callID: "m12",
		},
	}
	for _, tc := range tests {
		t.Run(tc.dir, func(t *testing.T) {
			tr := readertest.ReadTestdata(t, ReadFile, tc.dir)
			if tr.Format != "cline" || tr.SessionID != tc.sessionID || tr.Cwd != tc.cwd || tr.Model != tc.model ||
				(tc.model != "" && tr.Provider != "anthropic") {
				t.Errorf("header: format %q session %q cwd %q model %q provider %q", tr.Format, tr.SessionID, tr.Cwd, tr.Model, tr.Provider)
			}
			if tr.Timestamp == "" {
				t.Error("no start time")
			}
			if len(tr.Warnings) != len(tc.warnings) {
				t.Errorf("warnings: %q, want %q", tr.Warnings, tc.warnings)
			}
			for i, w := range tc.warnings {
				if i < len(tr.Warnings) && !strings.Contains(tr.Warnings[i], w) {
					t.Errorf("warning %d = %q, want %q in it", i, tr.Warnings[i], w)
				}
			}
			roles := map[compact.Role]int{}
			var comps []*compact.Entry
			ids := map[string]bool{}
			customs, measured := 0, 0
			for _, e := range tr.Entries {
				if e.ID == "" || ids[e.ID] {
					t.Errorf("entry id %q empty or repeated", e.ID)
				}
				ids[e.ID] = true
				if e.Kind == compact.KindCustom {
					customs++
				}
				if e.Message != nil && e.Message.Usage != nil {
					measured++
				}
				switch {
				case e.Message != nil:
					roles[e.Message.Role]++
				case e.Kind == compact.KindCompaction:
					comps = append(comps, e)
				}
			}
			if roles[compact.RoleUser] != tc.user || roles[compact.RoleAssistant] != tc.assistant || roles[compact.RoleToolResult] != tc.results ||
				roles[compact.RoleCustom] != tc.notes {
				t.Errorf("roles = %v, want user %d assistant %d toolResult %d custom %d", roles, tc.user, tc.assistant, tc.results, tc.notes)
			}
			for _, e := range tr.Entries {
				if m := e.Message; m != nil && (m.Role == compact.RoleUser && strings.Contains(m.Text(), "<environment_details>") ||
					m.Role == compact.RoleCustom && !compact.IsHarnessNote(m)) {
					t.Errorf("%s: %s message %.50q", e.ID, m.Role, m.Text())
				}
			}
			if customs != tc.customs {
				t.Errorf("%d custom entries, want %d", customs, tc.customs)
			}
			if len(comps) != tc.compactions {
				t.Fatalf("%d compactions, want %d", len(comps), tc.compactions)
			}
			if last := lastCompaction(comps); last != nil && (last.FirstKeptID != tc.firstKept || !strings.Contains(last.Summary, tc.summaryHas) ||
				last.TokensBefore != tc.tokensBefore || last.TokensAfter != tc.tokensAfter || last.Details["source"] != "cline") {
				t.Errorf("compaction: first kept %q, before %d, after %d, details %v, summary %.80q",
					last.FirstKeptID, last.TokensBefore, last.TokensAfter, last.Details, last.Summary)
			}
			if tc.usageID == "" {
				if measured != 0 {
					t.Errorf("%d messages have usage, want none", measured)
				}
			} else if e := readertest.ByID(tr, tc.usageID); e == nil || e.Message.Usage == nil || *e.Message.Usage != tc.usage {
				t.Errorf("usage of %s = %+v, want %+v", tc.usageID, e, tc.usage)
			}
			if tc.noUsage != "" {
				if e := readertest.ByID(tr, tc.noUsage); e == nil || e.Message.Role != compact.RoleAssistant || e.Message.Usage != nil {
					t.Errorf("%s should be an assistant message without usage: %+v", tc.noUsage, e)
				}
			}
			for id, want := range tc.stops {
				if e := readertest.ByID(tr, id); e == nil || e.Message.StopReason != want {
					t.Errorf("stop reason of %s = %v, want %s", id, e, want)
				}
			}
			if len(tc.unknown) != len(tr.Unknown) {
				t.Errorf("unknown = %v, want %v", tr.Unknown, tc.unknown)
			}
			for k, n := range tc.unknown {
				if tr.Unknown[k] != n {
					t.Errorf("unknown[%s] = %d, want %d", k, tr.Unknown[k], n)
				}
			}
			r := readertest.ByID(tr, tc.callID)
			if r == nil || r.Message.Role != compact.RoleToolResult || r.Message.ToolName != tc.resultTool ||
				!strings.HasPrefix(r.Message.Text(), tc.resultText) {
				t.Errorf("result %s = %+v", tc.callID, r)
			}
			readertest.CheckCalls(t, tr)
			readertest.CheckPairing(t, tr)

			readertest.SameSession(t, tr, tc.dir, tc.contextMessages)
		})
	}
}

// lastCompaction returns the last of comps, nil if there is none.
func lastCompaction(comps []*compact.Entry) *compact.Compaction {
	if len(comps) == 0 {
		return nil
	}
	return comps[len(comps)-1].Compaction
}

func TestXMLToolCalls(t *testing.T) {
	tr := readertest.ReadTestdata(t, ReadFile, "xml-task")
	a := readertest.ByID(tr, "m3").Message
	calls := a.ToolCalls()
	if len(calls) != 1 || calls[0].Name != "replace_in_file" || calls[0].FilePath() != "main.go" {
		t.Fatalf("calls = %+v", calls)
	}
	var args map[string]string
	if err := json.Unmarshal(calls[0].Arguments, &args); err != nil || !strings.HasPrefix(args["diff"], "<<<<<<< SEARCH\n") {
		t.Errorf("arguments %s (%v)", calls[0].Arguments, err)
	}
	var xml string
	for _, p := range a.Content {
		if p.Type == compact.PartToolCall {
			_ = json.Unmarshal(p.Extra["clineXml"], &xml)
		}
	}
	if !strings.HasPrefix(xml, "<replace_in_file>\n<path>main.go</path>") || !strings.HasSuffix(xml, "</replace_in_file>") {
		t.Errorf("xml kept = %q", xml)
	}
	if strings.Contains(a.Text(), "<replace_in_file>") {
		t.Errorf("XML left in the text: %q", a.Text())
	}
	// The denied write: the feedback block after the header belongs to the result.
	r := readertest.ByID(tr, "m14").Message
	if len(r.Content) != 2 || !strings.Contains(r.Content[1].Text, "TestSumEmpty") {
		t.Errorf("denied result = %q", r.Text())
	}
	var header string
	_ = json.Unmarshal(r.Extra["clineHeader"], &header)
	if header != "[write_to_file for 'main_test.go'] Result:" {
		t.Errorf("header = %q", header)
	}
	// The environment details are a note of the extension after the results.
	if u := readertest.ByID(tr, "m14.1").Message; u.Metadata().CustomType != "harness:cline:environment_details" ||
		!strings.HasPrefix(u.Text(), "<environment_details>") {
		t.Errorf("m14.1 = %+v", u)
	}
}

func TestExtrasKept(t *testing.T) {
	tr := readertest.ReadTestdata(t, ReadFile, "native-task")
	a := readertest.ByID(tr, "m1").Message
	if string(a.Extra["metrics"]) == "" || string(a.Extra["modelInfo"]) == "" || a.Provider != "anthropic" {
		t.Errorf("assistant extras %v provider %q", a.Extra, a.Provider)
	}
	th := a.Content[0]
	if th.Type != compact.PartThinking || !strings.HasPrefix(string(th.Extra["thinkingSignature"]), `"EqQB`) {
		t.Errorf("thinking part = %+v", th)
	}
	if c := a.Content[2]; string(c.Extra["call_id"]) != `"call_01A1"` {
		t.Errorf("tool call extras = %v", c.Extra)
	}
	// m4.1 is the feedback preamble, a note; the words and the image follow.
	u := readertest.ByID(tr, "m4.2").Message
	var img *compact.Part
	for i := range u.Content {
		if u.Content[i].Type == compact.PartImage {
			img = &u.Content[i]
		}
	}
	if img == nil || img.Image.MimeType != "image/png" || img.Image.Data == "" {
		t.Errorf("image not mapped: %+v", u.Content)
	}
	roo := readertest.ReadTestdata(t, ReadFile, "roo-task")
	m := readertest.ByID(roo, "m1").Message
	if string(m.Extra["truncationParent"]) == "" || !strings.Contains(string(m.Extra["unknownBlocks"]), "thoughtSignature") {
		t.Errorf("roo extras = %v", m.Extra)
	}
	if m.Content[0].Type != compact.PartThinking || m.Content[0].Thinking != "First I should list the notes folder." {
		t.Errorf("reasoning block = %+v", m.Content[0])
	}
	marker := readertest.ByID(roo, "m3")
	if marker.Kind != compact.KindCompaction || marker.Compaction.FirstKeptID != "m4" ||
		!strings.Contains(marker.Compaction.Summary, "Summarize notes/2026-01.md") || marker.Compaction.TokensBefore != 10200 {
		t.Errorf("truncation marker = %+v", marker.Compaction)
	}
}

func TestReadOnlyHistory(t *testing.T) {
	data, err := os.ReadFile("testdata/xml-task/api_conversation_history.json")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Read(data, "api_conversation_history.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range tr.Entries {
		if e.Kind == compact.KindCompaction || (e.Message != nil && e.Message.Usage != nil) {
			t.Fatalf("without ui_messages.json: unexpected %s %s", e.ID, e.Kind)
		}
	}
	readertest.CheckCalls(t, tr)
	readertest.CheckPairing(t, tr)
	// ReadFile on ui_messages.json reads the history beside it.
	a, err := ReadFile("testdata/xml-task/ui_messages.json")
	if err != nil || len(a.Entries) != len(readertest.ReadTestdata(t, ReadFile, "xml-task").Entries) {
		t.Errorf("ReadFile(ui_messages.json): %v", err)
	}
}

func TestSynthetic(t *testing.T) {
	tests := []struct {
		name, api, ui string
		check         func(t *testing.T, tr *compact.Transcript)
	}{
		{
			name: "orphan native result",
			api:  `[{"role":"user","content":[{"type":"tool_result","tool_use_id":"x1","content":"out"}]}]`,
			check: func(t *testing.T, tr *compact.Transcript) {
				if len(tr.Entries) != 1 || !compact.IsHarnessNote(tr.Entries[0].Message) ||
					tr.Entries[0].Message.Text() != "[tool result without its call: x1]\nout" || len(tr.Warnings) != 1 {
					t.Errorf("entries %d (first %q), warnings %q", len(tr.Entries), tr.Entries[0].Message.Text(), tr.Warnings)
				}
			},
		},
		{
			name: "orphan XML result",
			api:  `[{"role":"user","content":[{"type":"text","text":"[read_file for 'a'] Result:\nhello"}]}]`,
			check: func(t *testing.T, tr *compact.Transcript) {
				if len(tr.Entries) != 1 || !compact.IsHarnessNote(tr.Entries[0].Message) ||
					tr.Entries[0].Message.Text() != "[tool result without its call: read_file]\nhello" || len(tr.Warnings) != 1 {
					t.Errorf("entries %d (first %q), warnings %q", len(tr.Entries), tr.Entries[0].Message.Text(), tr.Warnings)
				}
			},
		},
		{
			name: "XML result without XML in the text",
			api: `[{"role":"user","content":"go"},{"role":"assistant","content":"running it"},` +
				`{"role":"user","content":[{"type":"text","text":"[execute_command for 'ls'] Result:\nCommand executed."}]}]`,
			check: func(t *testing.T, tr *compact.Transcript) {
				calls := tr.Entries[1].Message.ToolCalls()
				if len(calls) != 1 || calls[0].Name != "execute_command" || string(calls[0].Arguments) != "{}" {
					t.Fatalf("calls = %+v", calls)
				}
				r := tr.Entries[2].Message
				if r.Role != compact.RoleToolResult || r.ToolCallID != calls[0].ID || r.Text() != "Command executed." {
					t.Errorf("result = %+v", r)
				}
			},
		},
		{
			// Roo Code answers one use with two headers (an error, then
			// the output): one call, one result holding both.
			name: "two headers for one XML use",
			api: `[{"role":"user","content":"go"},{"role":"assistant","content":"<read_file>\n<path>a.md</path>\n</read_file>"},` +
				`{"role":"user","content":[{"type":"text","text":"[read_file for 'a.md'] Result:"},{"type":"text","text":"The tool execution failed with the following error: not found"},` +
				`{"type":"text","text":"[read_file for 'a.md'] Result:"},{"type":"text","text":"<files><file><error>not found</error></file></files>"},` +
				`{"type":"text","text":"<environment_details>\nx\n</environment_details>"}]}]`,
			check: func(t *testing.T, tr *compact.Transcript) {
				calls := tr.Entries[1].Message.ToolCalls()
				if len(calls) != 1 || calls[0].Name != "read_file" || calls[0].FilePath() != "a.md" {
					t.Fatalf("calls = %+v", calls)
				}
				var results []*compact.Message
				for _, e := range tr.Entries {
					if e.Message != nil && e.Message.Role == compact.RoleToolResult {
						results = append(results, e.Message)
					}
				}
				if len(results) != 1 || results[0].ToolCallID != calls[0].ID || !results[0].IsError ||
					!strings.Contains(results[0].Text(), "<files><file><error>") {
					t.Errorf("results = %+v", results)
				}
			},
		},
		{
			// A header answering a native call (no tool_result block)
			// answers that call; no second call is made up.
			name: "XML header after a native call",
			api: `[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"text","text":"running"},` +
				`{"type":"tool_use","id":"t1","name":"execute_command","input":{"command":"ls"}}]},` +
				`{"role":"user","content":[{"type":"text","text":"[execute_command for 'ls'] Result:\nCommand executed."}]}]`,
			check: func(t *testing.T, tr *compact.Transcript) {
				calls := tr.Entries[1].Message.ToolCalls()
				if len(calls) != 1 || calls[0].ID != "t1" {
					t.Fatalf("calls = %+v", calls)
				}
				if r := tr.Entries[2].Message; r.Role != compact.RoleToolResult || r.ToolCallID != "t1" || r.Text() != "Command executed." {
					t.Errorf("result = %+v", r)
				}
			},
		},
		{
			// Cline runs one tool a message and answers a second use with
			// "Tool [x] was not executed": that is the second call's result.
			name: "second XML use not executed",
			api: `[{"role":"user","content":"go"},{"role":"assistant","content":"<write_to_file>\n<path>a.txt</path>\n<content>\nhi\n</content>\n</write_to_file>\n\n<attempt_completion>\n<result>\ndone\n</result>\n</attempt_completion>"},` +
				`{"role":"user","content":[{"type":"text","text":"[write_to_file for 'a.txt'] Result:"},{"type":"text","text":"Saved a.txt."},` +
				`{"type":"text","text":"Tool [attempt_completion] was not executed because a tool has already been used in this message."},` +
				`{"type":"text","text":"<environment_details>\nx\n</environment_details>"}]}]`,
			check: func(t *testing.T, tr *compact.Transcript) {
				calls := tr.Entries[1].Message.ToolCalls()
				if len(calls) != 2 || calls[0].Name != "write_to_file" || calls[1].Name != "attempt_completion" {
					t.Fatalf("calls = %+v", calls)
				}
				w, a := tr.Entries[2].Message, tr.Entries[3].Message
				if w.ToolCallID != calls[0].ID || w.Text() != "Saved a.txt." || w.IsError {
					t.Errorf("write_to_file result = %+v", w)
				}
				if a.Role != compact.RoleToolResult || a.ToolCallID != calls[1].ID || !a.IsError || !strings.HasPrefix(a.Text(), "Tool [attempt_completion] was not executed") {
					t.Errorf("attempt_completion result = %+v", a)
				}
			},
		},
		{
			// The history ends on a response cut off inside a tool use:
			// the call is made, the notice stays text.
			name: "last response interrupted inside a use",
			api:  `[{"role":"user","content":"go"},{"role":"assistant","content":"Writing.\n<write_to_file>\n<path>a.txt</path>\n<content>\nhal\n\n\n[Response interrupted by user]"}]`,
			check: func(t *testing.T, tr *compact.Transcript) {
				m := tr.Entries[1].Message
				calls := m.ToolCalls()
				if len(calls) != 1 || calls[0].FilePath() != "a.txt" {
					t.Fatalf("calls = %+v", calls)
				}
				if m.StopReason != compact.StopAborted || !strings.HasSuffix(m.Text(), "[Response interrupted by user]") {
					t.Errorf("stop %s, text %q", m.StopReason, m.Text())
				}
			},
		},
		{
			name: "unknown role, reasoning item and block",
			api: `[{"role":"system","content":"x"},{"type":"reasoning","encrypted_content":"e","id":"r1"},` +
				`{"role":"user","content":[{"type":"document","source":{}}]}]`,
			check: func(t *testing.T, tr *compact.Transcript) {
				if tr.Unknown["system"] != 1 || tr.Unknown["block:document"] != 1 || tr.Unknown["reasoning"] != 0 {
					t.Errorf("unknown = %v", tr.Unknown)
				}
				if tr.Entries[0].Metadata().CustomType != "cline:system" || tr.Entries[1].Metadata().CustomType != "cline:reasoning" {
					t.Errorf("custom entries %q %q", tr.Entries[0].Metadata().CustomType, tr.Entries[1].Metadata().CustomType)
				}
				// The document is read as the other Anthropic doors read it.
				if c := tr.Entries[2].Message.Content; len(c) != 1 || c[0].Text != "[document]" || !strings.Contains(string(c[0].Extra[anthropic.BlockExtra]), "document") {
					t.Errorf("document parts %+v", c)
				}
			},
		},
		{
			// Anthropic blocks are mapped as every door maps them
			// (anthropic.Content). Before, redacted_thinking was an empty
			// thinking part keeping its data as redactedData, an image by
			// URL and a document inside a tool result were left out of the
			// messages, and a part's member named as a pi field was kept
			// as "cline_<name>".
			name: "anthropic blocks",
			api: `[{"role":"user","content":[{"type":"text","text":"look","Text":"shadow"},{"type":"image","source":{"type":"url","url":"https://x/shot.png"}}]},` +
				`{"role":"assistant","content":[{"type":"redacted_thinking","data":"RU5D"},{"type":"tool_use","id":"t1","name":"read_file","input":"a.go"}]},` +
				`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"package a"},{"type":"document","title":"spec","source":{"type":"text","data":"Use tabs."}}]}]}]`,
			check: func(t *testing.T, tr *compact.Transcript) {
				u := tr.Entries[0].Message.Content
				if len(u) != 2 || u[0].Text != "look" || string(u[0].Extra["cline.Text"]) != `"shadow"` ||
					u[1].Type != compact.PartImage || !strings.Contains(string(u[1].Extra["source"]), "shot.png") {
					t.Errorf("user parts %+v", u)
				}
				a := tr.Entries[1].Message
				if len(a.Content) == 0 {
					t.Fatal("assistant message without parts")
				}
				if p := a.Content[0]; p.Thinking != anthropic.RedactedThinking || string(p.Extra["redacted"]) != "true" || string(p.Extra["thinkingSignature"]) != `"RU5D"` {
					t.Errorf("redacted thinking %+v", p)
				}
				if c := a.ToolCalls(); len(c) != 1 || string(c[0].Arguments) != `{"input":"a.go"}` {
					t.Errorf("calls %+v", c)
				}
				r := tr.Entries[2].Message
				if r.ToolName != "read_file" || len(r.Content) != 2 || r.Content[1].Text != "[document]\nspec\nUse tabs." || tr.Unknown["block:document"] != 1 {
					t.Errorf("result %+v, unknown %v", r.Content, tr.Unknown)
				}
			},
		},
		{
			name: "usage by order without conversationHistoryIndex",
			api:  `[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"},{"role":"assistant","content":"d"}]`,
			ui: `[{"ts":1,"type":"say","say":"api_req_started","text":"{\"tokensIn\":10,\"tokensOut\":2}"},` +
				`{"ts":2,"type":"say","say":"api_req_started","text":"{\"tokensIn\":20,\"tokensOut\":3,\"cacheReads\":5}"}]`,
			check: func(t *testing.T, tr *compact.Transcript) {
				if u := tr.Entries[3].Message.Usage; u == nil || *u != (compact.Usage{Input: 20, Output: 3, CacheRead: 5}) {
					t.Errorf("usage = %+v", u)
				}
			},
		},
		{
			// Requests 1 and 2 measured messages a condensation removed; 4
			// failed and was retried as 5; 6 recorded no usage.
			name: "usage by time",
			api: `[{"role":"user","content":"a","ts":100},{"role":"assistant","content":"s","ts":150,"isSummary":true},` +
				`{"role":"assistant","content":"b","ts":300},{"role":"user","content":"c","ts":310},` +
				`{"role":"assistant","content":"d","ts":500},{"role":"user","content":"e","ts":510},{"role":"assistant","content":"f","ts":700}]`,
			ui: `[{"ts":10,"type":"say","say":"api_req_started","text":"{\"tokensIn\":1}"},` +
				`{"ts":20,"type":"say","say":"api_req_started","text":"{\"tokensIn\":2}"},` +
				`{"ts":200,"type":"say","say":"api_req_started","text":"{\"tokensIn\":3}"},` +
				`{"ts":305,"type":"say","say":"api_req_started","text":"{\"tokensIn\":4}"},` +
				`{"ts":400,"type":"say","say":"api_req_started","text":"{\"tokensIn\":5}"},` +
				`{"ts":505,"type":"say","say":"api_req_started","text":"{}"}]`,
			check: func(t *testing.T, tr *compact.Transcript) {
				want := map[string]int{"m2": 3, "m4": 5, "m6": -1}
				for id, in := range want {
					u := readertest.ByID(tr, id).Message.Usage
					if (in < 0) != (u == nil) || (u != nil && u.Input != in) {
						t.Errorf("usage of %s = %+v, want input %d", id, u, in)
					}
				}
				var left []string
				for _, e := range tr.Entries {
					if e.Metadata().CustomType == "cline:api_req_started" {
						left = append(left, e.ID)
					}
				}
				if strings.Join(left, " ") != "ui0 ui1 ui3" || len(tr.Warnings) != 0 {
					t.Errorf("left over %q, warnings %q", left, tr.Warnings)
				}
			},
		},
		{
			name: "times that go back: usage by order",
			api: `[{"role":"user","content":"a","ts":100},{"role":"assistant","content":"b","ts":300},` +
				`{"role":"user","content":"c","ts":310},{"role":"assistant","content":"d","ts":200}]`,
			ui: `[{"ts":50,"type":"say","say":"api_req_started","text":"{\"tokensIn\":1}"},` +
				`{"ts":305,"type":"say","say":"api_req_started","text":"{\"tokensIn\":2}"}]`,
			check: func(t *testing.T, tr *compact.Transcript) {
				if u := readertest.ByID(tr, "m3").Message.Usage; u == nil || u.Input != 2 {
					t.Errorf("usage = %+v", u)
				}
			},
		},
		{
			name: "usage that cannot be mapped stays a custom entry",
			api:  `[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]`,
			ui: `[{"ts":1,"type":"say","say":"api_req_started","text":"{\"tokensIn\":10}"},` +
				`{"ts":2,"type":"say","say":"api_req_started","text":"{\"tokensIn\":20}"}]`,
			check: func(t *testing.T, tr *compact.Transcript) {
				n := 0
				for _, e := range tr.Entries {
					if e.Metadata().CustomType == "cline:api_req_started" {
						n++
					}
				}
				if n != 2 || tr.Entries[1].Message.Usage != nil || len(tr.Warnings) != 1 {
					t.Errorf("%d custom entries, warnings %q", n, tr.Warnings)
				}
			},
		},
		{
			name: "bad ui message is a warning",
			api:  `[{"role":"user","content":"a"}]`,
			ui:   "[\n{\"ts\":\"soon\",\"type\":\"say\"}\n]",
			check: func(t *testing.T, tr *compact.Transcript) {
				if len(tr.Warnings) != 1 || !strings.Contains(tr.Warnings[0], "ui_messages.json:2: ui message 1: field ts") {
					t.Errorf("warnings %q", tr.Warnings)
				}
			},
		},
		{
			name: "cut short after a whole message",
			api:  "[{\"role\":\"user\",\"content\":\"a\"},\n{\"role\":\"assistant\",\"content\":[{\"type\":\"te",
			check: func(t *testing.T, tr *compact.Transcript) {
				if len(tr.Entries) != 1 || len(tr.Warnings) != 1 || !strings.Contains(tr.Warnings[0], "t.json:2: file ends inside message 2") {
					t.Errorf("entries %d warnings %q", len(tr.Entries), tr.Warnings)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var ui []byte
			if tc.ui != "" {
				ui = []byte(tc.ui)
			}
			tr, err := ReadTask([]byte(tc.api), ui, "t.json")
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, tr)
			readertest.Import(t, tr, tc.name)
		})
	}
}

func TestBadInput(t *testing.T) {
	readertest.RunBad(t, Read, "t.json", []readertest.Bad{
		{Name: "not an array", Body: `{"role":"user"}`, Err: "t.json:1: not a JSON array"},
		{Name: "not JSON", Body: `[{"role":"user","content":"a"} x]`, Err: "t.json:1:"},
		{Name: "element not an object", Body: "[\n1]", Err: "t.json:2: message 1: not an object"},
		{Name: "role not a string", Body: "[\n{\"role\":1,\"content\":\"a\"}]", Err: "t.json:2: message 1: field role: not a string"},
		{Name: "content not blocks", Body: `[{"role":"user","content":7}]`, Err: "t.json:1: message 1: field content: want a string or an array of blocks, have 7"},
		{Name: "block without type", Body: `[{"role":"user","content":[{"text":"a"}]}]`, Err: "t.json:1: message 1: field content[0].type: missing"},
		// The Anthropic mapping's errors; before, these were read as an
		// empty text, a call without an id and a result kept as stored
		// with a warning.
		{Name: "text not a string", Body: `[{"role":"user","content":[{"type":"text","text":5}]}]`, Err: "t.json:1: message 1: field content[0].text: want a string, have 5"},
		{Name: "tool_use without id", Body: `[{"role":"assistant","content":[{"type":"tool_use","name":"x","input":{}}]}]`, Err: "t.json:1: message 1: field content[0].id: missing"},
		{Name: "is_error not a boolean", Body: `[{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","is_error":"yes"}]}]`, Err: "t.json:1: message 1: field content[0].is_error: want true or false"},
		{Name: "ts not a number", Body: `[{"role":"user","content":"a","ts":"x"}]`, Err: "t.json:1: message 1: field ts: not a number"},
		{Name: "no role", Body: `[{"content":"a"}]`, Err: "t.json:1: message 1: field role: missing"},
		{Name: "empty", Body: ``, Err: "t.json:1: not a JSON array"},
		{Name: "cut after a message", Body: `[{"role":"user","content":"a"},{"role":"assis`, Warnings: []string{"t.json:1: file ends inside message 2; read the 1 before it"}},
	}, func(t *testing.T, tr *compact.Transcript) {
		if len(tr.Entries) != 1 || tr.Entries[0].Message.Text() != "a" {
			t.Errorf("entries %d", len(tr.Entries))
		}
	})
}

func TestDetect(t *testing.T) {
	long := `[{"role":"user","content":[{"type":"text","text":"` + strings.Repeat("x", 70000) + `"}]}]`
	readertest.CheckDetect(t, Detect, []readertest.Head{
		{"xml task", readertest.File(t, "testdata/xml-task/api_conversation_history.json"), true},
		{"native task", readertest.File(t, "testdata/native-task/api_conversation_history.json"), true},
		{"roo task", readertest.File(t, "testdata/roo-task/api_conversation_history.json"), true},
		{"real roo task (pretty printed)", readertest.File(t, "testdata/real-roo-condensed/api_conversation_history.json"), true},
		{"real roo task of 2025-02", readertest.File(t, "testdata/real-roo-2025-02/api_conversation_history.json"), true},
		{"real cline task", readertest.File(t, "testdata/real-cline-resume/api_conversation_history.json"), true},
		{"real cline history alone", readertest.File(t, "testdata/real-cline-todo/api_conversation_history.json"), true},
		{"real roo ui messages", readertest.File(t, "testdata/real-roo-mixed-ops/ui_messages.json"), false},
		{"pretty printed", "[\n  {\n    \"role\": \"assistant\",\n    \"content\": \"hi\"", true},
		{"cut inside the first message", long[:65536], true},
		{"content before role", `[{"content":"a","role":"user"}]`, true},
		{"ui messages", readertest.File(t, "testdata/xml-task/ui_messages.json"), false},
		{"gemini checkpoint", `[{"role":"user","parts":[{"text":"hi"}]}]`, false},
		{"pi session", readertest.File(t, "../../../shared/testdata/sessions/pi/before-compaction.jsonl"), false},
		{"gemini recording", `{"sessionId":"a","projectHash":"b","messages":[]}`, false},
		{"other role", `[{"role":"tool","content":"x"}]`, false},
		{"empty", ``, false},
	})
}

func TestExtraNamesKeptApart(t *testing.T) {
	// Members whose names the session reader would take for its own
	// fields (it ignores case), and those named as the extras this
	// reader sets itself, are renamed, not lost. Before, "Model" was kept
	// as it was and read back as the model, and the others were kept as
	// "cline_<name>".
	tr, err := Read([]byte(`[{"role":"user","content":[{"type":"text","text":"hi","ID":7}],"Model":"x","details":{},"unknownBlocks":1}]`), "t.json")
	if err != nil {
		t.Fatal(err)
	}
	readertest.CheckExtrasKeptApart(t, tr, tr.Entries[0].Message, "cline", "hi",
		map[string]string{"Model": `"x"`, "details": "{}", "unknownBlocks": "1"}, map[string]string{"ID": "7"})
}
