package compact

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
)

// ModelCall sends the context to the agent's model and returns its
// response: an assistant message, with the provider's usage when it
// reports one. A context-overflow error from the provider should be
// returned as (or wrap) a *ProviderError so that the guard recognises it.
type ModelCall func(ctx context.Context, messages []*Message) (*Message, error)

// Guard defaults.
const (
	// DefaultMaxCompactionsPerCall bounds the compactions one Call may run.
	DefaultMaxCompactionsPerCall = 2
	// DefaultMinFreedRatio is the share of the context a compaction must
	// free; less means the history cannot shrink and the guard stops.
	DefaultMinFreedRatio = 0.05
)

// Errors returned by Guard.Call, wrapped with the details.
var (
	// ErrStalled means a compaction freed too little, or left the context
	// above the trigger, so compacting again would loop.
	ErrStalled = errors.New("compaction cannot shrink the context enough")
	// ErrOverflowPersists means the provider rejected the context as too
	// long even after a forced compaction.
	ErrOverflowPersists = errors.New("context still overflows after compaction")
)

// HookDecision is what a BeforeCompaction hook decides.
type HookDecision struct {
	// Skip cancels this compaction; the model is called as things are.
	Skip bool
	// Summary, when set, is used instead of the summarizer's (recorded as
	// written by a hook).
	Summary string
}

// Guard wraps an agent's model calls so that the context stays inside
// the window: before each call it measures the context and, above the
// trigger, runs the engine (the cheap tier, then a summary); on a
// context-overflow error it compacts with force and retries once. It
// works between tool calls as well as between turns: the planner never
// separates a tool call from its result.
//
// A Guard is not safe for concurrent use; one conversation, one guard.
type Guard struct {
	// Engine compacts; its Ladder, when set, is the cheap tier. Required.
	Engine *Engine
	// Log holds the conversation. The agent appends its user messages and
	// tool results to it; Call appends the model's responses. Required.
	Log Log
	// Model is the agent model's limits.
	Model ModelInfo
	// Policy decides when to compact; nil means DefaultPolicy{}.
	Policy Policy
	// Disabled switches automatic compaction off (config or
	// COMPACT_DISABLE_AUTO). It also turns off the overflow recovery
	// unless RecoverWhenDisabled is set.
	Disabled bool
	// RecoverWhenDisabled keeps the overflow recovery on when Disabled.
	RecoverWhenDisabled bool
	// MaxCompactionsPerCall bounds the compactions of one Call; 0 means
	// DefaultMaxCompactionsPerCall.
	MaxCompactionsPerCall int
	// MinFreedRatio is the share of the context a compaction must free;
	// 0 means DefaultMinFreedRatio.
	MinFreedRatio float64
	// Request is the template for the guard's compaction requests
	// (instructions, keep budget, output budget, fallback). Reason and
	// TargetTokens are set by the guard.
	Request Request
	// BeforeCompaction, when set, is asked before each compaction; it may
	// skip it or supply the summary.
	BeforeCompaction func(ctx context.Context, reason Reason, u ContextUsage) (HookDecision, error)
	// AfterCompaction, when set, sees every compaction's result.
	AfterCompaction func(ctx context.Context, res *Result)
	// Calibrator, when set, learns the model's characters per token from
	// the usage each response reports and estimates new messages with it
	// (see Meter); nil measures with chars/4 (Measure).
	Calibrator *Calibrator
	// Count, when set, counts the messages after the last usage report
	// exactly (package tiktoken's Counter.MessageTokens for an OpenAI
	// model, say) and is used instead of the Calibrator. Give the Engine
	// the same function so that its events agree.
	Count func(*Message) int

	// Ahead, when positive (0.8, say), has the guard write the summary
	// ahead of time: when a call leaves the context past Ahead times the
	// policy's threshold (still under it), the summary of the history so
	// far starts being written in the background (Engine.Prepare on a
	// copy of the path, so the agent goes on appending meanwhile), and
	// the call that crosses the threshold records it at once
	// (Engine.Apply) instead of waiting for a summary. If it is not
	// ready then, that call waits for it; if it no longer fits the log
	// (a branch, another compaction) or fails, the call compacts as
	// without Ahead. The Engine's summarizer and BeforeCompaction hook
	// then run on another goroutine. 0 switches it off; Close stops a
	// summary being written.
	Ahead float64

	ahead      *guardAhead
	meter      *Meter
	meterComp  string // compaction entry the meter was reset for
	meterEdits int    // context edits it was reset for
	// cheapTried is set, within one Call, once the cheap tier alone ran
	// and left the context above the threshold: the next compaction of
	// the call writes a summary whenever the context is above the target.
	cheapTried bool
}

