package compact

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// ErrPreparedStale means a prepared compaction no longer fits the log:
// its span is not at the start of the path any more (a branch was taken,
// another compaction was recorded since, or a message of the span was
// pinned after the summary was written). Nothing was recorded; the
// caller compacts in line as usual.
var ErrPreparedStale = errors.New("prepared compaction no longer applies")

// Prepared is a compaction written ahead of time (Engine.Prepare): the
// summary of a fixed span of a path, bound to the entry that begins the
// kept part, recorded later by Engine.Apply when the context reaches its
// trigger. The conversation goes on meanwhile: the kept part grows, the
// summary does not change.
//
// Its fields are plain data (JSON tags included), so that a caller can
// keep it where the conversation lives and apply it after a restart.
type Prepared struct {
	// Base is the id of the newest compaction entry on the path when the
	// summary was written ("" when there was none); the summary merges
	// it. It applies only while that is still the newest compaction.
	Base string `json:"base,omitempty"`
	// LeafID is the path's leaf when the summary was written: every
	// entry after it is new and belongs to the kept part.
	LeafID string `json:"leafId"`
	// FirstKeptID is the first entry kept verbatim: everything before
	// it (pinned messages apart) is replaced by Summary.
	FirstKeptID string `json:"firstKeptId"`
	// Summary is the text to record, file lists (and the pinned
	// messages' copy) included, as Compact would record it.
	Summary string `json:"summary"`
	// ReadFiles and ModifiedFiles are the file lists of the summary.
	ReadFiles     []string `json:"readFiles,omitempty"`
	ModifiedFiles []string `json:"modifiedFiles,omitempty"`
	// PinnedIDs are the pinned entries of the span, kept after the
	// summary.
	PinnedIDs []string `json:"pinnedIds,omitempty"`
	// SummaryTokens is the estimate of the summary as the context shows
	// it; SpanTokens what it replaces (the span and the previous summary).
	SummaryTokens int `json:"summaryTokens"`
	SpanTokens    int `json:"spanTokens"`
	// KeptTokens is the kept part (pinned messages included) from
	// FirstKeptID to LeafID, when the summary was written.
	KeptTokens int `json:"keptTokens"`
	// TokensBefore is the context's size when the summary was written.
	TokensBefore int `json:"tokensBefore"`
	// MessagesSummarized is the number of messages the summary replaces.
	MessagesSummarized int `json:"messagesSummarized"`
	// Reason is the reason the compaction will be recorded with.
	Reason Reason `json:"reason"`
	// Summarizer names what wrote the summary; Usage is its own usage.
	Summarizer string `json:"summarizer"`
	Usage      *Usage `json:"usage,omitempty"`
	// FallbackError is the summarizer's failure when the fallback wrote
	// the summary (redacted, one line), "" otherwise.
	FallbackError string `json:"fallbackError,omitempty"`
	// Refused lists the problems of model replies the review refused.
	Refused []string `json:"refused,omitempty"`
	// Details are the compaction entry's details (see Compaction.Details).
	Details map[string]any `json:"details,omitempty"`
	// Adjustments say what the budgets changed (see Result.Adjustments).
	Adjustments []string `json:"adjustments,omitempty"`
	// Duration is the time the summary took to write; Created when it
	// was done.
	Duration time.Duration `json:"duration"`
	Created  time.Time     `json:"created"`
}

