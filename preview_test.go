package compact_test

import (
	"context"
	"errors"
	"testing"

	"github.com/compactkit/compact"
)

// TestPreviewMatchesSingleLadders: Preview gives, for every strategy,
// the pass a dry run of a ladder holding that strategy alone gives.
func TestPreviewMatchesSingleLadders(t *testing.T) {
	for _, name := range []string{"large-session.jsonl", "before-compaction.jsonl"} {
		s := loadFixture(t, name)
		ctx := context.Background()
		strategies := []compact.Strategy{compact.StripImages{}, compact.Mask{}, compact.Truncate{}, compact.Prune{}, compact.ClearToolUses{}}
		got, err := compact.Preview(ctx, s.Path(), strategies)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(strategies) {
			t.Fatalf("%d reports for %d strategies", len(got), len(strategies))
		}
		edited := 0
		for i, st := range strategies {
			res, err := compact.Ladder{Strategies: []compact.Strategy{st}}.Run(ctx, s, 0, true)
			if err != nil {
				t.Fatal(err)
			}
			want := res.Passes[0]
			g := got[i]
			if g.Strategy != want.Strategy || g.TokensBefore != want.TokensBefore || g.TokensAfter != want.TokensAfter ||
				g.CacheBreakIndex != want.CacheBreakIndex || (g.Edit == nil) != (want.Edit == nil) {
				t.Errorf("%s %s: Preview %+v, ladder %+v", name, st.Name(), g, want)
			}
			if g.Edit != nil {
				edited++
				if len(g.Edit.Edits) != len(want.Edit.Edits) || g.Edit.TokensFreed != want.Edit.TokensFreed {
					t.Errorf("%s %s: %d edits freeing %d, ladder %d freeing %d", name, st.Name(), len(g.Edit.Edits), g.Edit.TokensFreed, len(want.Edit.Edits), want.Edit.TokensFreed)
				}
			}
		}
		if edited == 0 {
			t.Errorf("%s: no strategy edited anything; the comparison proves little", name)
		}
	}
}

// TestPreviewEach: PreviewEach hands over the reports Preview returns,
// one per strategy in order, and stops at the first error of its
// callback, returning it.
func TestPreviewEach(t *testing.T) {
	s := loadFixture(t, "large-session.jsonl")
	ctx := context.Background()
	strategies := []compact.Strategy{compact.Mask{}, compact.Truncate{}, compact.Prune{}}
	want, err := compact.Preview(ctx, s.Path(), strategies)
	if err != nil {
		t.Fatal(err)
	}
	var got []compact.PassReport
	if err := compact.PreviewEach(ctx, s.Path(), strategies, func(r compact.PassReport) error {
		got = append(got, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d reports, Preview %d", len(got), len(want))
	}
	for i := range got {
		if got[i].Strategy != want[i].Strategy || got[i].TokensAfter != want[i].TokensAfter || got[i].CacheBreakIndex != want[i].CacheBreakIndex {
			t.Errorf("report %d: %+v, Preview %+v", i, got[i], want[i])
		}
	}
	stop := errors.New("enough")
	calls := 0
	err = compact.PreviewEach(ctx, s.Path(), strategies, func(compact.PassReport) error {
		calls++
		return stop
	})
	if err != stop || calls != 1 {
		t.Errorf("error %v after %d calls, want %v after 1", err, calls, stop)
	}
}
