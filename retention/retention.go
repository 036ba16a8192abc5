package retention

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/session"
	"github.com/compactkit/compact/summarize/facts"
)

// DefaultKeepRecent are the kept-part budgets a session is compacted at
// when Options.KeepRecent is empty.
var DefaultKeepRecent = []int{20000, 8000, 2000}

// CheapMethod is the Method of the rows measuring the cheap strategies
// (compact.DefaultLadder, every strategy run at its defaults).
const CheapMethod = "cheap"

// Options say how to compact each session.
type Options struct {
	// KeepRecent are the kept-part budgets, in tokens, to compact at;
	// empty means DefaultKeepRecent.
	KeepRecent []int
	// Summarizer writes the summaries; Name is what the rows call it
	// ("extractive", a model's name).
	Summarizer compact.Summarizer
	Name       string
	// MaxTokens is the summary's output budget (compact.Request.MaxTokens),
	// 0 for none.
	MaxTokens int
	// TargetTokens is the size the rebuilt context must fit under
	// (compact.Request.TargetTokens), 0 for none: the engine then shrinks
	// the kept part and the summary as a real run would, and the
	// under-target invariant is checked.
	TargetTokens int
	// Cheap adds, for each budget, a row for the cheap strategies alone
	// (CheapMethod), measured on the same span as the summary.
	Cheap bool
	// Prices are the session model's prices, which price what a
	// compaction saves (Economics); SummaryPrices those of the model that
	// writes the summaries, which price what it cost (a zero Prices for
	// the offline summarizer: it costs nothing). nil: unknown, and the
	// figures that need them are left out.
	Prices, SummaryPrices *compact.Prices
}

// Economics is what one compaction cost and what it saves, in US dollars
// at list prices (compact.Prices). A figure is nil (null in JSON) when a
// price it needs is unknown, never 0 for unknown.
type Economics struct {
	// Usage is what the summarizer's model calls used, added up (zero
	// for the offline summarizer and the cheap strategies, which make
	// none).
	Usage Tokens `json:"usage"`
	// Compaction is what writing the summary cost: Usage at the summary
	// model's prices (0 for the offline summarizer and the cheap
	// strategies).
	Compaction *float64 `json:"compaction"`
	// TokensRemoved is TokensBefore - TokensAfter: what every later
	// request no longer sends.
	TokensRemoved int `json:"tokensRemoved"`
	// SavedCached is what each later request saves when its prefix would
	// have been read from the prompt cache, as in an agent's loop:
	// TokensRemoved at the session model's cache-read price.
	// SavedUncached is the saving when it would not (a cache gone cold):
	// TokensRemoved at its input price.
	SavedCached   *float64 `json:"savedPerRequestCached"`
	SavedUncached *float64 `json:"savedPerRequestUncached"`
	// Rewrite is what the compaction adds, once, to the next request:
	// the rewritten prefix (TokensAfter) is written to the cache instead
	// of read from it (the cache-write price minus the cache-read price).
	Rewrite *float64 `json:"cacheRewrite"`
	// BreakEven is the number of later requests whose cached savings
	// pay for Compaction and Rewrite; 0 when a figure is unknown or
	// nothing was removed.
	BreakEven int `json:"breakEven,omitempty"`
}

// Tokens are the token counts of a usage (compact.Usage's, the provider's
// own compaction step added in).
type Tokens struct {
	Input      int `json:"input"`
	Output     int `json:"output"`
	CacheRead  int `json:"cacheRead"`
	CacheWrite int `json:"cacheWrite"`
}

// economics prices one compaction: its summarizer's usage u (nil: none
// reported) at summaryPrices, what it removed at prices (nil: unknown).
func economics(r *Result, u *compact.Usage, summaryPrices, prices *compact.Prices) *Economics {
	e := &Economics{TokensRemoved: max(r.TokensBefore-r.TokensAfter, 0)}
	var usage compact.Usage
	if u != nil {
		usage = *u
	}
	e.Usage = Tokens{Input: usage.Input + usage.Compaction.Input, Output: usage.Output + usage.Compaction.Output,
		CacheRead: usage.CacheRead + usage.Compaction.CacheRead, CacheWrite: usage.CacheWrite + usage.Compaction.CacheWrite}
	dollars := func(v float64) *float64 { return &v }
	if summaryPrices != nil {
		e.Compaction = dollars(summaryPrices.Cost(usage).Total())
	}
	if p := prices; p != nil {
		e.SavedCached = dollars(p.CacheReadCost(e.TokensRemoved))
		e.SavedUncached = dollars(p.InputCost(e.TokensRemoved))
		e.Rewrite = dollars(max(p.CacheWriteCost(r.TokensAfter)-p.CacheReadCost(r.TokensAfter), 0))
		if e.Compaction != nil && *e.SavedCached > 0 {
			e.BreakEven = int(math.Ceil((*e.Compaction + *e.Rewrite) / *e.SavedCached))
		}
	}
	return e
}

// Recall is how many of the facts of one kind the rebuilt context holds.
type Recall struct {
	Found int `json:"found"`
	Total int `json:"total"`
	// Missing are the facts not found, in the order of the span.
	Missing []string `json:"missing,omitempty"`
}

