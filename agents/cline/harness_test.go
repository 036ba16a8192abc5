package cline

import (
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/readertest"
)

// The environment details Cline and Roo Code append to every user message
// are the extension's notes: a summary neither takes them for the user's
// request nor quotes them.
func TestEnvironmentDetailsNotTheUser(t *testing.T) {
	tests := []struct {
		dir, first string
	}{
		{"xml-task", "The sum function in main.go returns the wrong result."},
		{"real-roo-mixed-ops", "Simulate a realistic development workflow"},
		{"real-cline-todo", "Create an impressive HTML 5 website"},
	}
	for _, tc := range tests {
		t.Run(tc.dir, func(t *testing.T) {
			sum := readertest.Summary(t, readertest.Messages(readertest.ReadTestdata(t, ReadFile, tc.dir)))
			// The summary indents the task's lines under its bullet.
			if !strings.Contains(sum, "## Goal\n- Initially: <task>\n  "+tc.first) {
				t.Errorf("Goal does not start with the task %q:\n%.600s", tc.first, sum)
			}
			for _, h := range []string{"environment_details", "# Current Working Directory", "# Current Time", "TODO LIST RECOMMENDED"} {
				if strings.Contains(sum, h) {
					t.Errorf("summary quotes the extension's %q:\n%s", h, sum)
				}
			}
		})
	}
}

// The preamble Cline and Roo Code write when an interrupted task is
// resumed is the extension's note; the user's words after it, in
// <user_message>, stay the user's, and a summary quotes those, never the
// preamble.
func TestTaskResumptionNotTheUser(t *testing.T) {
	roo := "[TASK RESUMPTION] This task was interrupted 3 minutes ago. It may or may not be complete, so please reassess the task context. " +
		"The current working directory is now '/home/dev/app'.\n\nNew instructions for task continuation:\n<user_message>\nAlso handle the empty input.\n</user_message>"
	bare := "[TASK RESUMPTION] This task was interrupted just now. It may or may not be complete, so please reassess the task context."
	synthetic := func(resume string) func(t *testing.T) *compact.Transcript {
		return func(t *testing.T) *compact.Transcript {
			return readHistory(t,
				map[string]any{"role": "user", "content": []map[string]any{{"type": "text", "text": "<task>\nWrite a parser for the config file.\n</task>"}}},
				map[string]any{"role": "assistant", "content": []map[string]any{{"type": "text", "text": "I wrote the parser."}}},
				map[string]any{"role": "user", "content": []map[string]any{{"type": "text", "text": resume},
					{"type": "text", "text": "<environment_details>\n# Current Mode\nACT MODE\n</environment_details>"}}},
				map[string]any{"role": "assistant", "content": []map[string]any{{"type": "text", "text": "Done."}}})
		}
	}
	tests := []struct {
		name   string
		read   func(t *testing.T) *compact.Transcript
		latest string // the user's last words; "" when the resumption has none
		notes  int    // the resumptions in the file
		prefix string // how the user's words after the last resumption begin
	}{
		{"xml-task", func(t *testing.T) *compact.Transcript { return readertest.ReadTestdata(t, ReadFile, "xml-task") },
			"Go on, put the empty case in TestSumEmpty.", 1, "Go on"},
		{"roo-wording", synthetic(roo), "Also handle the empty input.", 1, "Also handle"},
		{"no-new-words", synthetic(bare), "", 1, ""},
		// A real Roo Code task, resumed four times, whose preamble is
		// only "New instructions for task continuation:".
		{"real-roo-condensed", func(t *testing.T) *compact.Transcript {
			return readertest.ReadTestdata(t, ReadFile, "real-roo-condensed")
		}, "", 4, "J'aimerais que tu utiliser roo-state-manager"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := tc.read(t)
			var msgs []*compact.Message
			notes, words := 0, 0
			for _, e := range tr.Entries {
				m := e.Message
				if m == nil {
					continue
				}
				msgs = append(msgs, m)
				switch {
				case m.Role == compact.RoleUser && (strings.Contains(m.Text(), "[TASK RESUMPTION]") ||
					strings.Contains(m.Text(), "New instructions for task continuation") || strings.Contains(m.Text(), "user_message>")):
					t.Errorf("user message holds the resumption preamble: %.80q", m.Text())
				case m.Role == compact.RoleUser && tc.prefix != "" && strings.HasPrefix(m.Text(), tc.prefix):
					words++
				case compact.IsHarnessNote(m) && m.Meta.CustomType == "harness:cline:task_resumption":
					notes++
					if strings.Contains(m.Text(), "user_message") {
						t.Errorf("note = %.80q, want the preamble alone", m.Text())
					}
				}
			}
			if notes != tc.notes {
				t.Errorf("%d task_resumption notes, want %d", notes, tc.notes)
			}
			if want := min(1, len(tc.prefix)); words != want {
				t.Errorf("%d user messages beginning %q, want %d", words, tc.prefix, want)
			}
			sum := readertest.Summary(t, msgs)
			if strings.Contains(sum, "TASK RESUMPTION") || strings.Contains(sum, "user_message") ||
				strings.Contains(sum, "New instructions for task continuation") {
				t.Errorf("summary quotes the resumption preamble:\n%s", sum)
			}
			if tc.latest != "" && !strings.Contains(sum, "- Most recently: "+tc.latest) {
				t.Errorf("Goal does not end with the user's words %q:\n%s", tc.latest, sum)
			}
		})
	}
}

