package codex

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/readertest"
)

func TestReadSamples(t *testing.T) {
	tests := []struct {
		file     string
		session  string
		model    string
		roles    map[compact.Role]int
		customs  map[string]int
		comps    int
		context  int
		injected int
	}{
		{
			file: "pomodoro.jsonl", session: "019a085e-04c1-7f81-a09e-9555f6a1fb40", model: "gpt-5-codex",
			// The environment context is a harness note (custom).
			roles:   map[compact.Role]int{compact.RoleUser: 3, compact.RoleCustom: 1, compact.RoleAssistant: 21, compact.RoleToolResult: 18},
			customs: map[string]int{"codex:session_meta": 1, "codex:turn_context": 21, "codex:event_msg": 68},
			context: 43, injected: 1,
		},
		{
			file: "exec-0.135.jsonl", session: "019e9625-802f-7e91-840a-cfe88d14117a", model: "gpt-5.5",
			// The developer message and the environment context are
			// harness notes.
			roles:   map[compact.Role]int{compact.RoleUser: 1, compact.RoleCustom: 2, compact.RoleAssistant: 1},
			customs: map[string]int{"codex:session_meta": 1, "codex:turn_context": 1, "codex:event_msg": 5},
			context: 4, injected: 1,
		},
		{
			file: "compaction-constructed.jsonl", session: "0199c3a0-1111-7222-8333-944455556666", model: "gpt-5-codex",
			roles:   map[compact.Role]int{compact.RoleUser: 3, compact.RoleCustom: 1, compact.RoleAssistant: 6, compact.RoleToolResult: 3},
			customs: map[string]int{"codex:session_meta": 1, "codex:turn_context": 2, "codex:event_msg": 9},
			// The last summary, then the prompt after it, the call, its
			// output and the answer.
			comps: 2, context: 5, injected: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			tr := readertest.ReadTestdata(t, ReadFile, tc.file)
			if tr.Format != Format || tr.SessionID != tc.session || tr.Model != tc.model || tr.Provider != "openai" || tr.Cwd == "" || tr.Timestamp == "" {
				t.Errorf("header: format %q session %q model %q provider %q cwd %q timestamp %q", tr.Format, tr.SessionID, tr.Model, tr.Provider, tr.Cwd, tr.Timestamp)
			}
			readertest.CheckRoles(t, tr, tc.roles)
			readertest.CheckCustoms(t, tr, tc.customs)
			comps, injected := 0, 0
			for _, e := range tr.Entries {
				if e.Kind == compact.KindCompaction {
					comps++
				}
				if e.Message != nil && e.Message.Extra["codexInjected"] != nil {
					injected++
				}
				if e.ParentID != "" {
					t.Errorf("entry %s has a parent: a rollout is linear", e.ID)
				}
			}
			if comps != tc.comps || injected != tc.injected {
				t.Errorf("%d compactions, %d injected messages; want %d, %d", comps, injected, tc.comps, tc.injected)
			}
			if len(tr.Warnings) != 0 || len(tr.Unknown) != 0 {
				t.Errorf("warnings %q unknown %v", tr.Warnings, tr.Unknown)
			}
			if n := readertest.CheckPairing(t, tr); n != tc.roles[compact.RoleToolResult] {
				t.Errorf("%d results paired", n)
			}
			for _, e := range tr.Entries {
				if m := e.Message; m != nil && m.Role == compact.RoleAssistant {
					if m.Usage == nil || m.Model != tc.model || m.Provider != "openai" || m.StopReason == "" {
						t.Errorf("assistant %s: usage %v model %q provider %q stop %q", e.Timestamp, m.Usage, m.Model, m.Provider, m.StopReason)
					}
				}
			}
			readertest.RoundTrip(t, tr, tc.context)
		})
	}
}

// assistants returns the assistant messages in order.
func assistants(tr *compact.Transcript) []*compact.Message {
	var out []*compact.Message
	for _, e := range tr.Entries {
		if e.Message != nil && e.Message.Role == compact.RoleAssistant {
			out = append(out, e.Message)
		}
	}
	return out
}