// Prepare plans a compaction of the log's current path and has it
// summarized now, as Compact would, but records nothing: the returned
// Prepared is applied later with Apply, once the context reaches its
// trigger, so that the request that crosses it need not wait for a
// summary. The cheap tier does not run (its passes are edits of the log;
// Apply's remainder compaction runs it). Engine.BeforeCompaction is asked
// as by Compact; the events, the memory log and AfterCompaction come with
// Apply, when the compaction is recorded.
//
// req.Reason "" means ReasonThreshold. It fails as Compact does: wrapping
// ErrNothingToCompact when there is nothing to summarize, ErrNothingToGain
// when the summary would not shrink the context.
func (e *Engine) Prepare(ctx context.Context, log Log, req Request) (*Prepared, error) {
	if e.Summarizer == nil {
		return nil, errors.New("compact: Engine.Summarizer is nil")
	}
	if req.Reason == "" {
		req.Reason = ReasonThreshold
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if e.BeforeCompaction != nil {
		if err := e.askBefore(ctx, &req, e.measure(log)); err != nil {
			return nil, err
		}
	}
	started := e.now()
	pre := &Result{}
	plan, err := e.planWithin(log, req, pre)
	if err != nil {
		return nil, err
	}
	res, entry, err := e.summarizeEntry(ctx, plan, req, pre.Adjustments)
	if err != nil {
		return nil, err
	}
	c := entry.Compaction
	p := &Prepared{
		LeafID: plan.Path[len(plan.Path)-1].ID, FirstKeptID: c.FirstKeptID, Summary: c.Summary,
		ReadFiles: c.ReadFiles, ModifiedFiles: c.ModifiedFiles, PinnedIDs: plan.PinnedIDs,
		SummaryTokens: res.TokensAfter - plan.KeptTokens, SpanTokens: plan.SpanTokens, KeptTokens: plan.KeptTokens,
		TokensBefore: plan.TokensBefore, MessagesSummarized: plan.MessagesToSummarize(), Reason: req.Reason,
		Summarizer: res.Summarizer, Usage: res.Usage, Refused: res.Refused, Details: c.Details,
		Adjustments: res.Adjustments, Duration: e.now().Sub(started), Created: e.now(),
	}
	if plan.PreviousCompaction != nil {
		p.Base = plan.PreviousCompaction.ID
	}
	if res.FallbackErr != nil {
		p.FallbackError = oneLine(fmt.Sprint(c.Details["summarizerError"]))
	}
	e.logger().Debug("compaction prepared", "reason", req.Reason, "firstKept", p.FirstKeptID, "leaf", p.LeafID,
		"summaryTokens", p.SummaryTokens, "spanTokens", p.SpanTokens, "duration", p.Duration)
	return p, nil
}

// Apply records a prepared compaction in the log, whose path must still
// start with the span it was written for (the same newest compaction,
// FirstKeptID and LeafID on the path, no message of the span pinned
// since): the compaction entry is appended at once, with no summarizer
// call, its kept part everything from FirstKeptID to the leaf now. It
// fails with an error wrapping ErrPreparedStale when the path moved on
// otherwise, and with a *GainError (ErrNothingToGain) when the context
// after would not be smaller than now; nothing is recorded then.
//
// When req.TargetTokens is set and the context is still above it (the
// kept part grew too much since Prepare), the remainder is compacted in
// line with Compact(req), which merges the prepared summary:
// Result.Remainder is its result, and Result.RemainderErr its failure
// (the prepared compaction stays recorded either way). The start and end
// events, the memory log and AfterCompaction see the prepared
// compaction as they see any other.
func (e *Engine) Apply(ctx context.Context, log Log, p *Prepared, req Request) (*Result, error) {
	if p == nil {
		return nil, errors.New("compact: Apply of a nil Prepared")
	}
	if req.Reason == "" {
		req.Reason = p.Reason
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	started := e.now()
	path := log.Path()
	kept, leaf, prev := -1, -1, -1
	for i, en := range path {
		switch en.ID {
		case p.FirstKeptID:
			kept = i
		case p.LeafID:
			leaf = i
		}
		if en.Kind == KindCompaction && en.Compaction != nil {
			prev = i
		}
	}
	if p.LeafID == p.FirstKeptID {
		leaf = kept
	}
	if kept < 0 || leaf < kept {
		return nil, fmt.Errorf("%w: entry %q or %q is not on the path", ErrPreparedStale, p.FirstKeptID, p.LeafID)
	}
	base := ""
	if prev >= 0 {
		base = path[prev].ID
	}
	if base != p.Base {
		return nil, fmt.Errorf("%w: the newest compaction is %q, the summary was written after %q", ErrPreparedStale, base, p.Base)
	}
	pinned := Pinned(path)
	for _, en := range path[:kept] {
		if pinned[en.ID] && !slices.Contains(p.PinnedIDs, en.ID) {
			return nil, fmt.Errorf("%w: entry %q of the summarized span was pinned since", ErrPreparedStale, en.ID)
		}
	}
	sizes := tokenSizer(path, pinned)
	keptNow := p.KeptTokens
	for _, en := range path[leaf+1:] {
		if en.IsContextMessage() {
			keptNow += sizes(en)
		}
	}
	usage := MeasureWith(BuildContext(path), e.Count)
	if e.Count == nil {
		usage = measurePath(path, prev, sizes)
	}
	before := usage.Tokens
	after := p.SummaryTokens + keptNow
	if p.SummaryTokens >= p.SpanTokens {
		return nil, &GainError{SummaryTokens: p.SummaryTokens, SpanTokens: p.SpanTokens}
	}
	if before > 0 && after >= before {
		return nil, &GainError{SummaryTokens: p.SummaryTokens, SpanTokens: p.SpanTokens, TokensBefore: before, TokensAfter: after}
	}
	details := maps.Clone(p.Details)
	if details == nil {
		details = map[string]any{}
	}
	details["reason"] = string(req.Reason)
	details["ahead"] = true
	entry := &Entry{Kind: KindCompaction, Compaction: &Compaction{
		Summary: p.Summary, FirstKeptID: p.FirstKeptID, TokensBefore: before, TokensAfter: after,
		ReadFiles: p.ReadFiles, ModifiedFiles: p.ModifiedFiles, HasFileDetails: true, Details: details,
	}}
	e.emit(Event{Type: EventStart, Reason: req.Reason, TokensBefore: before, MessagesSummarized: p.MessagesSummarized, ContextUsage: usage})
	if err := log.Append(ctx, entry); err != nil {
		err = fmt.Errorf("record compaction: %w", err)
		e.emit(Event{Type: EventEnd, Reason: req.Reason, TokensBefore: before, MessagesSummarized: p.MessagesSummarized,
			Duration: e.now().Sub(started), Err: err})
		return nil, err
	}
	res := &Result{
		Plan: &Plan{Path: path, FirstKeptIndex: kept, FirstKeptID: p.FirstKeptID, Usage: usage, TokensBefore: before,
			SpanTokens: p.SpanTokens, KeptTokens: keptNow, PinnedIDs: p.PinnedIDs, ReadFiles: p.ReadFiles, ModifiedFiles: p.ModifiedFiles},
		Entry: entry, Summary: p.Summary, TokensBefore: before, TokensAfter: after, Summarizer: p.Summarizer,
		Usage: p.Usage, Duration: e.now().Sub(started), Refused: p.Refused, Adjustments: slices.Clone(p.Adjustments),
		Ahead: p,
	}
	if p.FallbackError != "" {
		res.FallbackErr = errors.New(p.FallbackError)
		if details["summaryRejected"] == true {
			res.FallbackErr = &SummaryRejectedError{Problems: []string{p.FallbackError}}
		}
	}
	if e.Memory != nil {
		res.MemoryErr = e.remember(ctx, req, res)
	}
	end := Event{Type: EventEnd, Reason: req.Reason, TokensBefore: before, TokensAfter: after, MessagesSummarized: p.MessagesSummarized,
		Duration: res.Duration, Summarizer: p.Summarizer, Usage: p.Usage, FallbackErr: res.FallbackErr, Adjustments: res.Adjustments}
	if e.OnEvent != nil {
		end.ContextUsage = e.measure(log)
	}
	e.emit(end)
	e.logger().Debug("compacted with a prepared summary", "reason", req.Reason, "tokensBefore", before, "tokensAfter", after,
		"firstKept", p.FirstKeptID)
	if e.AfterCompaction != nil {
		e.AfterCompaction(ctx, res)
	}
	if req.TargetTokens > 0 && after > req.TargetTokens {
		// The kept part grew past the target since the summary was
		// written: summarize what grew, merging the prepared summary.
		rr, err := e.Compact(ctx, log, req)
		res.Remainder = rr
		if err != nil && !errors.Is(err, ErrNothingToCompact) {
			res.RemainderErr = err
		}
	}
	return res, nil
}

// Last returns the newest compaction entry the result recorded: the
// remainder's when Apply compacted it, else Entry (nil when none).
func (r *Result) Last() (*Entry, *Result) {
	if r.Remainder != nil && r.Remainder.Entry != nil {
		return r.Remainder.Entry, r.Remainder
	}
	return r.Entry, r
}
