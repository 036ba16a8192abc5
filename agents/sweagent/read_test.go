package sweagent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/readertest"
)

func TestReadFiles(t *testing.T) {
	readertest.RunSamples(t, ReadFile, Format, []readertest.Sample{
		{
			File:    "function-calling.traj",
			Roles:   map[compact.Role]int{compact.RoleUser: 1, compact.RoleAssistant: 4, compact.RoleToolResult: 4},
			Customs: map[string]int{"swe-agent:environment": 1, "swe-agent:replay_config": 1, "swe-agent:system": 1, "swe-agent:trajectory": 1, "swe-agent:info": 1},
			Model:   "gpt-4o", Cwd: "/SWE-agent__test-repo",
			Check: func(t *testing.T, tr *compact.Transcript) {
				a := tr.Entries[4].Message
				calls := a.ToolCalls()
				if a.Role != compact.RoleAssistant || len(calls) != 1 || calls[0].ID != "call_fJuazlMUN5fQDQ73G6XSpYpx" || calls[0].Name != "find_file" ||
					string(calls[0].Arguments) != `{"file_name":"missing_colon.py"}` || a.StopReason != compact.StopToolUse || a.Model != "gpt-4o" {
					t.Errorf("first action = %+v %+v", a, calls)
				}
				if got := string(a.Extra["action"]); got != `"find_file missing_colon.py"` {
					t.Errorf("action extra = %s", got)
				}
				res := tr.Entries[5].Message
				if res.Role != compact.RoleToolResult || res.ToolName != "find_file" || !strings.HasPrefix(res.Text(), "Found 1 matches") ||
					string(res.Extra["message_type"]) != `"observation"` {
					t.Errorf("first observation = %s %s %.40q %v", res.Role, res.ToolName, res.Text(), res.Extra)
				}
				info := tr.Entries[len(tr.Entries)-1]
				var v struct {
					ExitStatus string `json:"exit_status"`
					Stats      struct {
						TokensSent int `json:"tokens_sent"`
						APICalls   int `json:"api_calls"`
					} `json:"model_stats"`
				}
				if err := json.Unmarshal(info.Metadata().Data, &v); err != nil || info.Metadata().CustomType != "swe-agent:info" || v.ExitStatus != "submitted" || v.Stats.TokensSent != 7141 || v.Stats.APICalls != 5 {
					t.Errorf("info entry = %s %+v %v", info.Metadata().CustomType, v, err)
				}
				var steps []json.RawMessage
				if err := json.Unmarshal(tr.Entries[len(tr.Entries)-2].Metadata().Data, &steps); err != nil || len(steps) != 5 {
					t.Errorf("trajectory entry holds %d steps (%v)", len(steps), err)
				}
			},
		},
		{
			File:    "thought-action.traj",
			Roles:   map[compact.Role]int{compact.RoleUser: 6, compact.RoleAssistant: 5},
			Customs: map[string]int{"swe-agent:environment": 1, "swe-agent:system": 1, "swe-agent:trajectory": 1, "swe-agent:info": 1},
			Cwd:     "/klieret__swe-agent-test-repo",
			Check: func(t *testing.T, tr *compact.Transcript) {
				demo := tr.Entries[2].Message
				if demo.Role != compact.RoleUser || string(demo.Extra["is_demo"]) != "true" {
					t.Errorf("demonstration = %s %v", demo.Role, demo.Extra)
				}
				a := tr.Entries[4].Message
				if a.Role != compact.RoleAssistant || len(a.ToolCalls()) != 0 || a.StopReason != compact.StopEnd || !strings.Contains(a.Text(), "```\nfind_file \"missing_colon.py\"\n```") {
					t.Errorf("first answer = %s %q", a.Role, a.Text())
				}
				obs := tr.Entries[5].Message
				if obs.Role != compact.RoleUser || !strings.HasPrefix(obs.Text(), "Found 1 matches") {
					t.Errorf("first observation = %s %.40q", obs.Role, obs.Text())
				}
			},
		},
		{
			File:    "demonstration.traj",
			Roles:   map[compact.Role]int{compact.RoleUser: 1, compact.RoleAssistant: 5, compact.RoleToolResult: 5},
			Customs: map[string]int{"swe-agent:system": 1},
		},
	}, func(t *testing.T, _ string, tr *compact.Transcript) {
		for i, e := range tr.Entries {
			if e.Message != nil && e.Message.Usage != nil {
				t.Errorf("entry %d has usage %+v; a trajectory records only run totals", i, e.Message.Usage)
			}
		}
	})
}