// Usage measures the context the next call would send, with a Meter: the
// last reported size plus the messages sent since, counted by Count when
// set, else estimated at the Calibrator's learned ratio when set, else at
// four characters per token (Measure). With a Calibrator the meter is
// kept across calls, so that each report teaches it once.
func (g *Guard) Usage() ContextUsage {
	c := BuildContext(g.Log.Path())
	if g.Count != nil || g.Calibrator == nil {
		return MeasureWith(c, g.Count)
	}
	comp := ""
	if c.Compaction != nil {
		comp = c.Compaction.ID
	}
	// A compaction or a context edit rebuilt the context: measure again
	// from scratch. Otherwise only the new messages are added.
	if g.meter == nil || comp != g.meterComp || len(c.passes) != g.meterEdits || len(c.Messages) < g.meter.n {
		g.meter = &Meter{Cal: g.Calibrator}
		g.meter.SetModel(g.Model.ID) // unless the context names one
		g.meter.Reset(c)
		g.meterComp, g.meterEdits = comp, len(c.passes)
	} else {
		for _, m := range c.Messages[g.meter.n:] {
			g.meter.Add(m)
		}
	}
	return g.meter.Usage()
}

// Call measures the context, compacts it when the policy says so, sends
// it to the model through call, appends the response to the log and
// returns it.
//
// Above the trigger, the engine runs with the policy's target and
// threshold: the kept part is held to half the target whatever the keep
// budget says, and when the cheap tier alone gets the context under the
// threshold no summary is written. A cheap-tier pass that leaves the
// context above the threshold (by the guard's own measure) is followed by
// a compaction with a summary, within MaxCompactionsPerCall.
//
// A context that was summarized recently and has grown by less than a
// quarter of the threshold since (CompactedRecently) is sent as it is:
// compacting again so soon cannot help.
//
// A context-overflow error from call triggers one forced compaction and
// one retry; a second overflow returns an error wrapping
// ErrOverflowPersists. A history that cannot shrink (nothing to
// summarize, too little freed, still above the threshold after a summary,
// or the per-call limit reached) returns an error wrapping ErrStalled
// instead of compacting again; the model is not called.
func (g *Guard) Call(ctx context.Context, call ModelCall) (*Message, error) {
	if g.Engine == nil || g.Log == nil {
		return nil, errors.New("compact: Guard needs an Engine and a Log")
	}
	policy := g.Policy
	if policy == nil {
		policy = DefaultPolicy{}
	}
	budget := g.MaxCompactionsPerCall
	if budget <= 0 {
		budget = DefaultMaxCompactionsPerCall
	}
	g.cheapTried = false
	for first := true; ; first = false {
		d := Check(policy, g.Model, g.Usage(), g.Disabled)
		if !d.Compact {
			break
		}
		if first && g.summarizedRecently(d) {
			break // an overflow still compacts, below
		}
		if budget == 0 {
			return nil, fmt.Errorf("%w: %d tokens still above the threshold of %d after %d compactions in this call",
				ErrStalled, d.Tokens, d.Threshold, g.maxCompactions())
		}
		budget--
		done, err := g.applyAhead(ctx, policy, d.Threshold)
		if !done && err == nil {
			done, err = g.compact(ctx, ReasonThreshold, policy, d.Threshold)
		}
		if err != nil {
			return nil, err
		}
		if !done {
			break // a hook skipped it
		}
	}

	resp, err := call(ctx, g.messages())
	if err != nil && IsContextOverflow(err) {
		if g.Disabled && !g.RecoverWhenDisabled {
			return nil, fmt.Errorf("context overflow and automatic compaction is disabled: %w", err)
		}
		if _, cerr := g.compact(ctx, ReasonOverflow, policy, 0); cerr != nil {
			return nil, fmt.Errorf("context overflow: %w (recovery failed: %v)", err, cerr)
		}
		resp, err = call(ctx, g.messages())
		if err != nil && IsContextOverflow(err) {
			return nil, fmt.Errorf("%w: %v", ErrOverflowPersists, err)
		}
	}
	if err != nil {
		return nil, err
	}
	if resp == nil {
		return nil, errors.New("compact: the model call returned no message")
	}
	if err := g.Log.Append(ctx, &Entry{Kind: KindMessage, Message: resp}); err != nil {
		return nil, fmt.Errorf("record the response: %w", err)
	}
	if g.Engine.OnEvent != nil {
		g.Engine.emit(Event{Type: EventTurnEnd, ContextUsage: g.Usage()})
	}
	g.startAhead(ctx, policy)
	return resp, nil
}

