package codex

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/readertest"
)

// The context Codex writes as user messages (<environment_context>,
// <user_instructions>, AGENTS.md instructions) and its developer messages
// are harness notes: a summary's Goal starts with the user's first real
// request and quotes none of them.
func TestInjectedContextNotTheUser(t *testing.T) {
	msg := func(role, text string) string {
		b, _ := json.Marshal(map[string]any{"type": "message", "role": role, "content": []map[string]string{{"type": "input_text", "text": text}}})
		return line("response_item", string(b))
	}
	synthetic := rollout(
		line("session_meta", meta),
		msg("developer", "<permissions instructions>\nApprovals are off.\n</permissions instructions>"),
		msg("user", "# AGENTS.md instructions for /w\n\n<INSTRUCTIONS>\nRun make lint before committing.\n</INSTRUCTIONS>"),
		msg("user", "<user_instructions>\nAlways answer in French.\n</user_instructions>"),
		msg("user", "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"),
		msg("user", "Add a --dry-run flag to the deploy script."),
		msg("assistant", "Added."),
	)
	tests := []struct {
		name  string
		read  func(t *testing.T) *compact.Transcript
		first string
		notes int
	}{
		{"pomodoro.jsonl", func(t *testing.T) *compact.Transcript { return readertest.ReadTestdata(t, ReadFile, "pomodoro.jsonl") },
			"Build a simple Pomodoro timer web app using HTML, CSS, and JavaScript.", 1},
		{"synthetic", func(t *testing.T) *compact.Transcript {
			tr, err := Read(synthetic, "rollout.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			return tr
		}, "Add a --dry-run flag to the deploy script.", 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := tc.read(t)
			var msgs []*compact.Message
			notes := 0
			for _, e := range tr.Entries {
				if m := e.Message; m != nil {
					msgs = append(msgs, m)
					if compact.IsHarnessNote(m) {
						notes++
					}
				}
			}
			if notes != tc.notes {
				t.Errorf("%d harness notes, want %d", notes, tc.notes)
			}
			sum := readertest.Summary(t, msgs)
			if !strings.Contains(sum, "## Goal\n- Initially: "+tc.first) {
				t.Errorf("Goal does not start with the first request %q:\n%.600s", tc.first, sum)
			}
			for _, h := range []string{"environment_context", "user_instructions", "AGENTS.md", "permissions instructions", "French"} {
				if strings.Contains(sum, h) {
					t.Errorf("summary quotes Codex's %q:\n%s", h, sum)
				}
			}
		})
	}
}