// Percent is Found as a share of Total, 100 when there is nothing to find.
func (r Recall) Percent() float64 {
	if r.Total == 0 {
		return 100
	}
	return 100 * float64(r.Found) / float64(r.Total)
}

func (r *Recall) check(text, fact string, boundaries bool) {
	r.Total++
	ok := false
	if boundaries {
		ok = facts.Contains(text, fact)
	} else {
		ok = strings.Contains(text, fact)
	}
	if ok {
		r.Found++
	} else {
		r.Missing = append(r.Missing, fact)
	}
}

// Invariants are the properties every compaction must keep.
type Invariants struct {
	// ToolPairs is false when the rebuilt context holds a tool result
	// whose call it does not hold; Orphans names them.
	ToolPairs bool     `json:"toolPairs"`
	Orphans   []string `json:"orphans,omitempty"`
	// FirstRequest is true when the session's first user message is in
	// the rebuilt context verbatim (blanks aside).
	FirstRequest bool `json:"firstRequest"`
	// UnderTarget is true when the rebuilt context fits under Target; it
	// is true when there is no target (Target 0).
	UnderTarget bool `json:"underTarget"`
	Target      int  `json:"target,omitempty"`
	// Smaller is true when the context after is smaller than before (or,
	// for the cheap strategies, no larger: they may find nothing to do):
	// a compaction that does not make room is worse than none.
	Smaller bool `json:"smaller"`
}

// OK reports whether every invariant holds.
func (v Invariants) OK() bool { return v.ToolPairs && v.FirstRequest && v.UnderTarget && v.Smaller }

