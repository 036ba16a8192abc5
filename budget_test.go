package compact

import (
	"context"
	"strings"
	"testing"
)

// A model's runaway answer is bounded by the output budget even when the
// window, and so the target, is unknown: the summary recorded (file lists
// apart) is at most MaxTokens, its headings kept, and the cut is reported.
func TestEngineSummaryHoldsOutputBudget(t *testing.T) {
	huge := "## Goal\n" + strings.Repeat("all work and no play ", 200000) + "\n## Next Steps\n1. " + strings.Repeat("z", 2_000_000)
	runaway := SummarizerFunc(func(ctx context.Context, req *SummaryRequest) (*Summary, error) {
		return &Summary{Text: huge, Summarizer: "runaway"}, nil
	})
	plain := func() *builder {
		var b builder
		for i := 0; i < 6; i++ {
			b.user(4000)
			b.assistant(4000)
		}
		return &b
	}
	for _, tt := range []struct {
		name string
		b    *builder
	}{{"history", plain()}, {"split turn", splitSession()}} {
		const budget = 1000
		log := NewSliceLog(tt.b.path()...)
		res, err := (&Engine{Summarizer: runaway}).Compact(context.Background(), log, Request{MaxTokens: budget})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		body := StripFileLists(res.Entry.Compaction.Summary)
		if got := tokensOf(body); got > budget {
			t.Errorf("%s: recorded a %d-token summary against a %d-token budget", tt.name, got, budget)
		}
		for _, h := range []string{"## Goal", "## Next Steps", "all work and no play"} {
			if !strings.Contains(body, h) {
				t.Errorf("%s: shortened summary lost %q", tt.name, h)
			}
		}
		if tt.name == "split turn" && !res.Plan.IsSplitTurn {
			t.Fatalf("fixture: the split-turn session was not cut inside a turn")
		}
		if res.Plan.IsSplitTurn && !strings.Contains(body, "The current turn began before the kept messages") {
			t.Errorf("%s: the turn prefix lost its introduction", tt.name)
		}

		adj := strings.Join(res.Adjustments, "; ")
		if !strings.Contains(adj, "summary shortened") || !strings.Contains(adj, "output budget of 1000") {
			t.Errorf("%s: adjustments %q", tt.name, adj)
		}
		if res.TokensAfter != Measure(BuildContext(log.Path())).Tokens {
			t.Errorf("%s: tokens after %d, rebuilt context %d", tt.name, res.TokensAfter, Measure(BuildContext(log.Path())).Tokens)
		}
	}
	// Within the budget nothing changes.
	log := NewSliceLog(splitSession().path()...)
	res, err := (&Engine{Summarizer: &recorder{}}).Compact(context.Background(), log, Request{MaxTokens: 1000})
	if err != nil || len(res.Adjustments) != 0 {
		t.Fatalf("err %v, adjustments %q", err, res.Adjustments)
	}
}

// Even a summary of nothing but headings stays within the budget.
func TestEngineBudgetHoldsForHeadings(t *testing.T) {
	headings := SummarizerFunc(func(ctx context.Context, req *SummaryRequest) (*Summary, error) {
		return &Summary{Text: strings.Repeat("## A heading that never ends\n", 5000)}, nil
	})
	res, err := (&Engine{Summarizer: headings}).Compact(context.Background(), NewSliceLog(splitSession().path()...), Request{MaxTokens: 300})
	if err != nil {
		t.Fatal(err)
	}
	if got := tokensOf(StripFileLists(res.Summary)); got > 300 {
		t.Fatalf("%d tokens recorded against a 300-token budget", got)
	}
}

// A single line longer than its section's share keeps its head.
func TestShortenSummaryCutsOneHugeLine(t *testing.T) {
	long := "## Goal\n" + strings.Repeat("é", 100000) + "\n## Next Steps\n1. ship\n"
	short := ShortenSummary(long, 500)
	if got := tokensOf(short); got > 500 {
		t.Fatalf("%d tokens", got)
	}
	if !strings.Contains(short, "éééé") || !strings.Contains(short, "[…]") || !strings.Contains(short, "## Next Steps") {
		t.Fatalf("shortened:\n%.300s", short)
	}
}