// guardAhead is a summary the guard writes ahead (see Guard.Ahead).
type guardAhead struct {
	done   chan struct{}
	cancel context.CancelFunc
	p      *Prepared
	err    error
}

// Close stops the summary the guard is writing ahead, if any, and waits
// for it to end. The guard stays usable.
func (g *Guard) Close() {
	if a := g.ahead; a != nil {
		a.cancel()
		<-a.done
		g.ahead = nil
	}
}

// startAhead starts writing the summary ahead when the context is past
// the early mark and none is being written.
func (g *Guard) startAhead(ctx context.Context, policy Policy) {
	if g.Ahead <= 0 || g.ahead != nil || g.Disabled {
		return
	}
	threshold, ok := policy.Threshold(g.Model)
	u := g.Usage()
	if !ok || threshold <= 0 || u.Tokens >= threshold || float64(u.Tokens) < g.Ahead*float64(threshold) {
		return
	}
	if c := BuildContext(g.Log.Path()); c.Compaction != nil && c.Compaction.Compaction != nil &&
		CompactedRecently(u.Tokens, c.Compaction.Compaction.TokensAfter, threshold, 0) {
		return
	}
	req := g.Request
	req.Reason = ReasonThreshold
	req.TargetTokens = policy.Target(g.Model)
	// The kept part grows until the threshold is crossed: keep that
	// much less now.
	keep := cmp.Or(req.KeepRecentTokens, g.Engine.KeepRecentTokens, DefaultKeepRecentTokens)
	req.KeepRecentTokens = max(keep-(threshold-u.Tokens), min(keep, 1000))
	snap := frozenLog(slices.Clone(g.Log.Path()))
	bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	a := &guardAhead{done: make(chan struct{}), cancel: cancel}
	g.ahead = a
	go func() {
		defer close(a.done)
		a.p, a.err = g.Engine.Prepare(bctx, snap, req)
	}()
}

