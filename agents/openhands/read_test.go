package openhands

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/readertest"
)

func TestReadFiles(t *testing.T) {
	readertest.RunSamples(t, ReadFile, Format, []readertest.Sample{
		{
			File:  "basic.json",
			Roles: map[compact.Role]int{compact.RoleUser: 1, compact.RoleAssistant: 2, compact.RoleToolResult: 1},
			Model: "claude-3-5-sonnet-20241022", Context: 4,
			Check: func(t *testing.T, tr *compact.Transcript) {
				a := tr.Entries[1]
				want := compact.Usage{Input: 4, Output: 1135, CacheWrite: 3482, Total: 4621}
				if a.ID != "3" || a.Message.Usage == nil || *a.Message.Usage != want {
					t.Errorf("usage of event 3 = %+v, want %+v", a.Message.Usage, want)
				}
				finish := tr.Entries[3].Message.ToolCalls()
				if len(finish) != 1 || finish[0].Name != "finish" {
					t.Errorf("finish call = %+v", finish)
				}
			},
		},
		{
			File:    "basic_gui_mode.json",
			Roles:   map[compact.Role]int{compact.RoleUser: 1, compact.RoleAssistant: 5, compact.RoleToolResult: 4},
			Customs: map[string]int{"openhands:agent_state_changed": 4, "openhands:change_agent_state": 1, "openhands:null": 3},
			Model:   "claude-3-5-sonnet-20241022", Cwd: "/workspace", Context: 10,
			Check: func(t *testing.T, tr *compact.Transcript) {
				if tr.Cwd != "/workspace" || tr.Timestamp != "2025-01-20T20:29:13.519Z" {
					t.Errorf("cwd %q timestamp %q", tr.Cwd, tr.Timestamp)
				}
				var failed *compact.Message
				for _, e := range tr.Entries {
					if e.ID == "14" {
						failed = e.Message
					}
				}
				if failed == nil || !failed.IsError || failed.ToolName != "execute_bash" {
					t.Errorf("event 14 (success false) = %+v", failed)
				}
				var ev map[string]json.RawMessage
				if err := json.Unmarshal(failed.Extra["openhandsEvent"], &ev); err != nil || string(ev["cause"]) != "13" || ev["content"] != nil {
					t.Errorf("observation kept without its content: %v %v", ev, err)
				}
			},
		},
		{
			File:  "basic_interactions.json",
			Roles: map[compact.Role]int{compact.RoleUser: 3, compact.RoleAssistant: 3},
			Model: "gpt-4o-2024-08-06", Context: 6,
			Check: func(t *testing.T, tr *compact.Transcript) {
				u := tr.Entries[5].Message.Usage
				if u == nil || *u != (compact.Usage{Input: 169, Output: 10, CacheRead: 2304, Total: 2483}) {
					t.Errorf("OpenAI usage (cached tokens) = %+v", u)
				}
			},
		},
		{
			File:     "condensation.json",
			Roles:    map[compact.Role]int{compact.RoleUser: 1, compact.RoleAssistant: 3, compact.RoleToolResult: 3, compact.RoleBash: 1, compact.RoleCustom: 1},
			Customs:  map[string]int{"openhands:system": 1, "openhands:recall": 2, "openhands:frobnicate": 1},
			Unknown:  map[string]int{"frobnicate": 1},
			Warnings: 1,
			Model:    "claude-sonnet-4-20250514",
			Cwd:      "/workspace",
			// summary, the kept bash run, the think call and result, the
			// orphan result, the finish call.
			Context: 6,
			Check: func(t *testing.T, tr *compact.Transcript) {
				byID := map[string]*compact.Entry{}
				for _, e := range tr.Entries {
					byID[e.ID] = e
				}
				if byID["5"] != nil {
					t.Error("the second action of a response has its own entry")
				}
				a := byID["4"].Message
				calls := a.ToolCalls()
				if len(calls) != 2 || calls[0].ID != "toolu_c1" || calls[1].ID != "toolu_c2" || string(calls[1].Arguments) != `{"command": "view", "path": "/workspace/app.py"}` {
					t.Errorf("grouped calls = %+v", calls)
				}
				var events []json.RawMessage
				if err := json.Unmarshal(a.Extra["openhandsEvents"], &events); err != nil || len(events) != 2 {
					t.Errorf("action events kept: %d (%v)", len(events), err)
				}
				if u := a.Usage; u == nil || *u != (compact.Usage{Input: 10, Output: 120, CacheWrite: 5190, Total: 5320}) {
					t.Errorf("usage = %+v", u)
				}
				img := byID["1"].Message.Content
				if len(img) != 2 || img[1].Type != compact.PartImage || img[1].Image.MimeType != "image/png" {
					t.Errorf("user image = %+v", img)
				}
				b := byID["8"].Message
				if b.Role != compact.RoleBash || b.Metadata().Command != "python -m pytest -q" || b.Metadata().Output != "F\n1 failed in 0.02s" || b.Metadata().ExitCode == nil || *b.Metadata().ExitCode != 1 {
					t.Errorf("user command = %+v", b)
				}
				comp := byID["10"]
				if comp.Kind != compact.KindCompaction || comp.Compaction.FirstKeptID != "8" || comp.Compaction.TokensBefore != 5320 ||
					!strings.HasPrefix(comp.Compaction.Summary, "USER_CONTEXT:") || comp.Compaction.Details["forgottenEventsEndId"] != int64(7) {
					t.Errorf("compaction = %+v", comp.Compaction)
				}
				think := byID["11"].Message
				if think.Content[0].Type != compact.PartThinking || think.Model != "gpt-4.1" || think.Usage.CacheRead != 1800 || think.Usage.Input != 300 {
					t.Errorf("think response = %+v usage %+v", think.Content, think.Usage)
				}
				orphan := byID["14"].Message
				if !compact.IsHarnessNote(orphan) || orphan.Text() != "[tool result without its call: str_replace_editor (toolu_gone); it reports an error]\nERROR: the call was lost" ||
					!strings.Contains(tr.Warnings[0], `"toolu_gone"`) {
					t.Errorf("orphan = %s %q, warnings %q", orphan.Role, orphan.Text(), tr.Warnings)
				}
			},
		},
		{
			File:  "session/5f1b2c3d/events",
			Roles: map[compact.Role]int{compact.RoleUser: 1, compact.RoleAssistant: 2, compact.RoleToolResult: 1},
			Model: "claude-3-5-sonnet-20241022", Session: "5f1b2c3d", Context: 4,
		},
		{
			File:  "session/5f1b2c3d/events/3.json",
			Roles: map[compact.Role]int{compact.RoleUser: 1, compact.RoleAssistant: 2, compact.RoleToolResult: 1},
			Model: "claude-3-5-sonnet-20241022", Session: "5f1b2c3d", Context: 4,
		},
		{
			File:  "session/5f1b2c3d",
			Roles: map[compact.Role]int{compact.RoleUser: 1, compact.RoleAssistant: 2, compact.RoleToolResult: 1},
			Model: "claude-3-5-sonnet-20241022", Session: "5f1b2c3d", Context: 4,
		},
	}, nil)
}

