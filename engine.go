package compact

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
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
)

// EventType distinguishes the events of a compaction.
type EventType string

// Event types.
const (
	EventStart EventType = "compaction_start"
	EventEnd   EventType = "compaction_end"
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
}

// Engine plans compactions, has them summarized and records them. The
// zero value is not usable: Summarizer must be set.
type Engine struct {
	// Summarizer writes the summaries.
	Summarizer Summarizer
	// KeepRecentTokens is the size of the part kept verbatim; 0 means
	// DefaultKeepRecentTokens.
	KeepRecentTokens int
	// OnEvent, when set, receives the start and end of every compaction.
	// It is called synchronously.
	OnEvent func(Event)
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
	// KeepRecentTokens overrides the engine's setting when positive.
	KeepRecentTokens int
	// MaxTokens is the output budget of the history summary, passed to the
	// summarizer (the turn prefix gets half); 0 leaves it to the
	// summarizer. pi uses 0.8 x its reserve (13107 tokens by default).
	MaxTokens int
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

// Plan returns the plan for the log's current path without summarizing.
func (e *Engine) Plan(log Log, req Request) (*Plan, error) {
	keep := req.KeepRecentTokens
	if keep <= 0 {
		keep = e.KeepRecentTokens
	}
	return PlanCompaction(log.Path(), PlanOptions{KeepRecentTokens: keep})
}

// Compact plans a compaction of the log's current path, has it
// summarized, and appends the compaction entry. If planning finds nothing
// to summarize it returns an error wrapping ErrNothingToCompact and the
// summarizer is not called. If the summarizer fails or ctx is cancelled,
// nothing is appended and the error is returned.
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
	started := e.now()
	plan, err := e.Plan(log, req)
	if err != nil {
		return nil, err
	}
	e.emit(Event{Type: EventStart, Reason: req.Reason, TokensBefore: plan.TokensBefore, MessagesSummarized: plan.MessagesToSummarize()})
	res, err := e.summarizeAndRecord(ctx, log, plan, req)
	end := Event{Type: EventEnd, Reason: req.Reason, TokensBefore: plan.TokensBefore, MessagesSummarized: plan.MessagesToSummarize(), Duration: e.now().Sub(started)}
	if err != nil {
		end.Err = err
		e.emit(end)
		return nil, err
	}
	res.Duration = end.Duration
	end.TokensAfter, end.Summarizer, end.Usage = res.TokensAfter, res.Summarizer, res.Usage
	e.emit(end)
	e.logger().Debug("compacted", "reason", req.Reason, "tokensBefore", res.TokensBefore, "tokensAfter", res.TokensAfter,
		"messages", plan.MessagesToSummarize(), "firstKept", plan.FirstKeptID)
	return res, nil
}

func (e *Engine) emit(ev Event) {
	if e.OnEvent != nil {
		e.OnEvent(ev)
	}
}

func (e *Engine) summarizeAndRecord(ctx context.Context, log Log, plan *Plan, req Request) (*Result, error) {
	res := &Result{Plan: plan, TokensBefore: plan.TokensBefore}
	var parts []string
	var usage Usage
	hasUsage := false
	note := func(s *Summary) {
		if s.Summarizer != "" && !strings.Contains(res.Summarizer, s.Summarizer) {
			if res.Summarizer != "" {
				res.Summarizer += ", "
			}
			res.Summarizer += s.Summarizer
		}
		if s.Usage != nil {
			hasUsage = true
			usage.Input += s.Usage.Input
			usage.Output += s.Usage.Output
			usage.CacheRead += s.Usage.CacheRead
			usage.CacheWrite += s.Usage.CacheWrite
			usage.Total += s.Usage.Total
		}
	}

	switch {
	case len(plan.Messages) > 0:
		s, err := e.Summarizer.Summarize(ctx, &SummaryRequest{
			Kind: SummaryHistory, Messages: plan.Messages, PreviousSummary: plan.PreviousSummary,
			Instructions: req.Instructions, ReadFiles: plan.ReadFiles, ModifiedFiles: plan.ModifiedFiles,
			MaxTokens: req.MaxTokens,
		})
		if err != nil {
			return nil, fmt.Errorf("summarize history: %w", err)
		}
		note(s)
		parts = append(parts, strings.TrimSpace(s.Text))
	case plan.PreviousSummary != "":
		parts = append(parts, plan.PreviousSummary)
	}
	if plan.IsSplitTurn && len(plan.TurnPrefix) > 0 {
		s, err := e.Summarizer.Summarize(ctx, &SummaryRequest{
			Kind: SummaryTurnPrefix, Messages: plan.TurnPrefix, Instructions: req.Instructions,
			ReadFiles: plan.ReadFiles, ModifiedFiles: plan.ModifiedFiles, MaxTokens: req.MaxTokens / 2,
		})
		if err != nil {
			return nil, fmt.Errorf("summarize turn prefix: %w", err)
		}
		note(s)
		prefix := strings.TrimSpace(s.Text)
		if len(parts) == 0 {
			parts = append(parts, "No earlier history.")
		}
		parts = append(parts, "---\n\n**The current turn began before the kept messages. Its start:**\n\n"+prefix)
	}
	if files := FormatFileLists(plan.ReadFiles, plan.ModifiedFiles); files != "" {
		parts = append(parts, files)
	}
	summary := strings.Join(parts, "\n\n")
	if hasUsage {
		res.Usage = &usage
	}
	res.Summary = summary
	res.TokensAfter = (utf16Len(summary)+3)/4 + plan.KeptTokens

	if err := ctx.Err(); err != nil {
		return nil, err
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
			Details: map[string]any{
				"reason":     string(req.Reason),
				"summarizer": res.Summarizer,
			},
		},
	}
	if err := log.Append(ctx, entry); err != nil {
		return nil, fmt.Errorf("record compaction: %w", err)
	}
	res.Entry = entry
	return res, nil
}
