package compact

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// aheadSession is a long history of turns of about 1,100 tokens each.
func aheadSession(turns int) *builder {
	var b builder
	for range turns {
		b.user(100)
		b.result(b.call("read", `{"path":"a.go"}`), "read", 900)
		b.assistant(100)
	}
	return &b
}

func TestPrepareAndApply(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		// grow is the turns added between Prepare and Apply; change
		// alters the log meanwhile.
		grow   int
		change func(t *testing.T, log *SliceLog)
		target int
		// want: "applied", "remainder" or an error matched with errors.Is.
		want    string
		wantErr error
	}{
		{name: "applied as prepared", grow: 3, want: "applied"},
		{name: "kept part grew past the target: remainder compacted", grow: 30, target: 20000, want: "remainder"},
		{name: "compacted since: stale", grow: 1, change: func(t *testing.T, log *SliceLog) {
			if _, err := (&Engine{Summarizer: &recorder{}}).Compact(ctx, log, Request{Reason: ReasonThreshold}); err != nil {
				t.Fatal(err)
			}
		}, wantErr: ErrPreparedStale},
		{name: "branched away from the leaf: stale", change: func(t *testing.T, log *SliceLog) {
			if err := log.Branch(log.Path()[3].ID); err != nil {
				t.Fatal(err)
			}
		}, wantErr: ErrPreparedStale},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := aheadSession(40)
			log := NewSliceLog(b.path()...)
			rec := &recorder{}
			var events []Event
			eng := &Engine{Summarizer: rec, KeepRecentTokens: 8000, OnEvent: func(e Event) { events = append(events, e) }}
			p, err := eng.Prepare(ctx, log, Request{})
			if err != nil {
				t.Fatal(err)
			}
			if len(rec.reqs) == 0 || len(log.Path()) != len(b.path()) || len(events) != 0 {
				t.Fatalf("Prepare: %d summary requests, path %d entries (want %d), %d events", len(rec.reqs), len(log.Path()), len(b.path()), len(events))
			}
			// A Prepared survives a round trip through JSON (a store).
			raw, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			var back Prepared
			if err := json.Unmarshal(raw, &back); err != nil {
				t.Fatal(err)
			}
			for range tt.grow {
				for _, m := range []*Message{TextMessage(RoleUser, strings.Repeat("n", 400)), TextMessage(RoleAssistant, strings.Repeat("m", 4000))} {
					if _, err := log.AppendMessage(ctx, m); err != nil {
						t.Fatal(err)
					}
				}
			}
			if tt.change != nil {
				tt.change(t, log)
			}
			calls := len(rec.reqs)
			before := Measure(BuildContext(log.Path())).Tokens
			n := len(log.Path())
			res, err := eng.Apply(ctx, log, &back, Request{Reason: ReasonThreshold, TargetTokens: tt.target})
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || len(log.Path()) != n {
					t.Fatalf("Apply: %v, path %d -> %d entries; want %v and nothing recorded", err, n, len(log.Path()), tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c := res.Entry.Compaction
			if c.FirstKeptID != p.FirstKeptID || c.Summary != p.Summary || res.Ahead == nil || c.Details["ahead"] != true {
				t.Errorf("recorded %+v, want the prepared summary kept from %s", c, p.FirstKeptID)
			}
			after := Measure(BuildContext(log.Path())).Tokens
			if after >= before {
				t.Errorf("context %d -> %d: not smaller", before, after)
			}
			switch tt.want {
			case "applied":
				if len(rec.reqs) != calls || res.Remainder != nil {
					t.Errorf("Apply called the summarizer %d times (remainder %v); want none", len(rec.reqs)-calls, res.Remainder != nil)
				}
				if len(events) != 2 || events[0].Type != EventStart || events[1].Type != EventEnd || events[1].Summarizer != "test" {
					t.Errorf("events %+v, want start and end", events)
				}
			case "remainder":
				if res.Remainder == nil || !res.Remainder.Summarized() || res.RemainderErr != nil {
					t.Fatalf("remainder %+v (%v), want a second compaction", res.Remainder, res.RemainderErr)
				}
				last, _ := res.Last()
				merged := false
				for _, r := range rec.reqs[calls:] {
					merged = merged || (r.Kind == SummaryHistory && strings.Contains(r.PreviousSummary, "## Goal"))
				}
				if !merged || last != res.Remainder.Entry {
					t.Errorf("the remainder did not merge the prepared summary")
				}
				if after > tt.target {
					t.Errorf("context %d after the remainder, above the target %d", after, tt.target)
				}
			}
		})
	}
}

func TestApplyNeverWorseThanNothing(t *testing.T) {
	ctx := context.Background()
	log := NewSliceLog(aheadSession(20).path()...)
	eng := &Engine{Summarizer: &recorder{}, KeepRecentTokens: 4000}
	p, err := eng.Prepare(ctx, log, Request{})
	if err != nil {
		t.Fatal(err)
	}
	p.SummaryTokens = p.SpanTokens // a summary as large as what it replaces
	if _, err := eng.Apply(ctx, log, p, Request{}); !errors.Is(err, ErrNothingToGain) {
		t.Fatalf("Apply of a summary that gains nothing: %v, want ErrNothingToGain", err)
	}
}
