package extractive

import (
	"context"
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/golden"
	"github.com/compactkit/compact/internal/testing/sharedtest"
	"github.com/compactkit/compact/session"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// fixturePlan loads a pi session and plans a compaction with the default
// options, giving what the engine would summarize.
func fixturePlan(t testing.TB, name string) *compact.Plan {
	t.Helper()
	s, err := session.Open(sharedtest.PiSession(t, name), session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := compact.PlanCompaction(s.Path(), compact.PlanOptions{})
	if err != nil {
		t.Fatalf("plan %s: %v", name, err)
	}
	return plan
}

func historyRequest(p *compact.Plan) *compact.SummaryRequest {
	return &compact.SummaryRequest{
		Kind: compact.SummaryHistory, Messages: p.Messages, PreviousSummary: p.PreviousSummary,
		ReadFiles: p.ReadFiles, ModifiedFiles: p.ModifiedFiles,
	}
}

// checkGolden compares got with testdata/NAME.golden (see golden.Check).
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name+".golden"), []byte(got+"\n"), *update)
}

// syntheticConversation exercises every rule at once.
func syntheticConversation() *compact.SummaryRequest {
	return &compact.SummaryRequest{
		Kind: compact.SummaryHistory,
		Messages: []*compact.Message{
			user("Add a `--json` flag to the report command. Output must stay byte-for-byte stable, and don't add dependencies."),
			assistant("I'll read the command first.", call("r1", "read", map[string]any{"path": "cmd/report.go"})),
			result("r1", "read", "package main\n...", false),
			assistant("", call("t1", "todo_write", map[string]any{"todos": []map[string]any{
				{"content": "Add the flag", "status": "in_progress"},
				{"content": "Encode the report as JSON", "status": "pending"},
				{"content": "Test stability", "status": "pending"},
			}})),
			result("t1", "todo_write", "Todos updated", false),
			assistant("I'll use encoding/json rather than a third-party encoder, since no new dependencies are allowed.",
				call("e1", "edit", map[string]any{"path": "cmd/report.go", "oldText": "a", "newText": "b"})),
			result("e1", "edit", "Successfully replaced text.", false),
			assistant("", call("b1", "bash", map[string]any{"command": "go test ./cmd/..."})),
			result("b1", "bash", "--- FAIL: TestReportJSON (0.00s)\n    report_test.go:31: map order differs\nFAIL\nCommand exited with code 1", true),
			user("Remember: keys must be sorted. Avoid reflection if you can."),
			assistant("", call("w1", "write", map[string]any{"path": "cmd/report_json.go", "content": "package main"})),
			result("w1", "write", "Wrote 12 bytes.", false),
			assistant("", call("t2", "todo_write", map[string]any{"todos": []map[string]any{
				{"content": "Add the flag", "status": "completed"},
				{"content": "Encode the report as JSON", "status": "completed"},
				{"content": "Test stability", "status": "in_progress"},
				{"content": "Document the flag in README", "status": "pending"},
			}})),
			result("t2", "todo_write", "Todos updated", false),
			userBash("git diff --stat", " cmd/report.go | 12 +++++---", intp(0), false),
			assistant("The flag and the encoder are in place; keys are sorted by building the object from a sorted slice.\n\nThe stability test still fails on Windows line endings, so the next step is to normalize them before comparing."),
		},
		Instructions:  "keep the JSON output stable",
		ModifiedFiles: []string{"cmd/report.go", "cmd/report_json.go"},
		ReadFiles:     []string{"cmd/report.go"},
	}
}

func TestGoldenSynthetic(t *testing.T) {
	out := run(t, New(Options{}), syntheticConversation())
	checkGolden(t, "synthetic", out)

	req := syntheticConversation()
	req.PreviousSummary = out
	req.Messages = []*compact.Message{user("Now document it."), assistant("Documented the flag in README.")}
	checkGolden(t, "synthetic-merged", run(t, New(Options{}), req))

	req = syntheticConversation()
	req.Kind = compact.SummaryTurnPrefix
	checkGolden(t, "synthetic-turn-prefix", run(t, New(Options{}), req))
}

func TestGoldenFixtures(t *testing.T) {
	for _, tt := range []struct{ file, golden string }{
		{"large-session.jsonl", "large-session"},
		{"before-compaction.jsonl", "before-compaction"},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			plan := fixturePlan(t, tt.file)
			out := run(t, New(Options{}), historyRequest(plan))
			checkGolden(t, tt.golden, out)
			if again := run(t, New(Options{}), historyRequest(plan)); again != out {
				t.Fatal("second run differs")
			}
			for _, h := range historyHeadings {
				if !strings.Contains(out, h+"\n") {
					t.Errorf("heading %q missing", h)
				}
			}
			mustNotContain(t, out, "<read-files>", "<modified-files>")
			if plan.IsSplitTurn {
				turn := run(t, New(Options{}), &compact.SummaryRequest{Kind: compact.SummaryTurnPrefix, Messages: plan.TurnPrefix})
				checkGolden(t, tt.golden+"-turn-prefix", turn)
			}
		})
	}
}

// TestFixturePreviousSummaryKept checks on a summary written by pi that
// every line of text of the previous summary is still in the merged one.
func TestFixturePreviousSummaryKept(t *testing.T) {
	plan := fixturePlan(t, "before-compaction.jsonl")
	if plan.PreviousSummary == "" {
		t.Fatal("expected a previous summary in before-compaction.jsonl")
	}
	out := run(t, New(Options{}), historyRequest(plan))
	for _, line := range strings.Split(plan.PreviousSummary, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if n := headingLevel(line); n > 0 {
			line = strings.TrimSpace(line[n:])
		}
		if !strings.Contains(out, line) {
			t.Errorf("previous summary line lost: %q", line)
		}
	}
}

func TestFixtureMaxTokens(t *testing.T) {
	for _, file := range sharedtest.PiSessions() {
		plan := fixturePlan(t, file)
		for _, max := range []int{500, 2000, 4000} {
			req := historyRequest(plan)
			req.MaxTokens = max
			out := run(t, New(Options{}), req)
			if got := tokens(out); got > max {
				t.Errorf("%s with MaxTokens %d: %d tokens", file, max, got)
			}
			for _, h := range historyHeadings {
				if !strings.Contains(out, h+"\n") {
					t.Errorf("%s with MaxTokens %d: heading %q missing", file, max, h)
				}
			}
		}
	}
}

func BenchmarkSummarize(b *testing.B) {
	for _, tt := range []struct{ file, name string }{
		{"large-session.jsonl", "large-session"},
		{"before-compaction.jsonl", "before-compaction"},
	} {
		b.Run(tt.name, func(b *testing.B) {
			plan := fixturePlan(b, tt.file)
			req := historyRequest(plan)
			s := New(Options{})
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := s.Summarize(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