func TestReadErrors(t *testing.T) {
	readertest.RunBad(t, Read, "x.json", []readertest.Bad{
		{Body: `{"a":1} x`, Err: "x.json:1: data after the JSON object"},
		{Body: `"x"`, Err: "x.json:1: not a JSON array"},
		{Body: "[\n{\"id\": 0, \"action\": \"message\", \"args\": {}},\n{\"id\": \"one\", \"action\": \"message\"}\n]", Err: "x.json:3: event 1.id: not an integer"},
		{Body: `[{"id":0,"action":"message","args":{"content":5}}]`, Err: "x.json:1: event 0.args.content: not a string"},
		{Body: `[{"id":0,"action":"message","args":[1]}]`, Err: "x.json:1: event 0.args: not a JSON object"},
		{Body: `[{"id":0,"source":"agent","action":"run","tool_call_metadata":{"function_name":"x"}}]`, Err: "x.json:1: event 0.tool_call_metadata.tool_call_id: missing"},
		{Body: `[{"id":0,"source":"agent","action":"condensation","args":{"summary":"s"}}]`, Err: "x.json:1: event 0.args: neither forgotten_event_ids"},
		{Body: `[{"id":0,"observation":"run","content":{}}]`, Err: "x.json:1: event 0.content: not a string"},
		{Body: `[7]`, Err: "x.json:1: event 0: not a JSON object"},
		{Body: "[\n{\"id\": 0,", Err: "x.json:2: truncated JSON"},
	}, nil)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "0.json"), []byte(`{"id":0,"source":"user","action":"message","args":{"content":"hi"}}`), 0o644)
	os.WriteFile(filepath.Join(dir, "1.json"), []byte("{\"id\":1,\n\"source\":"), 0o644)
	if _, err := ReadFile(dir); err == nil || !strings.HasPrefix(err.Error(), filepath.Join(dir, "1.json")+":2: truncated JSON") {
		t.Errorf("bad event file: %v", err)
	}
	if _, err := ReadFile(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no numbered event files") {
		t.Errorf("empty folder: %v", err)
	}
}

