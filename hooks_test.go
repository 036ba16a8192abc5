package compact

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestEngineHooks: the engine's own before and after hooks, which every
// caller (Guard, CLI, proxy) gets, not only the Guard's.
func TestEngineHooks(t *testing.T) {
	ctx := context.Background()
	t.Run("skip", func(t *testing.T) {
		log := NewSliceLog(splitSession().path()...)
		n := len(log.Path())
		rec := &recorder{}
		var seen ContextUsage
		eng := &Engine{Summarizer: rec, BeforeCompaction: func(_ context.Context, req Request, u ContextUsage) (HookDecision, error) {
			seen = u
			return HookDecision{Skip: true}, nil
		}}
		_, err := eng.Compact(ctx, log, Request{Reason: ReasonThreshold})
		if !errors.Is(err, ErrSkipped) {
			t.Fatalf("err %v, want ErrSkipped", err)
		}
		if len(log.Path()) != n || len(rec.reqs) != 0 {
			t.Error("a skipped compaction wrote or summarized")
		}
		if want := Measure(BuildContext(log.Path())); seen != want || seen.Tokens == 0 {
			t.Errorf("hook saw %+v, want %+v", seen, want)
		}
	})
	t.Run("summary", func(t *testing.T) {
		log := NewSliceLog(splitSession().path()...)
		rec := &recorder{}
		var after []*Result
		eng := &Engine{Summarizer: rec,
			BeforeCompaction: func(context.Context, Request, ContextUsage) (HookDecision, error) {
				return HookDecision{Summary: "## Goal\nwritten by the hook"}, nil
			},
			AfterCompaction: func(_ context.Context, r *Result) { after = append(after, r) }}
		res, err := eng.Compact(ctx, log, Request{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rec.reqs) != 0 || !strings.Contains(res.Summary, "written by the hook") || res.Summarizer != "hook" {
			t.Errorf("summary %q by %q after %d summarizer calls", res.Summary, res.Summarizer, len(rec.reqs))
		}
		if len(after) != 1 || after[0] != res {
			t.Errorf("AfterCompaction saw %d results", len(after))
		}
	})
	t.Run("error", func(t *testing.T) {
		boom := errors.New("boom")
		eng := &Engine{Summarizer: &recorder{}, BeforeCompaction: func(context.Context, Request, ContextUsage) (HookDecision, error) {
			return HookDecision{}, boom
		}}
		if _, err := eng.Compact(ctx, NewSliceLog(splitSession().path()...), Request{}); !errors.Is(err, boom) {
			t.Errorf("err %v, want it to wrap the hook's", err)
		}
	})
}

// TestEventsCarryContextUsage: the start event has the context's measure
// before the compaction, the end event the measure of the rebuilt one.
func TestEventsCarryContextUsage(t *testing.T) {
	log := NewSliceLog(splitSession().path()...)
	before := Measure(BuildContext(log.Path()))
	var events []Event
	eng := &Engine{Summarizer: &recorder{}, OnEvent: func(e Event) { events = append(events, e) }}
	res, err := eng.Compact(context.Background(), log, Request{})
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 {
		t.Fatalf("%d events", len(events))
	}
	if events[0].ContextUsage != before {
		t.Errorf("start: %+v, want %+v", events[0].ContextUsage, before)
	}
	after := Measure(BuildContext(log.Path()))
	if events[1].ContextUsage != after || after.Tokens != res.TokensAfter {
		t.Errorf("end: %+v, want %+v (TokensAfter %d)", events[1].ContextUsage, after, res.TokensAfter)
	}
}

// TestGuardHonoursEngineSkip: when the engine's hook skips, the guard
// calls the model as things are.
func TestGuardHonoursEngineSkip(t *testing.T) {
	b := overheadSession(8, 1500, 40000)
	log := NewSliceLog(b.path()...)
	skipped := 0
	var turns []ContextUsage
	g := &Guard{
		Engine: &Engine{Summarizer: &recorder{},
			BeforeCompaction: func(context.Context, Request, ContextUsage) (HookDecision, error) {
				skipped++
				return HookDecision{Skip: true}, nil
			},
			OnEvent: func(e Event) {
				if e.Type == EventTurnEnd {
					turns = append(turns, e.ContextUsage)
				}
			}},
		Log:   log,
		Model: ModelInfo{ID: "small", ContextWindow: 32768, MaxOutput: 4096},
	}
	model := &fakeModel{window: 1 << 20, factor: 1, finish: true}
	if _, err := g.Call(context.Background(), model.call); err != nil {
		t.Fatal(err)
	}
	if skipped != 1 || model.calls != 1 {
		t.Errorf("%d skips, %d model calls; want 1 and 1", skipped, model.calls)
	}
	if len(turns) != 1 || turns[0] != g.Usage() {
		t.Errorf("turn_end events %+v, want one with the context's usage %+v", turns, g.Usage())
	}
}
