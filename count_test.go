package compact

import (
	"context"
	"testing"
)

// countSession ends with a reported usage of 1,000 tokens and two
// messages after it.
func countSession() *SliceLog {
	var b builder
	b.user(2000)
	a := b.assistant(10)
	a.Message.Usage = &Usage{Input: 1000}
	b.user(8000)
	b.user(8000)
	return NewSliceLog(b.path()...)
}

// perMessage counts every message as 7 tokens.
func perMessage(*Message) int { return 7 }

func TestEngineCount(t *testing.T) {
	var got []ContextUsage
	eng := &Engine{Summarizer: &recorder{}, KeepRecentTokens: 1000, Count: perMessage,
		OnEvent: func(ev Event) {
			if ev.Type == EventStart {
				got = append(got, ev.ContextUsage)
			}
		}}
	var hook ContextUsage
	eng.BeforeCompaction = func(_ context.Context, _ Request, u ContextUsage) (HookDecision, error) {
		hook = u
		return HookDecision{}, nil
	}
	if _, err := eng.Compact(context.Background(), countSession(), Request{}); err != nil {
		t.Fatal(err)
	}
	want := ContextUsage{Tokens: 1014, UsageTokens: 1000, TrailingTokens: 14, LastUsageIndex: 1}
	if len(got) != 1 || got[0] != want || hook != want {
		t.Errorf("start event %v, hook %v; want %v (two trailing messages counted by Count)", got, hook, want)
	}
}

func TestGuardCount(t *testing.T) {
	g := &Guard{Engine: &Engine{Summarizer: &recorder{}}, Log: countSession(), Calibrator: &Calibrator{}}
	if u := g.Usage(); u.TrailingTokens < 16000 {
		t.Fatalf("without Count the trailing messages measure %d", u.TrailingTokens)
	}
	g.Count = perMessage
	if u := g.Usage(); u.Tokens != 1014 {
		t.Errorf("with Count the context measures %d, want 1014", u.Tokens)
	}
}