// applyAhead records the summary written ahead, waiting for it if it is
// not ready. It reports false (and no error) when there is none or it no
// longer fits: the caller then compacts in line.
func (g *Guard) applyAhead(ctx context.Context, policy Policy, threshold int) (bool, error) {
	a := g.ahead
	if a == nil {
		return false, nil
	}
	select {
	case <-a.done:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	g.ahead = nil
	a.cancel()
	if a.err != nil || a.p == nil {
		return false, nil
	}
	before := g.Usage()
	req := g.Request
	req.Reason = ReasonThreshold
	req.TargetTokens = policy.Target(g.Model)
	if g.BeforeCompaction != nil {
		d, err := g.BeforeCompaction(ctx, ReasonThreshold, before)
		if err != nil {
			return false, fmt.Errorf("before-compaction hook: %w", err)
		}
		if d.Skip || d.Summary != "" {
			return false, nil // the in-line path honours it
		}
	}
	res, err := g.Engine.Apply(ctx, g.Log, a.p, req)
	if err != nil {
		return false, nil
	}
	if g.AfterCompaction != nil {
		g.AfterCompaction(ctx, res)
	}
	if after := g.Usage(); after.Tokens > threshold {
		return true, fmt.Errorf("%w: after the %s compaction the context is %d tokens, still above the threshold of %d",
			ErrStalled, ReasonThreshold, after.Tokens, threshold)
	}
	return true, nil
}

// frozenLog is a copy of a path that a summary written ahead reads while
// the conversation goes on; nothing is appended to it.
type frozenLog []*Entry

// Path returns the copy.
func (f frozenLog) Path() []*Entry { return f }

// Append refuses: Prepare records nothing.
func (f frozenLog) Append(context.Context, *Entry) error {
	return errors.New("compact: a frozen copy of the log is read-only")
}

// summarizedRecently reports whether the context's latest compaction
// recorded its size after and the context has grown too little since to
// compact again (CompactedRecently, the proxy's rule too).
func (g *Guard) summarizedRecently(d Decision) bool {
	c := BuildContext(g.Log.Path())
	if c.Compaction == nil || c.Compaction.Compaction == nil {
		return false
	}
	return CompactedRecently(d.Tokens, c.Compaction.Compaction.TokensAfter, d.Threshold, 0)
}

func (g *Guard) maxCompactions() int {
	if g.MaxCompactionsPerCall > 0 {
		return g.MaxCompactionsPerCall
	}
	return DefaultMaxCompactionsPerCall
}

// messages is the context as the model receives it. The continuation note
// follows an automatic compaction only while the task is unfinished: not
// when the last assistant message before the compaction ended its turn.
func (g *Guard) messages() []*Message {
	c := BuildContext(g.Log.Path())
	if c.Compaction != nil && AutomaticCompaction(c.Compaction) && taskFinished(c) {
		return ForModel(c.Messages)
	}
	return c.ModelMessages()
}

// taskFinished reports whether the newest assistant message of the
// context ended the turn (a final answer, no tool call pending) and
// nothing was asked after it.
func taskFinished(c *Context) bool {
	for i := len(c.Messages) - 1; i >= 0; i-- {
		m := c.Messages[i]
		switch m.Role {
		case RoleAssistant:
			return m.StopReason == StopEnd && len(m.ToolCalls()) == 0
		case RoleUser, RoleToolResult, RoleBash, RoleCustom:
			return false
		}
	}
	return false
}

// compact runs one compaction and checks that it helped. It reports
// whether a compaction (or a cheap-tier pass) happened.
func (g *Guard) compact(ctx context.Context, reason Reason, policy Policy, threshold int) (bool, error) {
	before := g.Usage()
	req := g.Request
	req.Reason = reason
	req.TargetTokens = policy.Target(g.Model)
	if reason == ReasonThreshold && !g.cheapTried {
		// The cheap tier alone is enough when it gets under the trigger.
		req.ThresholdTokens = threshold
	}
	if reason == ReasonOverflow && (req.TargetTokens == 0 || req.TargetTokens > before.Tokens/2) {
		// The provider counted more than the estimate: aim well below it.
		req.TargetTokens = before.Tokens / 2
	}
	if reason == ReasonOverflow {
		// Force: keep at most a quarter of what was sent verbatim.
		keep := req.KeepRecentTokens
		if keep <= 0 {
			keep = g.Engine.KeepRecentTokens
		}
		if keep <= 0 || keep > before.Tokens/4 {
			keep = max(before.Tokens/4, 1)
		}
		req.KeepRecentTokens = keep
	}
	if g.BeforeCompaction != nil {
		d, err := g.BeforeCompaction(ctx, reason, before)
		if err != nil {
			return false, fmt.Errorf("before-compaction hook: %w", err)
		}
		if d.Skip {
			return false, nil
		}
		req.Summary = d.Summary
	}
	res, err := g.Engine.Compact(ctx, g.Log, req)
	if errors.Is(err, ErrSkipped) {
		return false, nil // the engine's own hook skipped it
	}
	if errors.Is(err, ErrNothingToCompact) {
		// Nothing was written, and compacting again would find the same.
		return false, fmt.Errorf("%w: %s compaction: %w", ErrStalled, reason, err)
	}
	if err != nil {
		return false, fmt.Errorf("%s compaction: %w", reason, err)
	}
	if g.AfterCompaction != nil {
		g.AfterCompaction(ctx, res)
	}
	after := g.Usage()
	if threshold > 0 && after.Tokens <= threshold {
		return true, nil // under the trigger: the call can go ahead
	}
	if threshold > 0 && !res.Summarized() && !g.cheapTried {
		// The cheap tier alone did not get under the trigger (by the
		// guard's measure): the next compaction of this call summarizes.
		g.cheapTried = true
		return true, nil
	}
	minRatio := g.MinFreedRatio
	if minRatio <= 0 {
		minRatio = DefaultMinFreedRatio
	}
	freed := before.Tokens - after.Tokens
	if float64(freed) < minRatio*float64(before.Tokens) {
		return true, fmt.Errorf("%w: the %s compaction freed %d of %d tokens (less than %.0f%%)",
			ErrStalled, reason, freed, before.Tokens, 100*minRatio)
	}
	if threshold > 0 && after.Tokens > threshold {
		return true, fmt.Errorf("%w: after the %s compaction the context is %d tokens, still above the threshold of %d",
			ErrStalled, reason, after.Tokens, threshold)
	}
	return true, nil
}