func TestUsage(t *testing.T) {
	tests := []struct {
		file  string
		index int // among the assistant messages
		want  compact.Usage
		stop  compact.StopReason
	}{
		// Codex 0.47 writes the count before the response's items and
		// repeats it after the tool output: each response still gets its
		// own, not its neighbour's.
		{"pomodoro.jsonl", 0, compact.Usage{Input: 4990, CacheRead: 0, Output: 108, Total: 5098}, compact.StopToolUse},
		{"pomodoro.jsonl", 1, compact.Usage{Input: 5153 - 4992, CacheRead: 4992, Output: 139, Total: 5292}, compact.StopToolUse},
		{"pomodoro.jsonl", 8, compact.Usage{Input: 9322 - 9216, CacheRead: 9216, Output: 429, Total: 9751}, compact.StopEnd},
		{"pomodoro.jsonl", 13, compact.Usage{Input: 11354 - 11136, CacheRead: 11136, Output: 294, Total: 11648}, compact.StopToolUse},
		{"pomodoro.jsonl", 20, compact.Usage{Input: 18733 - 18432, CacheRead: 18432, Output: 1123, Total: 19856}, compact.StopEnd},
		// Codex 0.135 writes it after the response.
		{"exec-0.135.jsonl", 0, compact.Usage{Input: 22539 - 20864, CacheRead: 20864, Output: 10, Total: 22549}, compact.StopEnd},
		// A count written between a call and its output.
		{"compaction-constructed.jsonl", 1, compact.Usage{Input: 8900 - 8192, CacheRead: 8192, Output: 310, Total: 9210}, compact.StopToolUse},
	}
	for _, tc := range tests {
		as := assistants(readertest.ReadTestdata(t, ReadFile, tc.file))
		m := as[tc.index]
		if m.Usage == nil || *m.Usage != tc.want || m.StopReason != tc.stop {
			t.Errorf("%s response %d: usage %+v stop %s, want %+v %s", tc.file, tc.index, m.Usage, m.StopReason, tc.want, tc.stop)
		}
		var raw map[string]int
		if err := json.Unmarshal(m.Extra["tokenUsage"], &raw); err != nil || raw["total_tokens"] != tc.want.Total {
			t.Errorf("%s response %d: stored usage %s", tc.file, tc.index, m.Extra["tokenUsage"])
		}
	}
}

func TestResponseParts(t *testing.T) {
	tr := readertest.ReadTestdata(t, ReadFile, "pomodoro.jsonl")
	as := assistants(tr)
	// Reasoning then a shell call, one message.
	first := as[0]
	if len(first.Content) != 2 || first.Content[0].Type != compact.PartThinking || first.Content[1].Type != compact.PartToolCall {
		t.Fatalf("first response parts %+v", first.Content)
	}
	if first.Content[0].Thinking == "" || first.Content[0].Extra["encrypted_content"] == nil {
		t.Errorf("reasoning: %q, extra %v", first.Content[0].Thinking, first.Content[0].Extra)
	}
	call := first.Content[1].ToolCall
	if call.Name != "shell" || call.ID != "call_Xadcaju55OrZk0cmKRlq1xCw" || !strings.HasPrefix(string(call.Arguments), `{"command":`) {
		t.Errorf("shell call %s %s %s", call.ID, call.Name, call.Arguments)
	}
	// apply_patch: the raw patch as {"input": ...}.
	patch := as[3].Content[1]
	var args map[string]string
	if err := json.Unmarshal(patch.ToolCall.Arguments, &args); err != nil || patch.ToolCall.Name != "apply_patch" ||
		!strings.HasPrefix(args["input"], "*** Begin Patch") || string(patch.Extra["customInput"]) != "true" {
		t.Errorf("apply_patch call %s %s extra %v", patch.ToolCall.Name, patch.ToolCall.Arguments, patch.Extra)
	}
	// Its output, and the environment context marked as injected.
	var sawOutput, sawEnv bool
	for _, e := range tr.Entries {
		m := e.Message
		if m == nil {
			continue
		}
		if m.Role == compact.RoleToolResult && m.ToolCallID == patch.ToolCall.ID {
			sawOutput = m.ToolName == "apply_patch" && strings.Contains(m.Text(), "A index.html")
		}
		if string(m.Extra["codexInjected"]) == `"environment_context"` {
			sawEnv = compact.IsHarnessNote(m) && m.Meta.CustomType == "harness:codex:environment_context" && strings.HasPrefix(m.Text(), "<environment_context>")
		}
	}
	if !sawOutput || !sawEnv {
		t.Errorf("patch output found %v, environment context marked %v", sawOutput, sawEnv)
	}
	// The last answer keeps the item's phase-less text.
	if got := as[20].Text(); !strings.HasPrefix(got, "Added a dedicated pause control") {
		t.Errorf("last answer %.40q", got)
	}
}

