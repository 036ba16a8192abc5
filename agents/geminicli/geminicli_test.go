package geminicli

import (
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/readertest"
)

func TestReadFiles(t *testing.T) {
	tests := []struct {
		file                     string
		session, model           string
		user, assistant, results int
		customs                  map[string]int
		compactions              int
		contextMessages          int
		usageID                  string
		usage                    compact.Usage
		resultID, resultPrefix   string
		resultErr                bool
	}{
		{
			file: "session-2025-10-rename.json", session: "2d9ea14f-1e4e-44f6-8bf5-7a7819cb1cd9", model: "gemini-2.5-pro",
			user: 1, assistant: 13, customs: map[string]int{"gemini-cli:session": 1}, contextMessages: 14,
			// input 20237 of which 19165 cached, output 51 + 69 thoughts
			usageID: "c9438308-d379-42fe-b714-c42d73f6ca8d", usage: compact.Usage{Input: 1072, Output: 120, CacheRead: 19165, Total: 20357},
		},
		{
			file: "session-2026-03-27-readme.json", session: "8a20078e-2d5e-4f81-a640-9b879bbb7e6d", model: "gemini-3.1-pro-preview-customtools",
			user: 1, assistant: 3, results: 7, customs: map[string]int{"gemini-cli:session": 1}, contextMessages: 11,
			usageID: "22dfaab2-8bcb-4b40-9ec0-c7feb8f6c2bd", usage: compact.Usage{Input: 3994, Output: 412, CacheRead: 7900, Total: 12306},
			resultID: "d4581b9c-19b2-4481-8ee6-e896dd21eff5#4", resultPrefix: "Successfully created and wrote to new file:",
		},
		{
			file: "session-2026-04-23T12-52-0ab84937.jsonl", session: "0ab84937-9fe7-4284-986a-33c832af0b6a", model: "gemini-3-flash-preview",
			user: 3, assistant: 6, results: 12, customs: map[string]int{"gemini-cli:session": 1, "gemini-cli:info": 2}, contextMessages: 21,
			usageID: "a4173396-3649-48f8-8fa8-e2624684806e", usage: compact.Usage{Input: 20926, Output: 731, CacheRead: 8156, Total: 29813},
			resultID: "42a121a5-b72a-43e2-9e9d-640b17ea8978#2", resultPrefix: "Successfully modified file:",
		},
		{
			file: "built-rewind-compress.jsonl", session: "5e2f3a9c-0b7d-4d1e-a6c4-8f1e2d3b4a5c", model: "gemini-3-flash-preview",
			user: 5, assistant: 8, results: 4, customs: map[string]int{"gemini-cli:session": 1, "gemini-cli:tool-response": 3},
			// summary + u6, g6, its 2 results, g7 + u8, g8
			compactions: 1, contextMessages: 8,
			usageID: "g2", usage: compact.Usage{Input: 502, Output: 117, CacheRead: 7900, Total: 8519},
			resultID: "g4#1", resultPrefix: "Command exited with code 1", resultErr: true,
		},
		{
			file: "checkpoint-bump.json", user: 2, assistant: 4, results: 2, customs: map[string]int{"gemini-cli:checkpoint": 1},
			contextMessages: 8, resultID: "c6.0", resultPrefix: "cat: VERSION", resultErr: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			tr := readertest.ReadTestdata(t, ReadFile, tc.file)
			if tr.Format != "gemini-cli" || tr.SessionID != tc.session || tr.Model != tc.model {
				t.Errorf("format %q session %q model %q", tr.Format, tr.SessionID, tr.Model)
			}
			if tc.model != "" && (tr.Provider != "google" || tr.Timestamp == "") {
				t.Errorf("provider %q start %q", tr.Provider, tr.Timestamp)
			}
			if len(tr.Warnings) != 0 || len(tr.Unknown) != 0 {
				t.Errorf("warnings %q unknown %v", tr.Warnings, tr.Unknown)
			}
			roles := map[compact.Role]int{}
			customs := map[string]int{}
			comps := 0
			for _, e := range tr.Entries {
				switch {
				case e.Message != nil:
					roles[e.Message.Role]++
				case e.Kind == compact.KindCustom:
					customs[e.Metadata().CustomType]++
				case e.Kind == compact.KindCompaction:
					comps++
				}
			}
			if roles[compact.RoleUser] != tc.user || roles[compact.RoleAssistant] != tc.assistant || roles[compact.RoleToolResult] != tc.results {
				t.Errorf("roles %v, want user %d assistant %d results %d", roles, tc.user, tc.assistant, tc.results)
			}
			if len(customs) != len(tc.customs) {
				t.Errorf("custom entries %v, want %v", customs, tc.customs)
			}
			for k, n := range tc.customs {
				if customs[k] != n {
					t.Errorf("custom %s: %d, want %d", k, customs[k], n)
				}
			}
			if comps != tc.compactions {
				t.Errorf("%d compactions, want %d", comps, tc.compactions)
			}
			if tc.usageID != "" {
				e := readertest.ByID(tr, tc.usageID)
				if e == nil || e.Message.Usage == nil || *e.Message.Usage != tc.usage || e.Message.Model != tc.model {
					t.Errorf("usage of %s = %+v, want %+v", tc.usageID, e.Message.Usage, tc.usage)
				}
			}
			if tc.resultID != "" {
				r := readertest.ByID(tr, tc.resultID)
				if r == nil || r.Message.Role != compact.RoleToolResult || !strings.HasPrefix(r.Message.Text(), tc.resultPrefix) || r.Message.IsError != tc.resultErr {
					t.Errorf("result %s = %+v", tc.resultID, r)
				}
			}
			readertest.CheckCalls(t, tr)
			readertest.CheckPairing(t, tr)
			readertest.CheckAnswered(t, tr)
			readertest.SameSession(t, tr, tc.file, tc.contextMessages)
		})
	}
}

