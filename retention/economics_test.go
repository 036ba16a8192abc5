package retention

import (
	"context"
	"math"
	"testing"

	"github.com/compactkit/compact"
)

var (
	sonnet = &compact.Prices{Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75, CacheWrite1h: 6}
	haiku  = &compact.Prices{Input: 1, Output: 5, CacheRead: 0.10, CacheWrite: 1.25, CacheWrite1h: 2}
)

// fig is a dollar figure for the table: nil for unknown.
func fig(v float64) *float64 { return &v }

func TestEconomics(t *testing.T) {
	r := &Result{TokensBefore: 100000, TokensAfter: 20000}
	summary := &compact.Usage{Input: 2000, CacheRead: 90000, Output: 1500}
	tests := []struct {
		name                 string
		usage                *compact.Usage
		summaryPrices, model *compact.Prices
		// All by hand: the summary at Haiku's prices 2,000 × $1 + 90,000
		// × $0.10 + 1,500 × $5 = $0.0185; 80,000 tokens removed at
		// Sonnet's $0.30 cached ($0.024) or $3 ($0.24); the 20,000 kept
		// rewritten at $3.75 - $0.30 ($0.069).
		compaction, cached, uncached, rewrite *float64
		breakEven                             int
	}{
		{"model summary", summary, haiku, sonnet, fig(0.0185), fig(0.024), fig(0.24), fig(0.069), 4},      // (0.0185+0.069)/0.024 = 3.6
		{"offline summary", nil, &compact.Prices{}, sonnet, fig(0), fig(0.024), fig(0.24), fig(0.069), 3}, // 0.069/0.024 = 2.9
		{"summary model unpriced", summary, nil, sonnet, nil, fig(0.024), fig(0.24), fig(0.069), 0},
		{"session model unpriced", summary, haiku, nil, fig(0.0185), nil, nil, nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := economics(r, tc.usage, tc.summaryPrices, tc.model)
			for _, f := range []struct {
				name      string
				got, want *float64
			}{{"compaction", e.Compaction, tc.compaction}, {"saved cached", e.SavedCached, tc.cached},
				{"saved uncached", e.SavedUncached, tc.uncached}, {"rewrite", e.Rewrite, tc.rewrite}} {
				switch {
				case (f.got == nil) != (f.want == nil):
					t.Errorf("%s = %v, want %v (nil: unknown)", f.name, f.got, f.want)
				case f.got != nil && math.Abs(*f.got-*f.want) > 1e-12:
					t.Errorf("%s = $%v, want $%v", f.name, *f.got, *f.want)
				}
			}
			if e.BreakEven != tc.breakEven || e.TokensRemoved != 80000 {
				t.Errorf("break-even %d, removed %d; want %d, 80000", e.BreakEven, e.TokensRemoved, tc.breakEven)
			}
		})
	}
	if e := economics(r, summary, haiku, nil); e.Usage != (Tokens{Input: 2000, CacheRead: 90000, Output: 1500}) {
		t.Errorf("usage %+v", e.Usage)
	}
}

// Measure prices every row: the summarizer's reported usage at the
// summary prices, the cheap strategies free, the savings at the session's
// prices.
func TestMeasurePricesRows(t *testing.T) {
	sum := usageSummarizer{usage: compact.Usage{Input: 1000, Output: 200}}
	rs, err := Measure(context.Background(), "crafted", crafted(), Options{KeepRecent: []int{1000}, Summarizer: sum, Name: "fixed",
		Cheap: true, Prices: sonnet, SummaryPrices: haiku})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].Cost == nil || rs[1].Cost == nil {
		t.Fatalf("rows %+v", rs)
	}
	// 1,000 × $1 + 200 × $5.
	if c := rs[0].Cost.Compaction; c == nil || math.Abs(*c-0.002) > 1e-12 {
		t.Errorf("summary row costs %v, want $0.002", c)
	}
	if c := rs[1].Cost.Compaction; rs[1].Method != CheapMethod || c == nil || *c != 0 {
		t.Errorf("cheap row costs %v, want $0", c)
	}
	for _, r := range rs {
		removed := r.TokensBefore - r.TokensAfter
		if r.Cost.TokensRemoved != removed || r.Cost.SavedCached == nil || math.Abs(*r.Cost.SavedCached-float64(removed)*0.30/1e6) > 1e-12 {
			t.Errorf("%s: %+v, want %d tokens removed at $0.30", r.Method, r.Cost, removed)
		}
	}
}

// usageSummarizer writes a fixed summary and reports usage, as a model
// summarizer does.
type usageSummarizer struct{ usage compact.Usage }

func (s usageSummarizer) Summarize(ctx context.Context, req *compact.SummaryRequest) (*compact.Summary, error) {
	u := s.usage
	return &compact.Summary{Text: "Work so far: the build was fixed.", Summarizer: "fixed", Usage: &u}, nil
}
