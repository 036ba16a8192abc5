package handoff

import (
	"context"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/summarize/extractive"
)

// floor is what the offline summarizer achieves today on one family, at
// every size and every drift cycle: later improvements may only raise
// the shares and lower shown.
type floor struct {
	items, final, superseded, roles float64
	shown                           float64 // at most
}

var extractiveFloors = map[Family]floor{
	BuriedConstraint: {items: 100, final: 100, superseded: 100, roles: 100},
	DecisionOverride: {items: 100, final: 100, superseded: 26.9, roles: 100, shown: 30.8},
	Roles:            {items: 100, final: 100, superseded: 0, roles: 100},
	References:       {items: 70, final: 100, superseded: 100, roles: 100},
}

// TestSuiteExtractive runs the suite with the offline summarizer and holds
// it to what it does today (the table is in the log with -v).
func TestSuiteExtractive(t *testing.T) {
	rep, err := Run(context.Background(), Options{Summarizer: extractive.New(extractive.Options{}), Name: "extractive"})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteTable(&b, rep); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", b.String())
	if len(rep.Rows) != len(Families)*len(DefaultSizes)*DriftCycles || len(rep.Cases) != len(Families)*len(DefaultSizes)*DefaultSeeds {
		t.Fatalf("%d rows, %d cases", len(rep.Rows), len(rep.Cases))
	}
	for _, r := range rep.Rows {
		f := extractiveFloors[r.Family]
		if r.Items.Percent() < f.items || r.Final.Percent() < f.final || r.Superseded.Percent() < f.superseded ||
			r.Roles.Percent() < f.roles || r.ShownPercent() > f.shown {
			t.Errorf("%s %d cycle %d below today's floor %+v: items %.1f final %.1f superseded %.1f roles %.1f shown %.1f", r.Family, r.Size, r.Cycle, f,
				r.Items.Percent(), r.Final.Percent(), r.Superseded.Percent(), r.Roles.Percent(), r.ShownPercent())
		}
		if r.Grew != 0 || r.CriticalKept != 0 || r.Ratio <= 0 || r.Ratio >= 100 {
			t.Errorf("%s %d cycle %d: grew %d, critical turns kept %d, ratio %.1f", r.Family, r.Size, r.Cycle, r.Grew, r.CriticalKept, r.Ratio)
		}
		if r.Cycle == 1 && r.Skipped != 0 {
			t.Errorf("%s %d: the first compaction was not written in %d cases", r.Family, r.Size, r.Skipped)
		}
	}
}

// TestUncompactedContext: the whole conversation holds every item but the
// open items of the references family, which the truth writes resolved
// ("the lexer" where the user said "do what you did for the parser") and
// the conversation never does on one line. A handoff must resolve them.
func TestUncompactedContext(t *testing.T) {
	for _, f := range Families {
		for seed := int64(1); seed <= 8; seed++ {
			c := Generate(f, seed, 2000)
			ctx := compact.BuildContext(c.Transcript.Entries)
			s := ScoreContext(c, ctx, ctx)
			wantMissing := 0
			if f == References {
				wantMissing = 2
			}
			if len(s.Items.Missing) != wantMissing || s.Final.Percent() != 100 || s.Roles.Percent() != 100 {
				t.Errorf("%s: the conversation itself scores %+v", c, s)
			}
		}
	}
}

func TestRunErrors(t *testing.T) {
	if _, err := Run(context.Background(), Options{}); err == nil {
		t.Error("Run without a summarizer: no error")
	}
	if _, err := ParseFamily("roles"); err != nil {
		t.Error(err)
	}
	if _, err := ParseFamily("nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("ParseFamily(nope): %v", err)
	}
}
