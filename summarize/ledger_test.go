package summarize

import (
	"context"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/summarize/extractive"
)

// TestHybridSummary: by default a history summary is the model's story
// followed by the record the summarizer keeps itself; the prompt tells
// the model not to copy it; a previous summary's record is merged into
// the new one instead of being shown to the model; a turn prefix gets
// no record.
func TestHybridSummary(t *testing.T) {
	bash := func(id, cmd string) *compact.Message {
		m := assistant("")
		m.Content = append(m.Content, compact.Part{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: id, Name: "bash", Arguments: []byte(`{"command":"` + cmd + `"}`)}})
		return m
	}
	out := func(id, text string) *compact.Message {
		m := compact.TextMessage(compact.RoleToolResult, text)
		m.ToolCallID, m.ToolName = id, "bash"
		return m
	}
	msgs := []*compact.Message{
		user("Make the importer accept gzip files. Never load the whole file into memory."),
		bash("c1", "go test ./importer"),
		out("c1", "--- FAIL: TestGzip (0.00s)\n    importer_test.go:41: unexpected EOF\nFAIL\nCommand exited with code 1"),
		user("Keep the old flag names."),
		assistant("Streaming the reader through gzip.NewReader now."),
	}
	f := &fake{}
	s, _ := newTest(t, f, model200k, func(o *Options) { o.NoLedger = false })
	prev := "## Goal\n- Earlier goal\n\n" + extractive.LedgerHeading + "\n\n### User messages (newest first)\n- Port the importer to Go."
	sum, err := s.Summarize(context.Background(), &compact.SummaryRequest{Kind: compact.SummaryHistory, Messages: msgs, PreviousSummary: prev})
	if err != nil {
		t.Fatal(err)
	}
	reqs := f.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	p := reqs[0].Prompt
	if !strings.Contains(p, "compact attaches a record it keeps itself") {
		t.Error("the prompt does not tell the model about the record")
	}
	if running := between(p, "<running-summary>\n", "\n</running-summary>"); strings.Contains(running, extractive.LedgerHeading) || !strings.Contains(running, "Earlier goal") {
		t.Errorf("running summary shown to the model:\n%s", running)
	}
	story, ledger := extractive.SplitLedger(sum.Text)
	if story != handover("summary 1", p) {
		t.Errorf("the model's part:\n%s", story)
	}
	for _, want := range []string{
		"- Keep the old flag names.",
		"- Make the importer accept gzip files. Never load the whole file into memory.",
		"- Port the importer to Go.", // from the previous record
		"Open: `go test ./importer` (exit 1)",
	} {
		if !strings.Contains(ledger, want) {
			t.Errorf("the record lacks %q:\n%s", want, ledger)
		}
	}
	if !strings.HasSuffix(sum.Text, ledger) {
		t.Error("the record does not follow the model's text")
	}
	if maxTokens, _ := s.MaxTokens(compact.SummaryHistory, 0); reqs[0].MaxTokens >= maxTokens {
		t.Errorf("the model was given the whole output budget (%d) beside a record", reqs[0].MaxTokens)
	}

	// A turn prefix is the model's alone.
	f2 := &fake{}
	s2, _ := newTest(t, f2, model200k, func(o *Options) { o.NoLedger = false })
	sum2, err := s2.Summarize(context.Background(), &compact.SummaryRequest{Kind: compact.SummaryTurnPrefix, Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sum2.Text, extractive.LedgerHeading) || strings.Contains(f2.requests()[0].Prompt, "compact attaches a record") {
		t.Errorf("a turn prefix got a record:\n%s", sum2.Text)
	}
}
