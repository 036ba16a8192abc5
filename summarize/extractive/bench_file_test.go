package extractive

import (
	"context"
	"os"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/session"
)

// benchSessionEnv names a pi session file for BenchmarkSummarizeFile
// (for instance one made with internal/cmd/bigsession).
const benchSessionEnv = "COMPACT_BENCH_SESSION"

// fileRequests plans a compaction of the session at path as "compact
// run" does with its defaults (keep 20,000 tokens, summary budget 0.8 of
// the default reserve) and returns the requests the engine would send:
// the history, and the turn prefix when the cut splits a turn.
func fileRequests(b *testing.B, path string) []*compact.SummaryRequest {
	b.Helper()
	s, err := session.Open(path, session.Options{})
	if err != nil {
		b.Fatal(err)
	}
	plan, err := compact.PlanCompaction(s.Path(), compact.PlanOptions{})
	if err != nil {
		b.Fatalf("plan %s: %v", path, err)
	}
	reserve := compact.DefaultReserveTokens
	maxTokens := int(0.8 * float64(reserve))
	var reqs []*compact.SummaryRequest
	if len(plan.Messages) > 0 {
		req := historyRequest(plan)
		req.MaxTokens = maxTokens
		req.FirstRequest = firstRequestBefore(plan)
		reqs = append(reqs, req)
	}
	if plan.IsSplitTurn && len(plan.TurnPrefix) > 0 {
		reqs = append(reqs, &compact.SummaryRequest{Kind: compact.SummaryTurnPrefix, Messages: plan.TurnPrefix,
			ReadFiles: plan.ReadFiles, ModifiedFiles: plan.ModifiedFiles, MaxTokens: maxTokens / 2})
	}
	return reqs
}

// firstRequestBefore is the session's first user message when it lies
// before the summarized span, as the engine passes it.
func firstRequestBefore(plan *compact.Plan) *compact.Message {
	for i, e := range plan.Path {
		if e.IsContextMessage() && e.Message.Role == compact.RoleUser {
			if i < plan.SpanStart {
				return e.Message
			}
			return nil
		}
	}
	return nil
}

// BenchmarkSummarizeFile times the summaries "compact run" would have the
// extractive summarizer write for the session named by
// $COMPACT_BENCH_SESSION; loading and planning are not timed. Writing
// the summaries to $COMPACT_BENCH_OUT (when set) lets two versions'
// outputs be compared byte for byte.
func BenchmarkSummarizeFile(b *testing.B) {
	path := os.Getenv(benchSessionEnv)
	if path == "" {
		b.Skip("set " + benchSessionEnv + " to a pi session file to run this benchmark")
	}
	reqs := fileRequests(b, path)
	if len(reqs) == 0 {
		b.Skip("nothing to summarize in " + path)
	}
	s := New(Options{})
	ctx := context.Background()
	var out []byte
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		out = out[:0]
		for _, req := range reqs {
			sum, err := s.Summarize(ctx, req)
			if err != nil {
				b.Fatal(err)
			}
			out = append(out, sum.Text...)
			out = append(out, "\n\x00\n"...)
		}
	}
	b.StopTimer()
	if dst := os.Getenv("COMPACT_BENCH_OUT"); dst != "" {
		if err := os.WriteFile(dst, out, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}
