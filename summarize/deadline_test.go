package summarize

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact"
)

func TestDeadline(t *testing.T) {
	start := time.Now()
	var deadlines []time.Time
	inner := compact.SummarizerFunc(func(ctx context.Context, _ *compact.SummaryRequest) (*compact.Summary, error) {
		d, _ := ctx.Deadline()
		deadlines = append(deadlines, d)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("model: %w", err)
		}
		return &compact.Summary{Text: "ok"}, nil
	})
	clock := start
	d := &Deadline{Summarizer: inner, Limit: time.Hour, Now: func() time.Time { return clock }}
	// Two calls share the deadline set when the first started.
	for i := 0; i < 2; i++ {
		if s, err := d.Summarize(context.Background(), &compact.SummaryRequest{}); err != nil || s.Text != "ok" {
			t.Fatalf("call %d: %v %v", i+1, s, err)
		}
		clock = clock.Add(30 * time.Minute)
	}
	if len(deadlines) != 2 || !deadlines[0].Equal(start.Add(time.Hour)) || !deadlines[1].Equal(deadlines[0]) {
		t.Errorf("deadlines %v, want both at %v", deadlines, start.Add(time.Hour))
	}

	for _, tc := range []struct {
		name     string
		d        *Deadline
		ctx      func() context.Context
		deadline bool // the error is a *DeadlineError
		want     error
	}{
		{"limit already past", &Deadline{Summarizer: inner, Limit: time.Minute, Now: func() time.Time { return start.Add(-time.Hour) }},
			context.Background, true, context.DeadlineExceeded},
		{"caller cancelled", WithDeadline(inner, time.Hour), func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, false, context.Canceled},
		{"no limit", WithDeadline(inner, 0), context.Background, false, nil},
	} {
		_, err := tc.d.Summarize(tc.ctx(), &compact.SummaryRequest{})
		var de *DeadlineError
		if errors.As(err, &de) != tc.deadline || errors.Is(err, ErrDeadline) != tc.deadline || !errors.Is(err, tc.want) {
			t.Errorf("%s: %v", tc.name, err)
		}
		if tc.deadline && (de.Limit != tc.d.Limit || !strings.Contains(err.Error(), "time limit of the summary (1m0s) ran out: model:")) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
