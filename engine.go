package compact

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/compactkit/compact/internal/jsontext"
	"github.com/compactkit/compact/internal/redact"
)

// Log is where a conversation's entries are kept: a session file, an
// agent's memory, a proxied request. The engine reads the current path
// from it and appends the compaction entry to it, and touches nothing
// else.
type Log interface {
	// Path returns the entries from the root to the current leaf.
	Path() []*Entry
	// Append adds e as a child of the current leaf and makes it the new
	// leaf. It fills in e.ID, e.ParentID and e.Timestamp when empty. It
	// either records the entry completely or returns an error.
	Append(ctx context.Context, e *Entry) error
}

// Reason says why a compaction ran.
type Reason string

// Compaction reasons.
const (
	// ReasonManual is a compaction the user asked for.
	ReasonManual Reason = "manual"
	// ReasonThreshold is an automatic compaction: the trigger policy fired.
	ReasonThreshold Reason = "threshold"
	// ReasonOverflow follows a context-overflow error from the provider.
	ReasonOverflow Reason = "overflow"
	// ReasonIdle is an automatic compaction of a conversation that was
	// idle longer than the provider's prompt-cache lifetime: its next
	// request writes the whole cache again anyway, so a smaller context
	// costs nothing extra in cache and saves on every later request.
	ReasonIdle Reason = "idle"
)

// EventType distinguishes the events of a compaction.
type EventType string

// Event types.
const (
	EventStart EventType = "compaction_start"
	EventEnd   EventType = "compaction_end"
	// EventTurnEnd is sent by a Guard after each model response it
	// records, with the context's measure then (ContextUsage).
	EventTurnEnd EventType = "turn_end"
)

// Event reports the progress of a compaction to Engine.OnEvent.
type Event struct {
	Type   EventType
	Reason Reason
	// TokensBefore is the context size before; TokensAfter the estimate
	// after (EventEnd only, 0 on failure).
	TokensBefore int
	TokensAfter  int
	// MessagesSummarized is the number of messages replaced by the summary.
	MessagesSummarized int
	// Duration is the time the compaction took (EventEnd only).
	Duration time.Duration
	// Summarizer names what wrote the summary (EventEnd only).
	Summarizer string
	// Usage is the summarizer's own usage, if it reported one.
	Usage *Usage
	// Err is the failure, for an EventEnd that wrote nothing.
	Err error
	// FallbackErr is the summarizer's failure when the fallback wrote the
	// summary instead (EventEnd only).
	FallbackErr error
	// Adjustments are what the headroom guarantee and the summary's
	// output budget changed (EventEnd only).
	Adjustments []string
	// Strategies names the cheap strategies that made a pass, in order
	// (EventEnd only).
	Strategies []string
	// ContextUsage is the context's measure (Measure: the size the
	// provider last reported plus the estimate of what came after): before
	// the compaction for EventStart, after it for EventEnd (zero when the
	// compaction failed), after the response for EventTurnEnd.
	ContextUsage ContextUsage
}