func TestRewindAndCompression(t *testing.T) {
	tr := readertest.ReadTestdata(t, ReadFile, "built-rewind-compress.jsonl")
	if u4 := readertest.ByID(tr, "u4"); u4 == nil || u4.ParentID != "g2" {
		t.Errorf("the prompt after the rewind does not branch from g2: %+v", u4)
	}
	var cp *compact.Compaction
	for _, e := range tr.Entries {
		if e.Kind == compact.KindCompaction {
			cp = e.Compaction
		}
	}
	if cp == nil {
		t.Fatal("no compaction")
	}
	if cp.FirstKeptID != "u6" || !strings.HasPrefix(cp.Summary, "<state_snapshot>") || !strings.Contains(cp.Summary, "Got it.") ||
		cp.TokensBefore != 8919 || cp.Details["dropped"] != 8 || cp.Details["source"] != "gemini-cli" {
		t.Errorf("compaction = %+v", cp)
	}
	s := readertest.Import(t, tr, "built")
	for _, e := range s.Path() {
		if e.ID == "u3" || e.ID == "g3" {
			t.Errorf("rewound message %s is on the path", e.ID)
		}
	}
	if s.Entry("u3") == nil {
		t.Error("rewound message lost")
	}
	ctx := s.Context()
	if ctx.Messages[0].Role != compact.RoleCompactionSummary {
		t.Errorf("context starts with %s", ctx.Messages[0].Role)
	}
	// The thoughts and the stored token record are kept.
	g1 := readertest.ByID(tr, "g1").Message
	if g1.Content[0].Type != compact.PartThinking || g1.Content[0].Thinking != "**Reading the script** I'll open the script before answering." ||
		!strings.Contains(string(g1.Extra["tokens"]), `"thoughts":210`) {
		t.Errorf("g1 = %+v", g1)
	}
	if call := g1.Content[1]; string(call.Extra["status"]) != `"success"` || string(call.Extra["displayName"]) != `"ReadFile"` {
		t.Errorf("call extras = %v", call.Extra)
	}
}