func TestDeveloperMessage(t *testing.T) {
	tr := readertest.ReadTestdata(t, ReadFile, "exec-0.135.jsonl")
	var dev *compact.Message
	for _, e := range tr.Entries {
		if e.Message != nil && string(e.Message.Extra["codexRole"]) == `"developer"` {
			dev = e.Message
		}
	}
	if dev == nil || !compact.IsHarnessNote(dev) || dev.Meta.CustomType != "harness:codex:developer" || dev.Text() != "[REDACTED_DEVELOPER_CONTEXT]" {
		t.Fatalf("developer message %+v", dev)
	}
	answer := assistants(tr)[0]
	if string(answer.Content[0].Extra["phase"]) != `"final_answer"` {
		t.Errorf("phase not kept: %v", answer.Content[0].Extra)
	}
}

func TestCompactions(t *testing.T) {
	tr := readertest.ReadTestdata(t, ReadFile, "compaction-constructed.jsonl")
	var comps []*compact.Entry
	next := map[*compact.Entry]string{} // the id of the entry after each compaction
	for i, e := range tr.Entries {
		if e.Kind == compact.KindCompaction {
			comps = append(comps, e)
			next[e] = tr.Entries[i+1].ID
		}
	}
	if len(comps) != 2 {
		t.Fatalf("%d compactions", len(comps))
	}
	old, nw := comps[0].Compaction, comps[1].Compaction
	if !strings.HasPrefix(old.Summary, "The user asked why the checkout test failed") || old.TokensBefore != 9460 ||
		old.FirstKeptID != next[comps[0]] || old.FirstKeptID == "" || old.Details["source"] != Format {
		t.Errorf("first compaction: %.40q before %d kept %s details %v", old.Summary, old.TokensBefore, old.FirstKeptID, old.Details)
	}
	hist, _ := nw.Details["replacementHistory"].([]any)
	if !strings.HasPrefix(nw.Summary, "Another language model started") || !strings.HasSuffix(nw.Summary, "TestTotalNegative covers refunds.") ||
		nw.TokensBefore != 2120 || nw.FirstKeptID != next[comps[1]] || nw.FirstKeptID == "" || len(hist) != 2 {
		t.Errorf("second compaction: %.40q before %d kept %s history %d", nw.Summary, nw.TokensBefore, nw.FirstKeptID, len(hist))
	}
	s := readertest.Import(t, tr, "c")
	ctx := s.Context()
	if ctx.Compaction == nil || ctx.Compaction.Compaction.Summary != nw.Summary || ctx.Messages[0].Role != compact.RoleCompactionSummary ||
		ctx.Messages[1].Text() != "Run all tests once more." {
		t.Errorf("context after the last compaction: %d messages", len(ctx.Messages))
	}
	// The local shell call and its output.
	shell := ctx.Messages[2].ToolCalls()
	if len(shell) != 1 || shell[0].Name != "local_shell" || shell[0].ID != "call_ls1" || ctx.Messages[3].ToolName != "local_shell" {
		t.Errorf("local shell call %+v", shell)
	}
}

func TestDetect(t *testing.T) {
	heads := append(readertest.FileHeads(t, true, 100, "testdata/*.jsonl"),
		readertest.FileHeads(t, false, 100, "../claudecode/testdata/*.jsonl", "../../../shared/testdata/sessions/pi/before-compaction.jsonl")...)
	heads = append(heads, []readertest.Head{
		{"empty", "", false},
		{"early rollout", `{"id":"x","timestamp":"2025-05-01T00:00:00Z","instructions":null}` + "\n", true},
		{"other envelope", `{"timestamp":"t","type":"other","payload":{}}` + "\n", false},
		{"claude line", `{"type":"user","uuid":"u","sessionId":"s","message":{}}` + "\n", false},
		{"request body", `{"model":"gpt-5","messages":[]}`, false},
		{"gemini cli session", `{"sessionId":"0ab8","projectHash":"9da8","startTime":"2026-04-23T12:52:52.759Z","kind":"main"}` + "\n", false},
		{"gemini cli session cut", `{"sessionId":"0ab8","projectHash":"9da8","sta`, false},
		{"gemini cli message", `{"id":"u1","timestamp":"t","type":"user","content":[{"text":"hi"}]}` + "\n", false},
	}...)
	readertest.CheckDetect(t, Detect, heads)
}