func TestReadCases(t *testing.T) {
	// A stream without ids, with an event that is neither action nor
	// observation, a condense observation and an agent message with an
	// image by URL.
	body := `[{"source":"user","action":"message","args":{"content":"go"}},
{"source":"agent","action":"message","args":{"content":"look","image_urls":["https://x/y.png"]}},
{"source":"environment","note":"odd"},
{"source":"agent","observation":"condense","content":"earlier work summarized"},
{"source":"user","action":"message","args":{"content":"next"}}]`
	tr, err := Read([]byte(body), "c.json")
	if err != nil {
		t.Fatal(err)
	}
	if got := readertest.Customs(tr); !reflect.DeepEqual(got, map[string]int{"openhands:event": 1}) || tr.Unknown["event"] != 1 {
		t.Errorf("customs %v unknown %v", got, tr.Unknown)
	}
	a := tr.Entries[1].Message
	if a.Role != compact.RoleAssistant || a.Content[1].Text != "[image: https://x/y.png]" {
		t.Errorf("agent message = %+v", a.Content)
	}
	comp := tr.Entries[3]
	if comp.Kind != compact.KindCompaction || comp.Compaction.Summary != "earlier work summarized" || comp.Compaction.FirstKeptID != "" {
		t.Errorf("condense = %+v", comp.Compaction)
	}
	ids := map[string]bool{}
	for _, e := range tr.Entries {
		if e.ID == "" || ids[e.ID] {
			t.Errorf("entry id %q empty or repeated", e.ID)
		}
		ids[e.ID] = true
	}
	readertest.RoundTrip(t, tr, 2) // the summary, then "next"
}

func TestDetect(t *testing.T) {
	heads := readertest.FileHeads(t, true, 120, "testdata/basic.json", "testdata/basic_gui_mode.json", "testdata/basic_interactions.json", "testdata/condensation.json", "testdata/session/5f1b2c3d/events/4.json")
	heads = append(heads, readertest.Heads(false, ``, `[]`, `[{"role":"user","content":"x"}]`, `{"type":"session"}`, `[{"id":1,"timestamp":"t","source":"user"}]`, `{"kind":"ActionEvent","source":"agent","action":{}}`)...)
	heads = append(heads, readertest.Heads(true, `[{"id": 0, "timestamp": "2025", "source": "user", "message": "very long`, `{"action":"run","source":"agent"`, "[\n  {\n    \"observation\": \"run\", \"id\": 2")...)
	readertest.CheckDetect(t, Detect, heads)
	readertest.DetectsNone(t, Detect, []string{"../../../shared/testdata/sessions/pi/before-compaction.jsonl"},
		"../requestbody/testdata/*.json", "../sweagent/testdata/*.traj")
}

func TestDetectDir(t *testing.T) {
	tests := []struct {
		path string
		want bool
	}{
		{"testdata/session/5f1b2c3d", true},
		{"testdata/session/5f1b2c3d/events", true},
		{"testdata/session", false},
		{"testdata", false},
		{"testdata/none", false},
	}
	for _, tc := range tests {
		if got := DetectDir(tc.path); got != tc.want {
			t.Errorf("DetectDir(%s) = %v", tc.path, got)
		}
	}
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "1.json"), []byte(`{"messages":[]}`), 0o644)
	if DetectDir(other) {
		t.Error("DetectDir accepts a folder of numbered files that are not events")
	}
}

// FuzzRead checks that Read never panics. The seeds are whole files, so
// run it with -fuzzminimizetime 1x: minimizing a large interesting input
// otherwise takes most of the fuzzing time.
func FuzzRead(f *testing.F) {
	readertest.SeedFiles(f, "testdata/*.json", 0)
	f.Add([]byte(`[{"id":1,"source":"agent","action":"condensation","args":{"forgotten_event_ids":[0,5]}},{"id":1,"observation":"run","cause":1}]`))
	readertest.FuzzDetectRead(f, "fuzz.json", Detect, Read)
}

// BenchmarkRead reads the package's largest test file; the benchmark
// reports its throughput.
func BenchmarkRead(b *testing.B) {
	readertest.BenchRead(b, "testdata/basic_gui_mode.json", Read)
}
