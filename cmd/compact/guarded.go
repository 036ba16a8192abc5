package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/redact"
	"github.com/compactkit/compact/summarize"
)

// guardedSummarizer wraps the model summarizer of one run of "compact
// run". It holds the whole summary, every call of one run together (the
// history and the start of a split turn), to one deadline
// (summarize.Deadline, --total-timeout); it says in its errors which time
// limit ran out, --timeout or --total-timeout; and it takes the
// configured keys out of their text, so that neither the warning, the
// JSON report nor the session file of a fallback can hold one.
type guardedSummarizer struct {
	inner *summarize.Deadline
	// timeout is the per-request limit in effect, for the messages.
	timeout time.Duration
	// secrets are redacted from errors (see redact.String).
	secrets []string
}

// Summarize calls the wrapped summarizer within what is left of the total
// time limit.
func (g *guardedSummarizer) Summarize(ctx context.Context, req *compact.SummaryRequest) (*compact.Summary, error) {
	s, err := g.inner.Summarize(ctx, req)
	if err == nil {
		return s, nil
	}
	var total *summarize.DeadlineError
	switch {
	case errors.As(err, &total):
		err = fmt.Errorf("the time limit of the whole summary (--total-timeout %v) ran out: %w", total.Limit, total.Err)
	case ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded):
		err = fmt.Errorf("%w (the time limit of one request, --timeout %v, ran out)", err, g.timeout)
	}
	return nil, redact.Error(err, g.secrets...)
}

// redact takes the keys this run knows of out of s: the one configured
// for the summarizer and those in the environment (see redact.String).
func (a *app) redact(s string) string {
	return redact.String(s, a.secrets()...)
}

// secrets returns the keys this run knows of.
func (a *app) secrets() []string {
	keys := append([]string(nil), a.apiKeys...)
	for _, name := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY"} {
		if v := a.getenv(name); v != "" {
			keys = append(keys, v)
		}
	}
	return keys
}