// The preamble before the user's feedback ("The user provided the
// following feedback:", "Feedback on the result:") is the extension's
// note; the words in <feedback> stay the user's, and a summary quotes
// them without the preamble or the tags.
func TestFeedbackPreambleNotTheUser(t *testing.T) {
	synthetic := func(t *testing.T) *compact.Transcript {
		return readHistory(t,
			map[string]any{"role": "user", "content": []map[string]any{{"type": "text", "text": "<task>\nWrite a parser for the config file.\n</task>"}}},
			map[string]any{"role": "assistant", "content": []map[string]any{{"type": "text", "text": "I wrote the parser."}}},
			map[string]any{"role": "user", "content": []map[string]any{{"type": "text", "text": "Feedback on the result:\n<feedback>\nIt must accept comments too.\n</feedback>"}}},
			map[string]any{"role": "assistant", "content": []map[string]any{{"type": "text", "text": "Done."}}})
	}
	tests := []struct {
		name, words string
		read        func(t *testing.T) *compact.Transcript
	}{
		{"native-task", "the store has no remove yet, see the screenshot",
			func(t *testing.T) *compact.Transcript { return readertest.ReadTestdata(t, ReadFile, "native-task") }},
		{"feedback on the result", "It must accept comments too.", synthetic},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var msgs []*compact.Message
			notes, words := 0, 0
			for _, e := range tc.read(t).Entries {
				m := e.Message
				if m == nil {
					continue
				}
				msgs = append(msgs, m)
				switch {
				case m.Role == compact.RoleUser && strings.Contains(m.Text(), "feedback"):
					t.Errorf("user message holds the feedback preamble or tags: %.80q", m.Text())
				case m.Role == compact.RoleUser && m.Text() == tc.words:
					words++
				case compact.IsHarnessNote(m) && m.Meta.CustomType == "harness:cline:feedback":
					notes++
				}
			}
			if notes != 1 || words != 1 {
				t.Errorf("%d feedback notes and %d user messages %q, want 1 and 1", notes, words, tc.words)
			}
			sum := readertest.Summary(t, msgs)
			if !strings.Contains(sum, "- Most recently: "+tc.words) || strings.Contains(sum, "feedback") {
				t.Errorf("Goal does not end with the feedback %q alone:\n%s", tc.words, sum)
			}
		})
	}
}