// Result is one compaction of one session, measured on its summarized
// span: the messages the summary replaced (the history and the split
// turn's start).
type Result struct {
	Session    string `json:"session"`
	Method     string `json:"method"`
	KeepRecent int    `json:"keepRecent"`
	// Nothing is set, with Reason, when there was nothing to compact at
	// this budget; no measure is taken then.
	Nothing bool   `json:"nothingToCompact,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// SpanMessages is the number of messages summarized.
	SpanMessages int `json:"spanMessages"`
	// TokensBefore and TokensAfter are the context before and after (see
	// compact.Measure); SpanTokens the estimate of the summarized span
	// and SummaryTokens that of the summary that replaced it (0 for the
	// cheap strategies).
	TokensBefore  int `json:"tokensBefore"`
	TokensAfter   int `json:"tokensAfter"`
	SpanTokens    int `json:"spanTokens"`
	SummaryTokens int `json:"summaryTokens"`

	Files       Recall     `json:"files"`
	Errors      Recall     `json:"errors"`
	Identifiers Recall     `json:"identifiers"`
	UserText    Recall     `json:"userText"`
	Invariants  Invariants `json:"invariants"`
	// Cost is what the compaction cost and what it saves (nil when there
	// was nothing to compact).
	Cost *Economics `json:"cost,omitempty"`
}

// shrank reports whether the context after is smaller than before; for
// the cheap strategies, which may find nothing to do, no larger. A
// summary always replaces something and must make room.
func (r *Result) shrank() bool {
	return r.TokensAfter < r.TokensBefore || (r.Method == CheapMethod && r.TokensAfter == r.TokensBefore)
}

// Ratio is TokensAfter as a share of TokensBefore, in percent.
func (r *Result) Ratio() float64 {
	if r.TokensBefore == 0 {
		return 0
	}
	return 100 * float64(r.TokensAfter) / float64(r.TokensBefore)
}

// Measure compacts a copy, held in memory, of the conversation whose
// root-to-leaf path is given, once per budget of opts.KeepRecent (and
// with the cheap strategies when opts.Cheap), and measures each result.
// name labels the rows. Nothing is written anywhere; the entries given
// are not changed. A budget at which there is nothing to compact gives a
// row with Nothing set. It fails when a compaction fails (the
// summarizer's error, a cancelled ctx).
func Measure(ctx context.Context, name string, path []*compact.Entry, opts Options) ([]Result, error) {
	keeps := opts.KeepRecent
	if len(keeps) == 0 {
		keeps = DefaultKeepRecent
	}
	method := opts.Name
	if method == "" {
		method = "summarizer"
	}
	var out []Result
	for _, keep := range keeps {
		if opts.Summarizer != nil {
			r, err := measureSummary(ctx, name, path, keep, method, opts)
			if err != nil {
				return out, fmt.Errorf("%s: keep %d with %s: %w", name, keep, method, err)
			}
			out = append(out, r)
		}
		if opts.Cheap {
			r, err := measureCheap(ctx, name, path, keep, opts)
			if err != nil {
				return out, fmt.Errorf("%s: keep %d with the cheap strategies: %w", name, keep, err)
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// copyOf returns an in-memory session holding path: appends to it stay
// in memory and leave path's entries alone.
func copyOf(name string, path []*compact.Entry) (*session.Session, error) {
	return session.FromTranscript(&compact.Transcript{Entries: path}, name, session.Options{})
}

func measureSummary(ctx context.Context, name string, path []*compact.Entry, keep int, method string, opts Options) (Result, error) {
	r := Result{Session: name, Method: method, KeepRecent: keep}
	mem, err := copyOf(name, path)
	if err != nil {
		return r, err
	}
	eng := &compact.Engine{Summarizer: opts.Summarizer, KeepRecentTokens: keep}
	res, err := eng.Compact(ctx, mem, compact.Request{Reason: compact.ReasonManual, MaxTokens: opts.MaxTokens,
		TargetTokens: opts.TargetTokens, Fallback: compact.FallbackOff})
	if errors.Is(err, compact.ErrNothingToCompact) {
		r.Nothing, r.Reason = true, err.Error()
		return r, nil
	}
	if err != nil {
		return r, err
	}
	span := append(append([]*compact.Message{}, res.Plan.Messages...), res.Plan.TurnPrefix...)
	r.SummaryTokens = compact.TextMessage(compact.RoleCompactionSummary, res.Summary).Tokens()
	measure(&r, path, mem.Path(), span, opts.TargetTokens)
	r.Cost = economics(&r, res.Usage, opts.SummaryPrices, opts.Prices)
	return r, nil
}

func measureCheap(ctx context.Context, name string, path []*compact.Entry, keep int, opts Options) (Result, error) {
	r := Result{Session: name, Method: CheapMethod, KeepRecent: keep}
	plan, err := compact.PlanCompaction(path, compact.PlanOptions{KeepRecentTokens: keep})
	if errors.Is(err, compact.ErrNothingToCompact) {
		r.Nothing, r.Reason = true, err.Error()
		return r, nil
	}
	if err != nil {
		return r, err
	}
	mem, err := copyOf(name, path)
	if err != nil {
		return r, err
	}
	if _, err := (compact.Ladder{}).Run(ctx, mem, 0, false); err != nil {
		return r, err
	}
	span := append(append([]*compact.Message{}, plan.Messages...), plan.TurnPrefix...)
	measure(&r, path, mem.Path(), span, opts.TargetTokens)
	// The cheap strategies call no model: they cost nothing to run.
	r.Cost = economics(&r, nil, &compact.Prices{}, opts.Prices)
	return r, nil
}

// measure fills in r's measures: span is what was summarized (or, for
// the cheap strategies, what a summary would have replaced), before and
// after the paths around the compaction.
func measure(r *Result, before, after []*compact.Entry, span []*compact.Message, target int) {
	ctxAfter := compact.BuildContext(after)
	r.TokensBefore = compact.Measure(compact.BuildContext(before)).Tokens
	r.TokensAfter = compact.Measure(ctxAfter).Tokens
	r.SpanMessages = len(span)
	for _, m := range span {
		r.SpanTokens += m.Tokens()
	}
	text := ContextText(ctxAfter)

	ops := facts.FilesTouched(span)
	r.Files = Recall{}
	for _, p := range facts.FileList(&ops) {
		r.Files.check(text, facts.Normalize(p), true)
	}
	for _, f := range facts.Failures(span) {
		if f.Line != "" {
			r.Errors.check(text, f.Line, false)
		}
	}
	for _, id := range facts.Identifiers(span) {
		r.Identifiers.check(text, id.Text, true)
	}
	for _, t := range UserTexts(span) {
		r.UserText.check(text, t, false)
	}

	r.Invariants = Invariants{ToolPairs: true, UnderTarget: true, Target: target, Smaller: r.shrank()}
	r.Invariants.Orphans = Orphans(ctxAfter)
	r.Invariants.ToolPairs = len(r.Invariants.Orphans) == 0
	if first := FirstRequest(before); first != "" {
		r.Invariants.FirstRequest = strings.Contains(text, first)
	} else {
		r.Invariants.FirstRequest = true
	}
	if target > 0 {
		r.Invariants.UnderTarget = r.TokensAfter <= target
	}
}

// UserTexts returns the text of every user message of msgs that has any,
// normalized (facts.Normalize).
func UserTexts(msgs []*compact.Message) []string {
	var out []string
	for _, m := range msgs {
		if m != nil && m.Role == compact.RoleUser {
			if t := facts.Normalize(m.Text()); t != "" {
				out = append(out, t)
			}
		}
	}
	return out
}

// FirstRequest returns the normalized text of the first user message on
// the path (as stored, whatever compactions came later), "" when there is
// none.
func FirstRequest(path []*compact.Entry) string {
	for _, e := range path {
		if e.IsContextMessage() && e.Message.Role == compact.RoleUser {
			if t := facts.Normalize(e.Message.Text()); t != "" {
				return t
			}
		}
	}
	return ""
}

// Orphans returns the tool call ids of the tool results in c whose call
// no earlier assistant message of c holds.
func Orphans(c *compact.Context) []string {
	calls := make(map[string]bool)
	var out []string
	for _, m := range c.Messages {
		switch m.Role {
		case compact.RoleAssistant:
			for _, call := range m.ToolCalls() {
				calls[call.ID] = true
			}
		case compact.RoleToolResult:
			if !calls[m.ToolCallID] {
				out = append(out, m.ToolCallID)
			}
		}
	}
	return out
}