// Engine plans compactions, has them summarized and records them. The
// zero value is not usable: Summarizer must be set.
type Engine struct {
	// Summarizer writes the summaries.
	Summarizer Summarizer
	// Ladder, when set, is the cheap tier: before an automatic compaction
	// (reason threshold or overflow, with Request.TargetTokens set) its
	// strategies run in order and, for reason threshold, the summary is
	// written only if the context is still above the target (an overflow
	// always gets its summary). Nil switches the cheap tier off.
	// Passes stay recorded even when the summary after them fails: each
	// is a complete edit of its own.
	Ladder *Ladder
	// Fallback, when set, writes the summary when Summarizer fails (see
	// Request.Fallback); the entry is then marked as written without a
	// model. Usually the offline extractive summarizer.
	Fallback Summarizer
	// KeepRecentTokens is the size of the part kept verbatim; 0 means
	// DefaultKeepRecentTokens.
	KeepRecentTokens int
	// OnEvent, when set, receives the start and end of every compaction.
	// It is called synchronously.
	OnEvent func(Event)
	// Memory, when set, is given every compaction's summary once it is
	// recorded (see MemoryLog).
	Memory MemoryLog
	// BeforeCompaction, when set, is asked before each compaction, with
	// the request and the context's measure. It may skip the compaction
	// (Compact then writes nothing and returns an error wrapping
	// ErrSkipped) or supply the summary, used instead of the summarizer's
	// and recorded as written by a hook. An error from it fails Compact.
	BeforeCompaction func(ctx context.Context, req Request, u ContextUsage) (HookDecision, error)
	// AfterCompaction, when set, sees every compaction that was recorded
	// (after the memory log, before Compact returns).
	AfterCompaction func(ctx context.Context, res *Result)
	// Count, when set, counts the messages after the last usage report
	// in the measures the engine gives its hooks and events (an exact
	// tokenizer such as package tiktoken's Counter.MessageTokens, for a
	// model whose tokenizer is public); nil counts with the estimate
	// (Message.Tokens). Planning always uses the estimate.
	Count func(*Message) int
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// Request asks for one compaction.
type Request struct {
	// Reason for the compaction; "" means ReasonManual.
	Reason Reason
	// Instructions is focus text passed to the summarizer.
	Instructions string
	// Session names the conversation in the memory log (Engine.Memory):
	// a session file, an id. It changes nothing else.
	Session string
	// KeepRecentTokens overrides the engine's setting when positive. With
	// TargetTokens set, the kept part never takes more than half the
	// target: a larger budget is lowered (and reported as an adjustment)
	// so that the summary has room.
	KeepRecentTokens int
	// MaxTokens is the output budget of the history summary, passed to the
	// summarizer (the turn prefix gets half); 0 leaves it to the
	// summarizer. pi uses 0.8 x its reserve (13107 tokens by default);
	// package summarize's ReserveBudget computes it.
	// When set, it also bounds what is recorded, whatever the window: a
	// summary (history and turn prefix together, file lists apart) larger
	// than MaxTokens is shortened with its section headings kept, and
	// Result.Adjustments says so.
	MaxTokens int
	// TargetTokens is the size the rebuilt context must fit under (the
	// policy's Target, by default half the window); 0 skips the headroom
	// guarantee. When the summary plus the kept part would not fit, the
	// kept part is shrunk first, then the summary is shortened with its
	// section headings kept, and Result.Adjustments says what was done.
	TargetTokens int
	// ThresholdTokens is the trigger policy's threshold (Decision.Threshold)
	// for an automatic compaction of reason threshold; 0 when unknown.
	// When the cheap tier alone brings the context to or under it, no
	// summary is written even if the context is still above TargetTokens:
	// the model call can go ahead as it is.
	ThresholdTokens int
	// Fallback says whether Engine.Fallback writes the summary when the
	// summarizer fails; the default is on for automatic compactions and
	// off for manual ones.
	Fallback FallbackMode
	// Summary, when set, is the summary to record, supplied by the caller
	// (a hook): no summarizer is called, the file lists are still
	// appended, and the entry's details name "hook" as the summarizer.
	// (pi's fromHook flag is not set: the file lists are the engine's own
	// and stay trusted by later compactions.)
	Summary string
}

// FallbackMode chooses when the fallback summarizer is used.
type FallbackMode int

const (
	// FallbackAuto uses the fallback for automatic compactions (reasons
	// threshold and overflow), not for manual ones.
	FallbackAuto FallbackMode = iota
	// FallbackOn always uses the fallback when the summarizer fails.
	FallbackOn
	// FallbackOff never does: a failed summary fails the compaction. A
	// reply the summarizer's review refused (ErrSummaryRejected) still
	// goes to the fallback, in every mode.
	FallbackOff
)

func (f FallbackMode) enabled(r Reason) bool {
	switch f {
	case FallbackOn:
		return true
	case FallbackOff:
		return false
	}
	return r != ReasonManual
}

// Result describes a compaction that was recorded.
type Result struct {
	Plan *Plan
	// Entry is the compaction entry appended to the log.
	Entry *Entry
	// Summary is the full summary text, file lists included.
	Summary string
	// TokensBefore and TokensAfter are the context sizes before and
	// (estimated) after.
	TokensBefore int
	TokensAfter  int
	// Summarizer names what wrote the summary; Usage is its own usage.
	Summarizer string
	Usage      *Usage
	Duration   time.Duration
	// FallbackErr is the summarizer's failure when the fallback
	// summarizer wrote the summary instead, nil otherwise. It matches
	// ErrSummaryRejected when the model's reply was refused.
	FallbackErr error
	// Refused lists what was wrong with model replies the summarizer
	// refused and asked again for (Summary.Refused), when the second
	// answer was used.
	Refused []string
	// Adjustments says what the headroom guarantee (kept part, summary
	// length) and the output budget (Request.MaxTokens) changed, one
	// sentence each (empty when nothing was needed).
	Adjustments []string
	// MemoryErr is the failure of Engine.Memory to record the
	// compaction, nil when it did or there is none; the compaction
	// itself is recorded either way.
	MemoryErr error
	// Ladder is what the cheap tier did, nil when it did not run. When
	// the cheap tier alone brought the context under the target (or under
	// Request.ThresholdTokens), or when its passes were recorded but the
	// planner then found nothing to summarize, no summary was written:
	// Entry is nil and Summary empty.
	Ladder *LadderResult
	// Ahead is the prepared compaction Engine.Apply recorded, nil for a
	// compaction summarized in line.
	Ahead *Prepared
	// Remainder is the in-line compaction Apply ran after the prepared
	// one when the context was still above Request.TargetTokens (nil when
	// none ran); RemainderErr is its failure.
	Remainder    *Result
	RemainderErr error
}

// Summarized reports whether a compaction entry was written (rather than
// the cheap tier alone being enough).
func (r *Result) Summarized() bool { return r.Entry != nil }

// strategies lists the strategies that made a pass.
func (r *LadderResult) strategies() []string {
	if r == nil {
		return nil
	}
	var out []string
	for _, p := range r.Passes {
		if p.Edit != nil {
			out = append(out, p.Strategy)
		}
	}
	return out
}

func (e *Engine) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func (e *Engine) logger() *slog.Logger {
	if e.Logger != nil {
		return e.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// Plan returns the plan Compact would summarize for the log's current
// path (the cheap tier aside), without summarizing or writing anything:
// with req.TargetTokens set, the kept part is held to half the target as
// Compact holds it.
func (e *Engine) Plan(log Log, req Request) (*Plan, error) {
	return e.planWithin(log, req, &Result{})
}

// PlanAdjusted is Plan with the sentences saying what the headroom
// guarantee changed in the plan (a kept part reduced to leave room under
// req.TargetTokens), as Compact reports them in Result.Adjustments. A dry
// run shows them beside the plan.
func (e *Engine) PlanAdjusted(log Log, req Request) (*Plan, []string, error) {
	res := &Result{}
	plan, err := e.planWithin(log, req, res)
	return plan, res.Adjustments, err
}

// planFor plans with the keep budget of the request or the engine.
func (e *Engine) planFor(log Log, req Request) (*Plan, error) {
	keep := req.KeepRecentTokens
	if keep <= 0 {
		keep = e.KeepRecentTokens
	}
	return PlanCompaction(log.Path(), PlanOptions{KeepRecentTokens: keep})
}

// Compact plans a compaction of the log's current path, has it
// summarized, and appends the compaction entry. If planning finds nothing
// to summarize and nothing was written, it returns an error wrapping
// ErrNothingToCompact and the summarizer is not called. If the summarizer
// fails or ctx is cancelled, no compaction entry is appended and the error
// is returned.
//
// Once the cheap tier has run, the Result is returned even with an
// error: Result.Ladder says which passes were recorded (they stay, each a
// complete edit of its own). When passes were recorded and the planner
// then finds nothing to summarize, the passes are the compaction: the
// Result comes back with a nil Entry and no error.
func (e *Engine) Compact(ctx context.Context, log Log, req Request) (*Result, error) {
	if e.Summarizer == nil {
		return nil, errors.New("compact: Engine.Summarizer is nil")
	}
	if req.Reason == "" {
		req.Reason = ReasonManual
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var usage ContextUsage
	if e.BeforeCompaction != nil || e.OnEvent != nil {
		usage = e.measure(log)
	}
	if err := e.askBefore(ctx, &req, usage); err != nil {
		return nil, err
	}
	started := e.now()
	var ladder *LadderResult
	if e.Ladder != nil && req.Reason != ReasonManual && req.TargetTokens > 0 {
		lr, err := e.Ladder.Run(ctx, log, req.TargetTokens, false)
		if err != nil {
			if lr == nil {
				return nil, fmt.Errorf("cheap tier: %w", err)
			}
			return &Result{TokensBefore: lr.TokensBefore, TokensAfter: lr.TokensAfter, Ladder: lr,
				Duration: e.now().Sub(started)}, fmt.Errorf("cheap tier: %w", err)
		}
		ladder = lr
		// After an overflow the provider's count, not ours, is the truth:
		// the summary is written whatever the estimate says.
		enough := lr.UnderTarget || (req.Reason == ReasonThreshold && req.ThresholdTokens > 0 && lr.TokensAfter <= req.ThresholdTokens)
		if enough && req.Reason != ReasonOverflow {
			return e.ladderDone(ctx, log, req, lr, started, usage), nil
		}
	}
	pre := &Result{Ladder: ladder}
	plan, err := e.planWithin(log, req, pre)
	if err != nil {
		if ladder == nil {
			return nil, err
		}
		if errors.Is(err, ErrNothingToCompact) && len(ladder.strategies()) > 0 {
			// The passes are all the compaction there is.
			res := e.ladderDone(ctx, log, req, ladder, started, usage)
			res.Adjustments = pre.Adjustments
			return res, nil
		}
		pre.TokensBefore, pre.TokensAfter = ladder.TokensBefore, ladder.TokensAfter
		pre.Duration = e.now().Sub(started)
		return pre, err
	}
	before := plan.TokensBefore
	if ladder != nil {
		before = ladder.TokensBefore
	}
	e.emit(Event{Type: EventStart, Reason: req.Reason, TokensBefore: before, MessagesSummarized: plan.MessagesToSummarize(), ContextUsage: usage})
	res, err := e.summarizeAndRecord(ctx, log, plan, req, pre.Adjustments)
	end := Event{Type: EventEnd, Reason: req.Reason, TokensBefore: before, MessagesSummarized: plan.MessagesToSummarize(),
		Duration: e.now().Sub(started), Strategies: ladder.strategies()}
	if err != nil {
		if ladder != nil && errors.Is(err, ErrNothingToGain) && len(ladder.strategies()) > 0 {
			// The summary would not shrink the context: the passes are
			// all the compaction there is.
			res := e.ladderEnd(ctx, log, req, ladder, started)
			res.Adjustments = pre.Adjustments
			return res, nil
		}
		end.Err = err
		e.emit(end)
		if ladder == nil {
			return nil, err
		}
		pre.TokensBefore, pre.TokensAfter, pre.Duration = ladder.TokensBefore, ladder.TokensAfter, end.Duration
		return pre, err
	}
	res.Duration = end.Duration
	res.Ladder = ladder
	if e.Memory != nil {
		res.MemoryErr = e.remember(ctx, req, res)
	}
	if ladder != nil {
		res.TokensBefore = ladder.TokensBefore
	}
	end.TokensAfter, end.Summarizer, end.Usage = res.TokensAfter, res.Summarizer, res.Usage
	end.FallbackErr, end.Adjustments = res.FallbackErr, res.Adjustments
	end.MessagesSummarized = res.Plan.MessagesToSummarize()
	if e.OnEvent != nil {
		end.ContextUsage = e.measure(log)
	}
	e.emit(end)
	e.logger().Debug("compacted", "reason", req.Reason, "tokensBefore", res.TokensBefore, "tokensAfter", res.TokensAfter,
		"messages", plan.MessagesToSummarize(), "firstKept", plan.FirstKeptID)
	if e.AfterCompaction != nil {
		e.AfterCompaction(ctx, res)
	}
	return res, nil
}

// askBefore asks Engine.BeforeCompaction, when set, about req with the
// context's measure u: an error when it fails or skips the compaction
// (wrapping ErrSkipped), req.Summary set when it supplies the summary.
func (e *Engine) askBefore(ctx context.Context, req *Request, u ContextUsage) error {
	if e.BeforeCompaction == nil {
		return nil
	}
	d, err := e.BeforeCompaction(ctx, *req, u)
	if err != nil {
		return fmt.Errorf("before-compaction hook: %w", err)
	}
	if d.Skip {
		return fmt.Errorf("%s compaction: %w", req.Reason, ErrSkipped)
	}
	if d.Summary != "" {
		req.Summary = d.Summary
	}
	return nil
}

// remember gives the compaction in res to the memory log.
func (e *Engine) remember(ctx context.Context, req Request, res *Result) error {
	c := res.Entry.Compaction
	reason := req.Reason
	if reason == "" {
		reason = ReasonManual
	}
	err := e.Memory.Remember(ctx, MemoryRecord{Time: e.now(), Session: req.Session, EntryID: res.Entry.ID, Reason: reason,
		TokensBefore: res.TokensBefore, TokensAfter: res.TokensAfter, Summarizer: res.Summarizer, Summary: c.Summary,
		ReadFiles: c.ReadFiles, ModifiedFiles: c.ModifiedFiles})
	if err != nil {
		e.logger().Warn("memory log: the compaction is recorded in the session but not in the memory log", "err", err)
		return fmt.Errorf("memory log: %w", err)
	}
	return nil
}

// ladderDone reports a compaction done by the cheap tier alone, with its
// start and end events and the after hook; u is the measure before it.
func (e *Engine) ladderDone(ctx context.Context, log Log, req Request, lr *LadderResult, started time.Time, u ContextUsage) *Result {
	e.emit(Event{Type: EventStart, Reason: req.Reason, TokensBefore: lr.TokensBefore, ContextUsage: u})
	return e.ladderEnd(ctx, log, req, lr, started)
}

// ladderEnd is ladderDone once the start event was sent: the end event
// and the after hook.
func (e *Engine) ladderEnd(ctx context.Context, log Log, req Request, lr *LadderResult, started time.Time) *Result {
	res := &Result{TokensBefore: lr.TokensBefore, TokensAfter: lr.TokensAfter, Ladder: lr, Duration: e.now().Sub(started)}
	end := Event{Type: EventEnd, Reason: req.Reason, TokensBefore: lr.TokensBefore, TokensAfter: lr.TokensAfter,
		Duration: res.Duration, Strategies: lr.strategies()}
	if e.OnEvent != nil {
		end.ContextUsage = e.measure(log)
	}
	e.emit(end)
	if e.AfterCompaction != nil {
		e.AfterCompaction(ctx, res)
	}
	return res
}

// measure is the context's measure with e.Count.
func (e *Engine) measure(log Log) ContextUsage {
	return MeasureWith(BuildContext(log.Path()), e.Count)
}

func (e *Engine) emit(ev Event) {
	if e.OnEvent != nil {
		e.OnEvent(ev)
	}
}

// summaryParts is what the summarizers produced for one plan: the
// history part (or the previous summary carried over) and the split
// turn's prefix, joined by text.
type summaryParts struct {
	history    string
	prefix     string
	summarizer string
	usage      *Usage
	refused    []string // problems of replies the summarizer asked again for
}

// text joins the parts as they are recorded.
func (p *summaryParts) text() string {
	if p.prefix == "" {
		return p.history
	}
	h := p.history
	if h == "" {
		h = "No earlier history."
	}
	return h + "\n\n" + TurnPrefixIntro + p.prefix
}

// fitBudget shortens the parts, headings kept, so that together they
// take at most budget tokens; the turn prefix keeps up to a third of the
// budget. It reports whether anything was cut.
func (p *summaryParts) fitBudget(budget int) bool {
	if budget <= 0 || tokensOf(p.text()) <= budget {
		return false
	}
	if p.prefix == "" {
		p.history = ShortenSummary(p.history, budget)
		p.hardCut(budget)
		return true
	}
	room := budget - tokensOf(p.text()) + tokensOf(p.history) + tokensOf(p.prefix) // the joins' share taken off
	pre := min(tokensOf(p.prefix), room/3)
	hist := min(tokensOf(p.history), room-pre)
	pre = room - hist
	p.history = ShortenSummary(p.history, max(hist, 0))
	p.prefix = ShortenSummary(p.prefix, max(pre, 0))
	p.hardCut(budget)
	return true
}

// hardCut ends the text at the budget when the headings alone are too
// many for it (ShortenSummary keeps them all): the budget holds.
func (p *summaryParts) hardCut(budget int) {
	if t := p.text(); tokensOf(t) > budget {
		p.history, p.prefix = jsontext.CutUTF16(t, max(budget*4-8, 0))+"\n[…]", ""
	}
}

// tokensOf is the chars/4 size of a text, as the headroom guarantee counts.
func tokensOf(s string) int { return (jsontext.UTF16Len(s) + 3) / 4 }

// summarize has the plan's history and turn prefix summarized by sum and
// joins them. It calls sum only with messages to summarize.
func (e *Engine) summarize(ctx context.Context, sum Summarizer, plan *Plan, req Request) (*summaryParts, error) {
	out := &summaryParts{}
	var usage Usage
	note := func(s *Summary) {
		if s.Summarizer != "" && !strings.Contains(out.summarizer, s.Summarizer) {
			if out.summarizer != "" {
				out.summarizer += ", "
			}
			out.summarizer += s.Summarizer
		}
		if s.Usage != nil {
			if out.usage == nil {
				out.usage = &usage
			}
			usage = usage.Plus(*s.Usage)
		}
		out.refused = append(out.refused, s.Refused...)
	}
	switch {
	case len(plan.Messages) > 0:
		s, err := sum.Summarize(ctx, &SummaryRequest{
			Kind: SummaryHistory, Messages: plan.Messages, PreviousSummary: plan.PreviousSummary,
			Instructions: req.Instructions, ReadFiles: plan.ReadFiles, ModifiedFiles: plan.ModifiedFiles,
			MaxTokens: req.MaxTokens, FirstRequest: firstRequestBefore(plan),
		})
		if err != nil {
			return nil, fmt.Errorf("summarize history: %w", err)
		}
		note(s)
		out.history = strings.TrimSpace(s.Text)
	case plan.PreviousSummary != "":
		out.history = plan.PreviousSummary
	}
	if plan.IsSplitTurn && len(plan.TurnPrefix) > 0 {
		s, err := sum.Summarize(ctx, &SummaryRequest{
			Kind: SummaryTurnPrefix, Messages: plan.TurnPrefix, Instructions: req.Instructions,
			ReadFiles: plan.ReadFiles, ModifiedFiles: plan.ModifiedFiles, MaxTokens: req.MaxTokens / 2,
			Asked: askedBefore(plan),
		})
		if err != nil {
			return nil, fmt.Errorf("summarize turn prefix: %w", err)
		}
		note(s)
		out.prefix = strings.TrimSpace(s.Text)
	}
	return out, nil
}

// askedBefore returns the text of the assistant's message just before a
// split turn, "" when the message before it is not the assistant's.
func askedBefore(plan *Plan) string {
	for i := plan.TurnStartIndex - 1; i >= 0 && i < len(plan.Path); i-- {
		if e := plan.Path[i]; e.IsContextMessage() {
			if e.Message.Role != RoleAssistant {
				return ""
			}
			return strings.TrimSpace(e.Message.Text())
		}
	}
	return ""
}

// firstRequestBefore returns the path's first user message when it lies
// before the plan's span (an earlier compaction summarized it), nil
// otherwise.
func firstRequestBefore(plan *Plan) *Message {
	for i, e := range plan.Path {
		if e.IsContextMessage() && e.Message.Role == RoleUser {
			if i < plan.SpanStart {
				return e.Message
			}
			return nil
		}
	}
	return nil
}

// planWithin plans the compaction so that the kept part leaves at least
// half of req.TargetTokens for the summary, whatever the keep budget
// says: when the kept part is larger, or when everything fits in the keep
// budget although the context is above the target, it plans again with a
// smaller budget (half the target, then halving down to about 1,000
// tokens while the kept part is still larger) and notes the change in
// res.Adjustments. When every message fits in half the target, it keeps
// the planner's ErrNothingToCompact. Without a target it is Plan.
func (e *Engine) planWithin(log Log, req Request, res *Result) (*Plan, error) {
	plan, err := e.planFor(log, req)
	limit := req.TargetTokens / 2
	if limit <= 0 || (err != nil && !errors.Is(err, ErrNothingToCompact)) {
		return plan, err
	}
	path := log.Path()
	from := 0 // the kept part before the adjustment
	if plan != nil {
		if plan.KeptTokens <= limit {
			return plan, nil
		}
		from = plan.KeptTokens
	} else {
		c := BuildContext(path)
		if Measure(c).Tokens <= req.TargetTokens {
			return nil, err // it fits already: there is nothing to make room for
		}
		for _, m := range c.Messages {
			from += m.Tokens()
		}
	}
	for keep := limit; keep == limit || keep >= 1000; keep /= 2 {
		smaller, serr := PlanCompaction(path, PlanOptions{KeepRecentTokens: keep})
		if serr != nil && plan == nil {
			// Every message fits in half the target: what fills the
			// context is not the history, and a smaller kept part would
			// not make room.
			break
		}
		if serr != nil || (plan != nil && smaller.KeptTokens >= plan.KeptTokens) {
			continue
		}
		plan, err = smaller, nil
		if plan.KeptTokens <= limit {
			break
		}
	}
	if plan != nil && plan.KeptTokens < from {
		res.Adjustments = append(res.Adjustments, fmt.Sprintf(
			"kept part reduced from ~%d to ~%d tokens so that the context fits under %d", from, plan.KeptTokens, req.TargetTokens))
	}
	return plan, err
}

func (e *Engine) summarizeAndRecord(ctx context.Context, log Log, plan *Plan, req Request, adjustments []string) (*Result, error) {
	res, entry, err := e.summarizeEntry(ctx, plan, req, adjustments)
	if err != nil {
		return nil, err
	}
	if err := log.Append(ctx, entry); err != nil {
		return nil, fmt.Errorf("record compaction: %w", err)
	}
	res.Entry = entry
	return res, nil
}

// summarizeEntry has the plan summarized (the fallback on failure, the
// budgets and the headroom guarantee applied, the gain checked) and
// returns the compaction entry to record, with the result it will have
// once recorded (its Entry still nil). Nothing is appended.
func (e *Engine) summarizeEntry(ctx context.Context, plan *Plan, req Request, adjustments []string) (*Result, *Entry, error) {
	res := &Result{Plan: plan, TokensBefore: plan.TokensBefore, Adjustments: adjustments}

	var parts *summaryParts
	var err error
	if req.Summary != "" {
		parts = &summaryParts{history: StripFileLists(req.Summary), summarizer: "hook"}
	} else {
		parts, err = e.summarize(ctx, e.Summarizer, plan, req)
	}
	if err != nil {
		// A reply the review refused goes to the fallback whatever the
		// mode: it is not a failure worth trying again later, and the
		// offline summary keeps what the reply lost.
		rejected := errors.Is(err, ErrSummaryRejected)
		if ctx.Err() != nil || e.Fallback == nil || (!rejected && !req.Fallback.enabled(req.Reason)) {
			return nil, nil, err
		}
		e.logger().Warn("summarizer failed; writing the fallback summary", "err", err, "rejected", rejected)
		fb, ferr := e.summarize(ctx, e.Fallback, plan, req)
		if ferr != nil {
			return nil, nil, fmt.Errorf("%w (and the fallback failed too: %v)", err, ferr)
		}
		res.FallbackErr = err
		if fb.history == "" && fb.prefix != "" {
			fb.history = "No earlier history."
		}
		why := "the summarizer failed"
		if rejected {
			why = "the model's summary was refused"
		}
		fb.history = "> Written without a model: " + why + " (" + oneLine(redact.String(err.Error())) + "), so this summary was extracted offline.\n\n" + fb.history
		parts = fb
	}
	res.Summarizer, res.Usage, res.Refused = parts.summarizer, parts.usage, parts.refused
	if have := tokensOf(parts.text()); parts.fitBudget(req.MaxTokens) {
		res.Adjustments = append(res.Adjustments, fmt.Sprintf(
			"summary shortened from ~%d to ~%d tokens, section headings kept, to fit its output budget of %d",
			have, tokensOf(parts.text()), req.MaxTokens))
	}
	summary := parts.text()

	files := FormatFileLists(plan.ReadFiles, plan.ModifiedFiles)
	if req.TargetTokens > 0 {
		room := req.TargetTokens - plan.KeptTokens - (jsontext.UTF16Len(files)+3)/4
		if have := (jsontext.UTF16Len(summary) + 3) / 4; have > room {
			short := ShortenSummary(summary, room)
			res.Adjustments = append(res.Adjustments, fmt.Sprintf(
				"summary shortened from ~%d to ~%d tokens, section headings kept, so that the context fits under %d",
				have, (jsontext.UTF16Len(short)+3)/4, req.TargetTokens))
			summary = short
		}
	}
	if files != "" {
		summary += "\n\n" + files
	}
	// The context shows the pinned messages themselves, not the copy
	// that readers without pins get (see pinnedBlock).
	res.TokensAfter = (jsontext.UTF16Len(summary)+3)/4 + plan.KeptTokens
	if block := pinnedBlock(plan.Pinned); block != "" {
		if files != "" {
			summary = strings.TrimSuffix(summary, files) + block + "\n\n" + files
		} else {
			summary += "\n\n" + block
		}
	}
	res.Summary = summary
	// Never record a compaction that would not shrink the context: the
	// summary replaces the span (and the previous summary) and nothing
	// else changes; and the context after, as estimated, must be smaller
	// than before, as the provider last reported it.
	if have := res.TokensAfter - plan.KeptTokens; have >= plan.SpanTokens {
		return nil, nil, &GainError{SummaryTokens: have, SpanTokens: plan.SpanTokens}
	} else if plan.TokensBefore > 0 && res.TokensAfter >= plan.TokensBefore {
		return nil, nil, &GainError{SummaryTokens: have, SpanTokens: plan.SpanTokens, TokensBefore: plan.TokensBefore, TokensAfter: res.TokensAfter}
	}
	if req.TargetTokens > 0 && res.TokensAfter > req.TargetTokens {
		res.Adjustments = append(res.Adjustments, fmt.Sprintf(
			"the context is still ~%d tokens, above the target of %d: the newest messages alone are larger", res.TokensAfter, req.TargetTokens))
	}

	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	details := map[string]any{
		"reason":     string(req.Reason),
		"summarizer": res.Summarizer,
	}
	if len(plan.PinnedIDs) > 0 {
		details["pinned"] = plan.PinnedIDs
	}
	if res.FallbackErr != nil {
		details["fallback"] = true
		details["summarizerError"] = oneLine(redact.String(res.FallbackErr.Error()))
		if errors.Is(res.FallbackErr, ErrSummaryRejected) {
			details["summaryRejected"] = true
		}
	}
	if len(res.Refused) > 0 {
		details["refusedOnce"] = res.Refused
	}
	entry := &Entry{
		Kind: KindCompaction,
		Compaction: &Compaction{
			Summary:        summary,
			FirstKeptID:    plan.FirstKeptID,
			TokensBefore:   plan.TokensBefore,
			TokensAfter:    res.TokensAfter,
			ReadFiles:      plan.ReadFiles,
			ModifiedFiles:  plan.ModifiedFiles,
			HasFileDetails: true,
			Details:        details,
		},
	}
	return res, entry, nil
}

// oneLine keeps the first line of s, shortened to 300 characters.
func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if cut := jsontext.RuneOffset(s, 300); cut < len(s) {
		s = s[:cut] + "..."
	}
	return s
}