func TestSynthetic(t *testing.T) {
	meta := `{"sessionId":"s","projectHash":"p","startTime":"2026-01-01T00:00:00.000Z","lastUpdated":"2026-01-01T00:00:00.000Z"}` + "\n"
	tests := []struct {
		name, data string
		check      func(t *testing.T, tr *compact.Transcript)
	}{
		{
			name: "torn last line",
			data: meta + `{"id":"a","timestamp":"2026-01-01T00:00:01Z","type":"user","content":"hi"}` + "\n" + `{"id":"b","type":"gem`,
			check: func(t *testing.T, tr *compact.Transcript) {
				if len(tr.Entries) != 2 || len(tr.Warnings) != 1 || !strings.Contains(tr.Warnings[0], "t.jsonl:3: the last line is cut short") {
					t.Errorf("entries %d warnings %q", len(tr.Entries), tr.Warnings)
				}
			},
		},
		{
			name: "unknown record and message type",
			data: meta + `{"foo":1}` + "\n" + `{"id":"a","type":"hint","content":"x"}` + "\n",
			check: func(t *testing.T, tr *compact.Transcript) {
				if tr.Unknown["record"] != 1 || tr.Unknown["type:hint"] != 1 || tr.Entries[1].Metadata().CustomType != "gemini-cli:record" ||
					tr.Entries[2].Metadata().CustomType != "gemini-cli:hint" {
					t.Errorf("unknown %v", tr.Unknown)
				}
			},
		},
		{
			name: "function response without a call",
			data: meta + `{"id":"a","type":"user","content":[{"functionResponse":{"id":"z","name":"x","response":{"output":"o"}}}]}` + "\n",
			check: func(t *testing.T, tr *compact.Transcript) {
				if m := tr.Entries[1].Message; m == nil || !compact.IsHarnessNote(m) || m.Text() != "[tool result without its call: x (z)]\no" || len(tr.Warnings) != 1 {
					t.Errorf("entry %+v (%q) warnings %q", tr.Entries[1], tr.Entries[1].Message.Text(), tr.Warnings)
				}
			},
		},
		{
			name: "masking sync keeps the stored content",
			data: meta + `{"id":"a","type":"user","content":"hi"}` + "\n" + `{"$set":{"messages":[{"id":"a","type":"user","content":"[masked]"}]}}` + "\n",
			check: func(t *testing.T, tr *compact.Transcript) {
				if tr.Entries[1].Message.Text() != "hi" || tr.Entries[2].Metadata().CustomType != "gemini-cli:history-sync" {
					t.Errorf("entries %+v %+v", tr.Entries[1], tr.Entries[2])
				}
			},
		},
		{
			name: "rollback by $set is a branch",
			data: meta + `{"id":"a","type":"user","content":"1"}` + "\n" + `{"id":"b","type":"gemini","content":"2"}` + "\n" +
				`{"$set":{"messages":[{"id":"a","type":"user","content":"1"}]}}` + "\n" + `{"id":"c","type":"gemini","content":"3"}` + "\n",
			check: func(t *testing.T, tr *compact.Transcript) {
				if c := readertest.ByID(tr, "c"); c == nil || c.ParentID != "a" {
					t.Errorf("c = %+v", c)
				}
			},
		},
		{
			name: "rewind to an unknown id starts over from the session",
			data: meta + `{"id":"a","type":"user","content":"1"}` + "\n" + `{"$rewindTo":"nope"}` + "\n" + `{"id":"a","type":"user","content":"2"}` + "\n",
			check: func(t *testing.T, tr *compact.Transcript) {
				if e := readertest.ByID(tr, "a~2"); e == nil || e.ParentID != "session" || e.Message.Text() != "2" {
					t.Errorf("second a = %+v", e)
				}
			},
		},
		{
			name: "one-line legacy record with a cancelled call",
			data: `{"sessionId":"s","projectHash":"p","messages":[{"id":"g","type":"gemini","content":"",` +
				`"toolCalls":[{"id":"k","name":"shell","args":{"command":"ls"},"status":"cancelled"}]}]}`,
			check: func(t *testing.T, tr *compact.Transcript) {
				r := readertest.ByID(tr, "g#1")
				if r == nil || !r.Message.IsError || r.Message.ToolCallID != "k" || r.Message.Text() != "" {
					t.Errorf("result = %+v", r)
				}
			},
		},
		{
			name: "old checkpoint: a bare array",
			data: `[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"text":"hello"}]},{"role":"tool","parts":[]}]`,
			check: func(t *testing.T, tr *compact.Transcript) {
				if len(tr.Entries) != 3 || tr.Entries[1].Message.Text() != "hello" || tr.Unknown["role:tool"] != 1 {
					t.Errorf("entries %d unknown %v", len(tr.Entries), tr.Unknown)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := Read([]byte(tc.data), "t.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, tr)
			readertest.Import(t, tr, tc.name)
		})
	}
}

func TestBadInput(t *testing.T) {
	meta := `{"sessionId":"s","projectHash":"p"}` + "\n"
	readertest.RunBad(t, Read, "t.jsonl", []readertest.Bad{
		{Name: "empty", Body: "", Err: "t.jsonl:1: empty file"},
		{Name: "not JSON", Body: "hello", Err: "t.jsonl:1: not a JSON object or array"},
		{Name: "bad line", Body: meta + "{nope\n" + `{"id":"a"}` + "\n", Err: "t.jsonl:2: not a JSON object: invalid character"},
		// A last line that is whole JSON but no object is no write cut
		// short: an error, as in the other JSON Lines readers.
		{Name: "last line null", Body: meta + "null", Err: "t.jsonl:2: not a JSON object: null"},
		{Name: "id not a string", Body: meta + `{"id":"a","type":7}` + "\n", Err: "t.jsonl:2: field type: not a string"},
		{Name: "$set messages not an array", Body: meta + `{"$set":{"messages":3}}` + "\n", Err: "t.jsonl:2: field $set.messages: not an array"},
		{Name: "legacy message without id", Body: "{\"sessionId\":\"s\",\"projectHash\":\"p\",\n\"messages\":[\n{\"type\":\"user\"}]}", Err: "t.jsonl:3: message 1: field id: missing"},
		{Name: "checkpoint content", Body: `[{"role":1}]`, Err: "t.jsonl: content 1: role"},
		{Name: "checkpoint history", Body: `{"history":{}}`, Err: "t.jsonl:1: history: not an array"},
	}, nil)
	// A message that cannot be mapped is kept as stored, with a warning.
	tr, err := Read([]byte(meta+`{"id":"a","type":"gemini","content":5}`+"\n"), "t.jsonl")
	if err != nil || len(tr.Warnings) != 1 || tr.Entries[1].Metadata().CustomType != "gemini-cli:invalid" || !strings.Contains(tr.Warnings[0], "t.jsonl:2: message a: field content") {
		t.Errorf("err %v warnings %q", err, tr.Warnings)
	}
}

func TestDetect(t *testing.T) {
	long := `{"sessionId":"a","projectHash":"b","messages":[{"id":"x","type":"user","content":"` + strings.Repeat("y", 70000) + `"}]}`
	readertest.CheckDetect(t, Detect, []readertest.Head{
		{"legacy recording", readertest.File(t, "testdata/session-2026-03-27-readme.json"), true},
		{"old recording", readertest.File(t, "testdata/session-2025-10-rename.json"), true},
		{"jsonl recording", readertest.File(t, "testdata/session-2026-04-23T12-52-0ab84937.jsonl"), true},
		{"built recording", readertest.File(t, "testdata/built-rewind-compress.jsonl"), true},
		{"checkpoint", readertest.File(t, "testdata/checkpoint-bump.json"), true},
		{"old checkpoint", `[{"role":"user","parts":[{"text":"hi"}]}]`, true},
		{"cut", long[:65536], true},
		{"cline history", readertest.File(t, "../cline/testdata/native-task/api_conversation_history.json"), false},
		{"cline ui messages", readertest.File(t, "../cline/testdata/native-task/ui_messages.json"), false},
		{"pi session", readertest.File(t, "../../../shared/testdata/sessions/pi/before-compaction.jsonl"), false},
		{"claude code line", `{"parentUuid":null,"sessionId":"x","type":"user","message":{"role":"user","content":"hi"}}`, false},
		{"empty", "", false},
	})
}

func TestExtraNamesKeptApart(t *testing.T) {
	// Members whose names the session reader would take for its own
	// fields (it ignores case), and those named as the extras this
	// reader sets itself, are renamed, not lost. Before, "Model" was kept
	// as it was and read back as the model, and the others were kept as
	// "gemini_<name>".
	meta := `{"sessionId":"s","projectHash":"p"}` + "\n"
	tr, err := Read([]byte(meta+`{"id":"a","type":"user","content":[{"text":"hi","ID":7}],"Model":"x","model":"y","unknownParts":1}`+"\n"), "t.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var m *compact.Message
	for _, e := range tr.Entries {
		if e.Message != nil && e.Message.Role == compact.RoleUser {
			m = e.Message
		}
	}
	if m == nil {
		t.Fatal("no user message")
	}
	if len(m.Content) != 1 {
		t.Errorf("parts %+v", m.Content)
	}
	readertest.CheckExtrasKeptApart(t, tr, m, "gemini-cli", "hi",
		map[string]string{"Model": `"x"`, "model": `"y"`, "unknownParts": "1"}, map[string]string{"ID": "7"})
}
