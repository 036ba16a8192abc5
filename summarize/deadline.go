package summarize

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/compactkit/compact"
)

// ErrDeadline is the cause of the context a Deadline passes to its
// summarizer once the time limit has run out; a DeadlineError wraps it.
var ErrDeadline = errors.New("summarize: the time limit of the summary ran out")

// Deadline holds a summarizer to one time limit for all its calls
// together, counted from the start of the first: one compaction's history
// summary and the summary of a split turn's start share it. When the
// limit runs out the calls fail with a *DeadlineError, and the engine's
// fallback, which runs on the caller's context, still has the caller's
// time to write the offline summary.
//
// The command line (compact run --total-timeout) and the proxy
// (Config.SummaryTimeout) both use it. Use a new Deadline per compaction;
// it is safe for concurrent use.
type Deadline struct {
	// Summarizer is the summarizer held to the limit.
	Summarizer compact.Summarizer
	// Limit is the time all calls together may take; 0 or less sets no
	// limit of the Deadline's own.
	Limit time.Duration
	// Now is the clock that starts the limit; nil means time.Now.
	Now func() time.Time

	once     sync.Once
	deadline time.Time
}

// WithDeadline returns s held to limit for all its calls together (see
// Deadline).
func WithDeadline(s compact.Summarizer, limit time.Duration) *Deadline {
	return &Deadline{Summarizer: s, Limit: limit}
}

// Summarize calls the summarizer within what is left of the limit. An
// error caused by the limit running out is a *DeadlineError; the
// caller's own cancellation or deadline is passed on as it is.
func (d *Deadline) Summarize(ctx context.Context, req *compact.SummaryRequest) (*compact.Summary, error) {
	if d.Limit <= 0 {
		return d.Summarizer.Summarize(ctx, req)
	}
	d.once.Do(func() {
		now := d.Now
		if now == nil {
			now = time.Now
		}
		d.deadline = now().Add(d.Limit)
	})
	dctx, cancel := context.WithDeadlineCause(ctx, d.deadline, ErrDeadline)
	defer cancel()
	s, err := d.Summarizer.Summarize(dctx, req)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(dctx), ErrDeadline) {
		return nil, &DeadlineError{Limit: d.Limit, Err: err}
	}
	return s, err
}

// DeadlineError is the error of a summary whose Deadline ran out: Err is
// what the summarizer returned (usually wrapping
// context.DeadlineExceeded). It matches ErrDeadline and Err with
// errors.Is.
type DeadlineError struct {
	// Limit is the Deadline's limit.
	Limit time.Duration
	// Err is the summarizer's error.
	Err error
}

// Error names the limit and the summarizer's error.
func (e *DeadlineError) Error() string {
	return fmt.Sprintf("the time limit of the summary (%v) ran out: %v", e.Limit, e.Err)
}

// Unwrap returns ErrDeadline and the summarizer's error.
func (e *DeadlineError) Unwrap() []error { return []error{ErrDeadline, e.Err} }
