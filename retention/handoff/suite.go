package handoff

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/numfmt"
	"github.com/compactkit/compact/retention"
	"github.com/compactkit/compact/session"
)

// DefaultSizes are the case lengths, in estimated tokens, the suite runs
// when Options.Sizes is empty: from a few hundred to well over 10,000.
// The two longest overflow the budget the extractive summarizer quotes
// user messages within.
var DefaultSizes = []int{500, 2000, 6000, 15000, 40000, 80000}

// DefaultSeeds is how many cases of each family and size the suite runs
// when Options.Seeds is 0.
const DefaultSeeds = 16

// Options say what the suite runs and with which summarizer.
type Options struct {
	// Summarizer writes the summaries; Name is what the report calls it.
	Summarizer compact.Summarizer
	Name       string
	// MaxTokens is the summary's output budget (compact.Request.MaxTokens),
	// 0 for none.
	MaxTokens int
	// Families, Sizes and Seeds choose the cases: every family, size and
	// seed from 1 to Seeds; empty or 0 means Families, DefaultSizes and
	// DefaultSeeds.
	Families []Family
	Sizes    []int
	Seeds    int
	// Cycles is how many times each case is compacted (DriftCycles when
	// 0, at most DriftCycles).
	Cycles int
}

func (o Options) withDefaults() Options {
	if len(o.Families) == 0 {
		o.Families = Families
	}
	if len(o.Sizes) == 0 {
		o.Sizes = DefaultSizes
	}
	if o.Seeds <= 0 {
		o.Seeds = DefaultSeeds
	}
	if o.Cycles <= 0 || o.Cycles > DriftCycles {
		o.Cycles = DriftCycles
	}
	if o.Name == "" {
		o.Name = "summarizer"
	}
	return o
}

// CaseResult is one case, scored after each compaction.
type CaseResult struct {
	Case       string  `json:"case"`
	Family     Family  `json:"family"`
	Size       int     `json:"size"`
	Seed       int64   `json:"seed"`
	Tokens     int     `json:"tokens"`
	KeepRecent int     `json:"keepRecent"`
	Cycles     []Score `json:"cycles"`
}

// Row sums the cases of one family and size at one cycle (from 1).
type Row struct {
	Family Family `json:"family"`
	Size   int    `json:"size"`
	Cycle  int    `json:"cycle"`
	Cases  int    `json:"cases"`
	// The tallies summed over the cases (without their missing lists).
	Items      retention.Recall `json:"items"`
	Final      retention.Recall `json:"final"`
	Superseded retention.Recall `json:"superseded"`
	Roles      retention.Recall `json:"roles"`
	// Shown is how many superseded decisions were shown as current.
	Shown int `json:"shownAsCurrent"`
	// Ratio is the mean of after as a share of before, in percent.
	Ratio float64 `json:"ratio"`
	// Grew counts the compactions that left the context no smaller,
	// Skipped those not written, CriticalKept the cases whose truth was
	// kept verbatim instead of summarized.
	Grew         int `json:"grew"`
	Skipped      int `json:"skipped"`
	CriticalKept int `json:"criticalKept"`
}

// ShownPercent is Shown as a share of the superseded decisions, 0 when
// there are none.
func (r *Row) ShownPercent() float64 {
	if r.Superseded.Total == 0 {
		return 0
	}
	return 100 * float64(r.Shown) / float64(r.Superseded.Total)
}

// Report is a run of the suite.
type Report struct {
	Summarizer string       `json:"summarizer"`
	Sizes      []int        `json:"sizes"`
	Seeds      int          `json:"seeds"`
	Cycles     int          `json:"cycles"`
	Rows       []Row        `json:"rows"`
	Cases      []CaseResult `json:"cases"`
}

// Run generates every case opts asks for, compacts each in memory
// (RunCase) and sums the scores into rows by family, size and cycle, in
// that order. It fails on the first compaction that fails.
func Run(ctx context.Context, opts Options) (*Report, error) {
	opts = opts.withDefaults()
	if opts.Summarizer == nil {
		return nil, errors.New("handoff: no summarizer")
	}
	rep := &Report{Summarizer: opts.Name, Sizes: opts.Sizes, Seeds: opts.Seeds, Cycles: opts.Cycles}
	for _, f := range opts.Families {
		for _, size := range opts.Sizes {
			rows := make([]Row, opts.Cycles)
			for i := range rows {
				rows[i] = Row{Family: f, Size: size, Cycle: i + 1}
			}
			for seed := int64(1); seed <= int64(opts.Seeds); seed++ {
				c := Generate(f, seed, size)
				res, err := RunCase(ctx, c, opts)
				if err != nil {
					return rep, err
				}
				rep.Cases = append(rep.Cases, res)
				for i, s := range res.Cycles {
					rows[i].add(s)
				}
			}
			for i := range rows {
				if rows[i].Cases > 0 {
					rows[i].Ratio /= float64(rows[i].Cases)
				}
			}
			rep.Rows = append(rep.Rows, rows...)
		}
	}
	return rep, nil
}

