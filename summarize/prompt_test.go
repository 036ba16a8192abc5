package summarize

import (
	"context"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

func TestPromptSelection(t *testing.T) {
	var (
		historyHeadings = []string{"## Goal", "## Constraints & Preferences", "## Progress", "### Done",
			"### In Progress", "### Blocked", "## Key Decisions", "## Next Steps", "## Critical Context"}
		prefixHeadings = []string{"## Turn Request", "## Work So Far in This Turn", "## Context for the Kept Messages"}
		historyMark    = "Write the hand-over notes for the session"
		updateMark     = "Rewrite it into one record that covers both"
		prefixMark     = "the opening part of one turn"
		prefixUpdMark  = "covers the beginning of this same turn"
		focusMark      = "with a particular focus"
	)
	tests := []struct {
		name         string
		req          compact.SummaryRequest
		want, absent []string
	}{
		{"initial", compact.SummaryRequest{},
			append([]string{historyMark, "<transcript>\n[user]\nhello\n</transcript>"}, historyHeadings...),
			[]string{updateMark, prefixMark, "<running-summary>", "<focus>", focusMark, "## Turn Request"}},
		{"update", compact.SummaryRequest{PreviousSummary: "## Goal\n- old goal\n\n<read-files>\na.go\n</read-files>"},
			append([]string{updateMark, "<running-summary>\n## Goal\n- old goal\n</running-summary>\n\n<transcript>"}, historyHeadings...),
			[]string{historyMark, prefixMark, "<read-files>", "<focus>"}},
		{"first request summarized before", compact.SummaryRequest{PreviousSummary: "## Goal\n- a port", FirstRequest: user("port the parser to Go")},
			[]string{updateMark, "<running-summary>\n" + firstRequestLabel + "port the parser to Go\n\n## Goal\n- a port\n</running-summary>"}, nil},
		{"first request quoted already", compact.SummaryRequest{PreviousSummary: "## Goal\n- port the parser to Go", FirstRequest: user("port the parser to Go")},
			[]string{"<running-summary>\n## Goal\n- port the parser to Go\n</running-summary>"}, []string{firstRequestLabel}},
		{"turn prefix", compact.SummaryRequest{Kind: compact.SummaryTurnPrefix},
			append([]string{prefixMark}, prefixHeadings...),
			[]string{historyMark, updateMark, prefixUpdMark, "## Goal", "<running-summary>"}},
		{"instructions as focus", compact.SummaryRequest{Instructions: "  keep the parser details </focus> \n"},
			[]string{historyMark, focusMark, "<focus>\nkeep the parser details <\\/focus>\n</focus>"}, nil},
		{"prefix with instructions", compact.SummaryRequest{Kind: compact.SummaryTurnPrefix, Instructions: "db schema"},
			[]string{prefixMark, "<focus>\ndb schema\n</focus>"}, []string{"## Goal"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fake{}
			s, _ := newTest(t, f, model200k, nil)
			req := tt.req
			req.Messages = []*compact.Message{user("hello")}
			sum, err := s.Summarize(context.Background(), &req)
			if err != nil {
				t.Fatal(err)
			}
			reqs := f.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			r := reqs[0]
			if r.System != SystemPrompt() || r.Model != "big-200k" {
				t.Errorf("system or model wrong: model %q", r.Model)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.Prompt, w) {
					t.Errorf("prompt lacks %q", w)
				}
			}
			for _, a := range tt.absent {
				if strings.Contains(r.Prompt, a) {
					t.Errorf("prompt has %q", a)
				}
			}
			// The task comes after the data.
			if strings.Index(r.Prompt, "</transcript>") > strings.Index(r.Prompt, "Use these headings") {
				t.Error("task text before the transcript")
			}
			if sum.Text != handover("summary 1", r.Prompt) || sum.Summarizer != "big-200k" || sum.Usage == nil || sum.Usage.Input != 10 {
				t.Errorf("summary = %+v", sum)
			}
		})
	}
}

func TestSystemPrompt(t *testing.T) {
	sys := SystemPrompt()
	for _, w := range []string{"Do not reply", "cannot call tools", "characters cut"} {
		if !strings.Contains(sys, w) {
			t.Errorf("system prompt lacks %q", w)
		}
	}
}

func TestCleanSummary(t *testing.T) {
	tests := []struct{ in, want string }{
		{"  ## Goal\n- x\n\n", "## Goal\n- x"},
		{"```markdown\n## Goal\n- x\n```", "## Goal\n- x"},
		{"## Goal\n- x\n\n<read-files>\na.go\n</read-files>\n<modified-files>\nb.go\n</modified-files>", "## Goal\n- x"},
		{"   ", ""},
	}
	for _, tt := range tests {
		if got := cleanSummary(tt.in); got != tt.want {
			t.Errorf("cleanSummary(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
