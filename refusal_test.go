package compact

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestPlanRefusalStatesNumbers checks that every "nothing to compact"
// of the planner says what it compared: the messages' size and the kept
// budget, and the context's size when that is larger than its messages.
func TestPlanRefusalStatesNumbers(t *testing.T) {
	tests := []struct {
		name string
		path func() []*Entry
		keep int
		want []string
		not  []string
	}{
		{
			name: "one message larger than the budget",
			path: func() []*Entry {
				var b builder
				b.user(100000)
				return b.path()
			},
			keep: 20000,
			want: []string{"1 message", "~100000 tokens", "more than the 20000 tokens kept verbatim", "entry e1"},
			not:  []string{"fit"},
		},
		{
			name: "everything fits",
			path: func() []*Entry {
				var b builder
				b.user(10)
				b.assistant(10)
				return b.path()
			},
			keep: 20000,
			want: []string{"all 2 messages", "~20 tokens", "fit in the 20000 tokens kept verbatim"},
			not:  []string{"context"},
		},
		{
			name: "provider usage larger than the messages",
			path: func() []*Entry {
				var b builder
				b.user(10)
				a := b.assistant(10)
				a.Message.Usage = &Usage{Input: 154207, Output: 30}
				return b.path()
			},
			keep: 20000,
			want: []string{"all 2 messages", "~20 tokens", "20000 tokens kept verbatim", "the context is 154237 tokens", "154217"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := PlanCompaction(tt.path(), PlanOptions{KeepRecentTokens: tt.keep})
			if !errors.Is(err, ErrNothingToCompact) {
				t.Fatalf("err = %v, want ErrNothingToCompact", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %q, want it to say %q", err, w)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(err.Error(), w) {
					t.Errorf("err = %q, must not say %q", err, w)
				}
			}
		})
	}
}

// fixedSummarizer writes the same text for every request.
type fixedSummarizer string

func (s fixedSummarizer) Summarize(context.Context, *SummaryRequest) (*Summary, error) {
	return &Summary{Text: string(s), Summarizer: "fixed"}, nil
}

// TestCompactNeverGrowsTheContext checks that a compaction whose summary
// would be as large as what it replaces, or larger, is not recorded, and
// that the error says so with the numbers and is told apart with
// errors.Is and errors.As.
func TestCompactNeverGrowsTheContext(t *testing.T) {
	session := func() []*Entry {
		var b builder
		b.user(300) // the span: ~300 + ~100 tokens
		b.assistant(100)
		b.user(50)
		b.assistant(50)
		return b.path()
	}
	tests := []struct {
		name    string
		summary string
		gain    bool
	}{
		{"shorter summary", strings.Repeat("s", 4*50), true},
		{"summary as large as the span", strings.Repeat("s", 4*400), false},
		{"larger summary", strings.Repeat("s", 4*2000), false},
	}
	for _, tt := range tests {
		for _, hook := range []bool{false, true} {
			name := tt.name
			req := Request{KeepRecentTokens: 100}
			eng := &Engine{Summarizer: fixedSummarizer(tt.summary)}
			if hook {
				name += " from a hook"
				eng.Summarizer = fixedSummarizer("")
				req.Summary = tt.summary
			}
			t.Run(name, func(t *testing.T) {
				log := NewSliceLog(session()...)
				n := len(log.Path())
				res, err := eng.Compact(context.Background(), log, req)
				if tt.gain {
					if err != nil {
						t.Fatal(err)
					}
					if len(log.Path()) != n+1 || res.TokensAfter >= res.TokensBefore {
						t.Fatalf("entries %d -> %d, tokens %d -> %d", n, len(log.Path()), res.TokensBefore, res.TokensAfter)
					}
					return
				}
				if !errors.Is(err, ErrNothingToGain) || !errors.Is(err, ErrNothingToCompact) {
					t.Fatalf("err = %v, want ErrNothingToGain (and ErrNothingToCompact)", err)
				}
				var ge *GainError
				if !errors.As(err, &ge) {
					t.Fatalf("err = %v, not a *GainError", err)
				}
				if ge.SpanTokens != 400 || ge.SummaryTokens < ge.SpanTokens {
					t.Errorf("summary %d tokens, span %d; want span 400 and a summary at least as large", ge.SummaryTokens, ge.SpanTokens)
				}
				if !strings.HasPrefix(err.Error(), "nothing to gain: the summary would be ~") || !strings.Contains(err.Error(), "the span it replaces ~400") {
					t.Errorf("err = %q", err)
				}
				if len(log.Path()) != n {
					t.Fatalf("%d entries appended", len(log.Path())-n)
				}
			})
		}
	}
}

// TestCompactNoGainAfterCheapPasses: when the cheap tier recorded passes
// and the summary would then not shrink the context, the passes are the
// compaction: no error, no compaction entry, one start and one end event.
func TestCompactNoGainAfterCheapPasses(t *testing.T) {
	var b builder
	for i := 0; i < 12; i++ { // old turns with large tool output
		b.user(20)
		b.result(b.call("read", `{"path":"a.go"}`), "read", 3000)
		b.assistant(20)
	}
	log := NewSliceLog(b.path()...)
	var events []Event
	eng := &Engine{Summarizer: fixedSummarizer(strings.Repeat("s ", 100000)), Ladder: &Ladder{},
		OnEvent: func(e Event) { events = append(events, e) }}
	res, err := eng.Compact(context.Background(), log, Request{Reason: ReasonOverflow, TargetTokens: 20000, KeepRecentTokens: 100})
	if err != nil {
		t.Fatal(err)
	}
	if res.Summarized() || res.Ladder == nil || len(res.Ladder.strategies()) == 0 {
		t.Fatalf("summarized %v, ladder %+v", res.Summarized(), res.Ladder)
	}
	for _, e := range log.Path() {
		if e.Kind == KindCompaction {
			t.Fatal("a compaction entry was recorded")
		}
	}
	if len(events) != 2 || events[0].Type != EventStart || events[1].Type != EventEnd || events[1].Err != nil {
		t.Fatalf("events %+v, want one start and one end without error", events)
	}
}
