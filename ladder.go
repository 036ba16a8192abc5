package compact

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// DefaultLadder is the order in which the cheap strategies are tried by
// default: images first (large and rarely needed again), then masking of
// old tool output, then head-and-tail truncation.
func DefaultLadder() []Strategy {
	return []Strategy{StripImages{}, Mask{}, Truncate{}}
}

// Strategies returns every cheap strategy at its zero-value defaults, in
// the order a report lists them: the default ladder's (strip_images,
// mask, truncate), then prune and clear_tool_uses. It is the one list of
// the strategies; StrategyByName looks names up in it.
func Strategies() []Strategy {
	return append(DefaultLadder(), Prune{}, ClearToolUses{})
}

// StrategyByName returns the strategy of Strategies named name, with its
// zero-value defaults: "strip_images", "mask", "truncate", "prune" or
// "clear_tool_uses".
func StrategyByName(name string) (Strategy, error) {
	all := Strategies()
	names := make([]string, len(all))
	for i, s := range all {
		if s.Name() == name {
			return s, nil
		}
		names[i] = s.Name()
	}
	return nil, fmt.Errorf("unknown strategy %q (want %s or %s)", name, strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
}

// PassReport says what one strategy of a ladder did.
type PassReport struct {
	// Strategy is the strategy's name.
	Strategy string
	// Edit is the pass, nil when the strategy had nothing worth doing.
	Edit *ContextEdit
	// Entry is the context_edit entry appended for the pass; nil for a
	// dry run or a skipped strategy.
	Entry *Entry
	// TokensBefore and TokensAfter are the measured context around the
	// pass.
	TokensBefore, TokensAfter int
	// CacheBreakIndex is the index, in the context before the pass, of
	// the first message the pass changed: the provider's prompt cache is
	// rewritten from there. -1 when nothing changed.
	CacheBreakIndex int
}

// LadderResult is the outcome of Ladder.Run.
type LadderResult struct {
	Passes []PassReport
	// TokensBefore and TokensAfter are the context before the first pass
	// and after the last.
	TokensBefore, TokensAfter int
	// Target is the size the ladder tried to get under (0: none, every
	// strategy ran).
	Target int
	// UnderTarget is true when the context ended under Target.
	UnderTarget bool
}

// Ladder runs cheap strategies in order, re-measuring after each, and
// stops as soon as the context is under the target. The zero value runs
// DefaultLadder.
type Ladder struct {
	// Strategies in the order to try; nil means DefaultLadder().
	Strategies []Strategy
}

// Run plans each strategy on the log's current path and, unless dryRun,
// appends every pass as a context_edit entry before planning the next. A
// dry run plans each strategy on the path as the earlier passes would
// leave it, and writes nothing. With target 0 every strategy runs.
//
// Each pass is its own append, so a failure part-way (a strategy that
// cannot plan, a failed append, a cancelled ctx) can come after earlier
// passes were recorded. Run then returns the partial result together
// with the error: its Passes are the passes recorded before the failure
// (each with its Entry), and TokensAfter is the context they leave. The
// failed pass is not among them; an append that fails writes nothing, so
// the log holds exactly the entries of the returned passes. The result
// is nil only when nothing was measured.
func (l Ladder) Run(ctx context.Context, log Log, target int, dryRun bool) (*LadderResult, error) {
	strategies := l.Strategies
	if strategies == nil {
		strategies = DefaultLadder()
	}
	path := log.Path()
	res := &LadderResult{Target: target}
	before := BuildContext(path)
	res.TokensBefore = Measure(before).Tokens
	res.TokensAfter = res.TokensBefore
	fail := func(err error) (*LadderResult, error) {
		res.UnderTarget = target > 0 && res.TokensAfter <= target
		return res, err
	}
	for _, s := range strategies {
		if target > 0 && res.TokensAfter <= target {
			break
		}
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		u := Measure(before)
		ce, _, err := planOn(s, path, before, StrategyEnv{Usage: u, Target: target}, false, nil)
		if err != nil {
			return fail(fmt.Errorf("%s: %w", s.Name(), err))
		}
		rep := planReport(s, ce, u, before)
		if ce != nil && len(ce.Edits) > 0 {
			entry := NewContextEditEntry(ce)
			if dryRun {
				// The next strategy sees the path as this pass leaves it.
				if entry.ID == "" {
					entry.ID = fmt.Sprintf("dry-run-%d", len(res.Passes))
				}
				if len(path) > 0 {
					entry.ParentID = path[len(path)-1].ID
				}
				path = append(path[:len(path):len(path)], entry)
			} else {
				if err := log.Append(ctx, entry); err != nil {
					return fail(fmt.Errorf("record %s pass: %w", s.Name(), err))
				}
				rep.Entry = entry
				path = log.Path()
			}
			before = BuildContext(path) // the context the next strategy sees
			rep.TokensAfter = Measure(before).Tokens
			res.TokensAfter = rep.TokensAfter
		}
		res.Passes = append(res.Passes, rep)
	}
	res.UnderTarget = target > 0 && res.TokensAfter <= target
	return res, nil
}

// planReport is the report of strategy s's pass ce, planned on the
// context c measured at u, before the pass is applied (TokensAfter is
// still TokensBefore): the cache breaks at the first message it changes.
func planReport(s Strategy, ce *ContextEdit, u ContextUsage, c *Context) PassReport {
	rep := PassReport{Strategy: s.Name(), Edit: ce, TokensBefore: u.Tokens, TokensAfter: u.Tokens, CacheBreakIndex: -1}
	if ce != nil && len(ce.Edits) > 0 {
		rep.CacheBreakIndex = slices.Index(c.EntryIDs, ce.FirstChangedID)
	}
	return rep
}

// tokensAfter returns what Measure gives on the context of path with ce
// appended as its last entry, c being the context of path and u its
// measure. Unless ce edits a pinned message, it does so without building
// that context: only the edited messages after the last usable report are
// counted again, and the report is lowered by what ce frees, as Measure
// does for every pass recorded after a report. An edit of a pinned message
// (which the strategies of this package never make) changes what the
// pins themselves add, so the context is then built.
//
// saved, when not nil, holds for each edit of ce the tokens it frees
// (a figures pass, whose edits carry no content): an edited message then
// counts its estimate less that.
func tokensAfter(path []*Entry, c *Context, u ContextUsage, ce *ContextEdit, saved []int) int {
	for _, ed := range ce.Edits {
		if c.pinned[ed.TargetID] {
			entry := NewContextEditEntry(ce)
			entry.ID = "preview-" + ce.Strategy
			if len(path) > 0 {
				entry.ParentID = path[len(path)-1].ID
			}
			return Measure(BuildContext(append(path[:len(path):len(path)], entry))).Tokens
		}
	}
	editOf := editsByIndex(c, ce.Edits, u.LastUsageIndex+1)
	usage := u.UsageTokens
	if ce.TokensFreed > 0 && u.LastUsageIndex >= 0 {
		usage = max(usage-ce.TokensFreed, 0)
	}
	trailing := 0
	var sent sendFilter // as the Meter counts: only what the model is sent
	for i := u.LastUsageIndex + 1; i < len(c.Messages); i++ {
		m := c.Messages[i]
		if !sent.keep(m) {
			continue
		}
		k, ok := editOf(i)
		switch {
		case !ok || (i == 0 && c.Compaction != nil):
			trailing += m.Tokens()
		case saved != nil:
			trailing += m.Tokens() - saved[k]
		default:
			edited := *m
			edited.Content = ce.Edits[k].Content
			edited.ResetTokens()
			trailing += edited.Tokens()
		}
	}
	return usage + trailing
}

// editsByIndex returns a lookup of the edit that applies to the message at
// each index of c from from on, by its index in edits, the later edit of
// an entry winning. Edits in context order, one per entry (as this
// package's strategies make them), are matched in one walk over the
// context; others go through a map of their targets.
func editsByIndex(c *Context, edits []Edit, from int) func(i int) (int, bool) {
	from = min(max(from, 0), len(c.Messages))
	at := make([]int32, len(c.Messages)-from) // 1 + index in edits
	j := 0
	for i, id := range c.EntryIDs {
		if j < len(edits) && id == edits[j].TargetID {
			j++
			if i >= from {
				at[i-from] = int32(j)
			}
		}
	}
	if j < len(edits) {
		byID := make(map[string]int, len(edits))
		for k, ed := range edits {
			byID[ed.TargetID] = k
		}
		return func(i int) (int, bool) {
			k, ok := byID[c.EntryIDs[i]]
			return k, ok
		}
	}
	return func(i int) (int, bool) {
		k := at[i-from]
		return int(k) - 1, k > 0
	}
}

// PreviewDetail says how much of each pass Preview reports.
type PreviewDetail int

const (
	// PreviewEdits reports each pass whole: its edits carry the new
	// content of every message they change, ready to be recorded.
	PreviewEdits PreviewDetail = iota
	// PreviewFigures reports the figures of each pass only (compact
	// inspect): the same measures, cache break, tokens freed and targets,
	// but the edits carry no content (Edit.Content nil; TargetID is set).
	// The strategies of this package then build each replacement in one
	// reused buffer, only to estimate it, so previewing a session of
	// hundreds of thousands of messages allocates little where
	// PreviewEdits allocates the new content of every edited message
	// (140 MB for a 210 MB session).
	PreviewFigures
)

// Preview plans each strategy alone on path, as a dry run of a Ladder
// holding only that strategy would, and hands fn one report per strategy,
// in order, as soon as it is made (Edit nil when the strategy had nothing
// worth doing); detail says whether the edits carry their content. A
// caller that keeps only what it needs of each report lets the pass be
// collected before the next strategy runs. The context of path is built
// once and shared by the strategies of this package, so a preview of
// every strategy costs little more than one. An error from fn stops the
// preview and is returned as it is.
func Preview(ctx context.Context, path []*Entry, strategies []Strategy, detail PreviewDetail, fn func(PassReport) error) error {
	return preview(ctx, path, strategies, detail == PreviewFigures, fn)
}

// preview is Preview, with figures for PreviewFigures.
func preview(ctx context.Context, path []*Entry, strategies []Strategy, figures bool, fn func(PassReport) error) error {
	cur := BuildContext(path)
	u := Measure(cur)
	env := StrategyEnv{Usage: u}
	var scratch passScratch
	for _, s := range strategies {
		if err := ctx.Err(); err != nil {
			return err
		}
		ce, saved, err := planOn(s, path, cur, env, figures, &scratch)
		if err != nil {
			return fmt.Errorf("%s: %w", s.Name(), err)
		}
		rep := planReport(s, ce, u, cur)
		if ce != nil && len(ce.Edits) > 0 {
			rep.TokensAfter = tokensAfter(path, cur, u, ce, saved)
			if figures {
				for k := range ce.Edits {
					ce.Edits[k].Content = nil
				}
			}
		}
		if err := fn(rep); err != nil {
			return err
		}
	}
	return nil
}