func TestReadCases(t *testing.T) {
	readertest.RunCases(t, Read, "x.traj", []readertest.Case{
		{
			Name: "thinking, images and an orphan observation",
			Body: `{"history":[{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBO"}},{"type":"audio"}],"message_type":"observation"},
{"role":"assistant","content":"","thinking_blocks":[{"type":"thinking","thinking":"hmm","signature":"sig"},{"type":"redacted_thinking","data":"xx"}],"tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"ls"}}],"message_type":"action"},
{"role":"tool","content":"a.py","tool_call_ids":["c1"]},
{"role":"tool","content":"lost","tool_call_ids":["c9"]},
{"role":"reviewer","content":"ok"}],"extra":1}`,
			Roles:    map[compact.Role]int{compact.RoleUser: 1, compact.RoleAssistant: 1, compact.RoleToolResult: 1, compact.RoleCustom: 1},
			Unknown:  map[string]int{"audio part": 1, "reviewer": 1, "extra": 1},
			Warnings: []string{`x.traj: tool call "c1": arguments are not a JSON object`, `x.traj:4: tool result for call "c9"`},
			Check: func(t *testing.T, tr *compact.Transcript) {
				u := tr.Entries[1].Message
				if len(u.Content) != 3 || u.Content[1].Type != compact.PartImage || u.Content[1].Image.Data != "iVBO" || u.Content[2].Text != "[audio]" {
					t.Errorf("user parts = %+v", u.Content)
				}
				a := tr.Entries[2].Message
				if len(a.Content) != 3 || a.Content[0].Thinking != "hmm" || string(a.Content[0].Extra["thinkingSignature"]) != `"sig"` ||
					string(a.Content[1].Extra["redacted"]) != "true" || string(a.ToolCalls()[0].Arguments) != `{"_raw":"ls"}` {
					t.Errorf("assistant parts = %+v", a.Content)
				}
				orphan := tr.Entries[4].Message
				if !compact.IsHarnessNote(orphan) || orphan.Text() != "[tool result without its call: c9]\nlost" || string(orphan.Extra["tool_call_ids"]) != `["c9"]` {
					t.Errorf("orphan = %s %q %v", orphan.Role, orphan.Text(), orphan.Extra)
				}
			},
		},
		{
			Name:  "retry agent without a top-level copy",
			Body:  `{"attempts":[{"history":[{"role":"user","content":"first"}]},{"history":[{"role":"user","content":"second"},{"role":"assistant","content":"done"}]}]}`,
			Roles: map[compact.Role]int{compact.RoleUser: 1, compact.RoleAssistant: 1},
			Check: func(t *testing.T, tr *compact.Transcript) {
				if tr.Entries[0].Metadata().CustomType != "swe-agent:attempts" || tr.Entries[1].Message.Text() != "second" {
					t.Errorf("entries: %s, %q", tr.Entries[0].Metadata().CustomType, tr.Entries[1].Message.Text())
				}
			},
		},
		{
			Name:  "replay_config as a string and state as a string",
			Body:  `{"trajectory":[{"state":"{\"working_dir\": \"/repo\"}"}],"history":[{"role":"user","content":"x"}],"replay_config":"{\"agent\":{\"model\":{\"name\":\"claude-sonnet-4\"}}}"}`,
			Roles: map[compact.Role]int{compact.RoleUser: 1},
			Check: func(t *testing.T, tr *compact.Transcript) {
				if tr.Model != "claude-sonnet-4" || tr.Cwd != "/repo" {
					t.Errorf("model %q cwd %q", tr.Model, tr.Cwd)
				}
			},
		},
	})
}

func TestReadErrors(t *testing.T) {
	readertest.RunBad(t, Read, "x.traj", []readertest.Bad{
		{Body: `[]`, Err: "x.traj:1: not a JSON object"},
		{Body: `{"info":{}}`, Err: "x.traj:1: field history: missing"},
		{Body: `{"history":{}}`, Err: "x.traj:1: field history: not an array"},
		{Body: "{\n\"history\": [\n  {\"role\": \"user\", \"content\": \"a\"},\n  {\"content\": \"b\"}\n]}", Err: "x.traj:4: history[1].role: missing"},
		{Body: `{"history":[{"role":"user","content":7}]}`, Err: "x.traj:1: history[0].content: neither a string nor a list"},
		{Body: `{"history":[{"role":"assistant","content":"","tool_calls":[{"function":{"name":"x"}}]}]}`, Err: "x.traj:1: history[0].tool_calls[0].id: missing"},
		{Body: `{"history":[{"role":"assistant","content":"","tool_calls":[{"id":"c","function":{"name":"x","arguments":5}}]}]}`, Err: "x.traj:1: history[0].tool_calls[0].function.arguments: not a string"},
		{Body: `{"history":[{"role":"tool","content":"","tool_call_ids":"c"}]}`, Err: "x.traj:1: history[0].tool_call_ids: not an array of strings"},
		{Body: `{"history":[{"role":"user","content":[{"text":"a"}]}]}`, Err: "x.traj:1: history[0].content[0].type: missing"},
		{Body: "{\n\"history\": [", Err: "x.traj:2: truncated JSON"},
	}, nil)
}

func TestDetect(t *testing.T) {
	heads := readertest.FileHeads(t, true, 100, "testdata/*.traj")
	heads = append(heads, readertest.Heads(false, ``, `[{"history":[]}]`, `{"history":"x"}`, `{"type":"session","history":[]}`, `{"model":"m","messages":[],"history":[]}`, `{"info":{}}`)...)
	heads = append(heads, readertest.Heads(true, `{"environment":"main","trajectory":[`, `{"attempts":[{"history"`, "{\n  \"history\": [\n    {")...)
	readertest.CheckDetect(t, Detect, heads)
	readertest.DetectsNone(t, Detect, []string{"../../../shared/testdata/sessions/pi/before-compaction.jsonl"},
		"../requestbody/testdata/*.json", "../openhands/testdata/*.json", "../openhands/testdata/*/*.json")
}

// FuzzRead checks that Read never panics. The seeds are whole files, so
// run it with -fuzzminimizetime 1x: minimizing a large interesting input
// otherwise takes most of the fuzzing time.
func FuzzRead(f *testing.F) {
	readertest.SeedFiles(f, "testdata/*.traj", 0)
	f.Add([]byte(`{"history":[{"role":"assistant","thinking_blocks":[{}],"tool_calls":[{"id":"a","function":{}}]},{"role":"tool","tool_call_ids":["a","b"]}]}`))
	readertest.FuzzDetectRead(f, "fuzz.traj", Detect, Read)
}

// BenchmarkRead reads the package's largest test file; the benchmark
// reports its throughput.
func BenchmarkRead(b *testing.B) {
	readertest.BenchRead(b, "testdata/thought-action.traj", Read)
}