func (r *Row) add(s Score) {
	r.Cases++
	for _, p := range []struct{ to, from *retention.Recall }{{&r.Items, &s.Items}, {&r.Final, &s.Final}, {&r.Superseded, &s.Superseded}, {&r.Roles, &s.Roles}} {
		p.to.Found += p.from.Found
		p.to.Total += p.from.Total
	}
	r.Shown += len(s.Shown)
	r.Ratio += s.Ratio()
	if s.Grew {
		r.Grew++
	}
	if !s.Compacted {
		r.Skipped++
	}
	if s.CriticalKept {
		r.CriticalKept++
	}
}

// RunCase compacts case c in memory at its keep budget, then, for each
// further cycle, appends the case's next continuation and compacts
// again, scoring the rebuilt context after each compaction. A cycle with
// nothing to compact is scored on the context as it is (Compacted
// false). The case's transcript is read, not changed.
func RunCase(ctx context.Context, c *Case, opts Options) (CaseResult, error) {
	opts = opts.withDefaults()
	if opts.Summarizer == nil {
		return CaseResult{}, errors.New("handoff: no summarizer")
	}
	res := CaseResult{Case: c.Name(), Family: c.Family, Size: c.Size, Seed: c.Seed, Tokens: c.Tokens, KeepRecent: c.KeepRecent}
	mem, err := session.FromTranscript(&compact.Transcript{Entries: append([]*compact.Entry(nil), c.Transcript.Entries...)}, c.Name(), session.Options{})
	if err != nil {
		return res, fmt.Errorf("%s: %w", c.Name(), err)
	}
	eng := &compact.Engine{Summarizer: opts.Summarizer, KeepRecentTokens: c.KeepRecent}
	for cycle := range opts.Cycles {
		if cycle > 0 {
			if cycle-1 >= len(c.Continuations) {
				break
			}
			for _, m := range c.Continuations[cycle-1] {
				if _, err := mem.AppendMessage(ctx, m); err != nil {
					return res, fmt.Errorf("%s: cycle %d: %w", c.Name(), cycle+1, err)
				}
			}
		}
		before := compact.BuildContext(mem.Path())
		out, err := eng.Compact(ctx, mem, compact.Request{Reason: compact.ReasonManual, MaxTokens: opts.MaxTokens, Fallback: compact.FallbackOff})
		if err != nil && !errors.Is(err, compact.ErrNothingToCompact) {
			return res, fmt.Errorf("%s: cycle %d: %w", c.Name(), cycle+1, err)
		}
		s := ScoreContext(c, before, compact.BuildContext(mem.Path()))
		s.Compacted = err == nil && out != nil && out.Entry != nil
		s.Grew = s.Compacted && s.TokensAfter >= s.TokensBefore
		if cycle == 0 && out != nil && out.Plan != nil {
			s.CriticalKept = criticalKept(out.Plan, c.LastCritical)
		}
		res.Cycles = append(res.Cycles, s)
	}
	return res, nil
}

// criticalKept reports whether the entry id sits in the plan's kept part.
func criticalKept(p *compact.Plan, id string) bool {
	for i, e := range p.Path {
		if e.ID == id {
			return i >= p.FirstKeptIndex
		}
	}
	return false
}

// WriteTable writes the report as a table, one row per family, size and
// cycle: the share of ground-truth items present, of final decisions
// present, of superseded decisions absent or marked and of those shown
// as current, of roles kept with
// their owner, the mean compression, and the compactions that grew the
// context or were not written. A cell without anything to count is "-".
func WriteTable(w io.Writer, rep *Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "family\ttokens\tcycle\tcases\titems\tfinal decision\tsuperseded absent or marked\tsuperseded shown as current\troles\tafter/before\tcontext grew\tnot compacted")
	cell := func(t retention.Recall) string {
		if t.Total == 0 {
			return "-"
		}
		return fmt.Sprintf("%.0f%%", t.Percent())
	}
	for _, r := range rep.Rows {
		shown := "-"
		if r.Superseded.Total > 0 {
			shown = fmt.Sprintf("%.0f%% (%d/%d)", r.ShownPercent(), r.Shown, r.Superseded.Total)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%.1f%%\t%d\t%d\n", r.Family, numfmt.Thousands(r.Size), r.Cycle, r.Cases,
			cell(r.Items), cell(r.Final), cell(r.Superseded), shown, cell(r.Roles), r.Ratio, r.Grew, r.Skipped)
	}
	return tw.Flush()
}
