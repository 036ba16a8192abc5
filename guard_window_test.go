package compact

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// overheadSession is a session whose provider counts far more than the
// messages' estimate (a system prompt and tool schemas are part of every
// request): the newest usage says usage tokens, while every message
// together is estimated well under DefaultKeepRecentTokens.
func overheadSession(rounds, resultTokens, usage int) *builder {
	var b builder
	b.user(200)
	for i := 0; i < rounds; i++ {
		b.result(b.call("read", `{"path":"main.go"}`), "read", resultTokens)
		b.assistant(100)
		b.user(300)
	}
	a := TextMessage(RoleAssistant, "Reading the next file.")
	a.StopReason, a.Usage, a.Model = StopEnd, &Usage{Input: usage, Output: 30}, "small"
	b.msg(a)
	b.user(50)
	return &b
}

func estimateOf(path []*Entry) int {
	n := 0
	for _, m := range BuildContext(path).Messages {
		n += m.Tokens()
	}
	return n
}

// Over the trigger of a small window, the kept part adapts to the target
// whatever KeepRecentTokens says: the guard compacts and the call goes
// ahead, although every message fits in the default 20,000 kept tokens.
func TestGuardKeptPartAdaptsToWindow(t *testing.T) {
	for _, ladder := range []*Ladder{nil, {}} {
		b := overheadSession(8, 1500, 40000)
		if est := estimateOf(b.path()); est >= DefaultKeepRecentTokens {
			t.Fatalf("fixture: %d tokens estimated, want under the keep budget", est)
		}
		log := NewSliceLog(b.path()...)
		var events []Event
		var after []*Result
		g := &Guard{
			Engine:          &Engine{Summarizer: &recorder{}, Ladder: ladder, OnEvent: func(e Event) { events = append(events, e) }},
			Log:             log,
			Model:           ModelInfo{ID: "small", ContextWindow: 32768, MaxOutput: 4096},
			AfterCompaction: func(_ context.Context, r *Result) { after = append(after, r) },
		}
		model := &fakeModel{window: 32768, factor: 1, finish: true}
		if _, err := g.Call(context.Background(), model.call); err != nil {
			t.Fatalf("ladder %v: %v", ladder != nil, err)
		}
		if model.calls != 1 || len(after) != 1 || !after[0].Summarized() {
			t.Fatalf("ladder %v: %d model calls, %d compactions seen by AfterCompaction", ladder != nil, model.calls, len(after))
		}
		res := after[0]
		if res.Plan.KeptTokens > 32768/2/2 {
			t.Errorf("kept %d tokens, want at most half the target", res.Plan.KeptTokens)
		}
		adj := strings.Join(res.Adjustments, "; ")
		var end Event // the last compaction_end (a turn_end follows it)
		for _, e := range events {
			if e.Type == EventEnd {
				end = e
			}
		}
		if !strings.Contains(adj, "kept part reduced") || strings.Join(end.Adjustments, "; ") != adj {
			t.Errorf("adjustments %q, event %q", adj, end.Adjustments)
		}
	}
}

// The engine alone: with a target, an over-full context whose messages
// all fit in the keep budget is still compacted; under the target it is
// not (there is nothing to make room for).
func TestEngineKeepBudgetFollowsTarget(t *testing.T) {
	b := overheadSession(8, 1500, 40000)
	_, err := (&Engine{Summarizer: &recorder{}}).Compact(context.Background(), NewSliceLog(b.path()...), Request{})
	if !errors.Is(err, ErrNothingToCompact) {
		t.Fatalf("without a target: %v, want nothing to compact", err)
	}
	eng := &Engine{Summarizer: &recorder{}}
	dry, err := eng.Plan(NewSliceLog(b.path()...), Request{TargetTokens: 16384})
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	res, err := eng.Compact(context.Background(), NewSliceLog(b.path()...), Request{TargetTokens: 16384})
	if err != nil {
		t.Fatal(err)
	}
	if dry.FirstKeptID != res.Plan.FirstKeptID || dry.KeptTokens != res.Plan.KeptTokens {
		t.Errorf("Plan keeps %d tokens from %s, Compact %d from %s", dry.KeptTokens, dry.FirstKeptID, res.Plan.KeptTokens, res.Plan.FirstKeptID)
	}
	adjusted, adj, err := eng.PlanAdjusted(NewSliceLog(b.path()...), Request{TargetTokens: 16384})
	if err != nil || adjusted.KeptTokens != dry.KeptTokens || len(adj) != 1 || !strings.Contains(adj[0], "kept part reduced") {
		t.Errorf("PlanAdjusted: kept %v, adjustments %q, err %v; want the dry plan and its adjustment", adjusted, adj, err)
	}
	if res.Plan.KeptTokens > 8192 || len(res.Adjustments) == 0 || !strings.Contains(res.Adjustments[0], "kept part reduced") {
		t.Fatalf("kept %d, adjustments %q", res.Plan.KeptTokens, res.Adjustments)
	}
	small := overheadSession(8, 1500, 12000)
	_, err = (&Engine{Summarizer: &recorder{}}).Compact(context.Background(), NewSliceLog(small.path()...), Request{TargetTokens: 16384})
	if !errors.Is(err, ErrNothingToCompact) {
		t.Fatalf("under the target: %v, want nothing to compact", err)
	}
}

// When the cheap tier alone brings the context under the trigger (though
// not under the target), no summary is written and the call goes ahead.
func TestGuardCheapTierUnderTriggerIsEnough(t *testing.T) {
	b := overheadSession(14, 1000, 50000)
	log := NewSliceLog(b.path()...)
	var after []*Result
	g := &Guard{
		Engine:          &Engine{Summarizer: &recorder{}, Ladder: &Ladder{}},
		Log:             log,
		Model:           ModelInfo{ID: "small", ContextWindow: 60000, MaxOutput: 4096},
		AfterCompaction: func(_ context.Context, r *Result) { after = append(after, r) },
	}
	threshold, _ := Reserve{}.Threshold(g.Model)
	target := Reserve{}.Target(g.Model)
	model := &fakeModel{window: 1 << 30, factor: 1, finish: true}
	if _, err := g.Call(context.Background(), model.call); err != nil {
		t.Fatal(err)
	}
	if model.calls != 1 || len(after) != 1 {
		t.Fatalf("%d model calls, %d compactions", model.calls, len(after))
	}
	res := after[0]
	if res.Summarized() || res.Ladder == nil || len(res.Ladder.strategies()) == 0 {
		t.Fatalf("want the cheap tier alone, got entry %v ladder %+v", res.Entry, res.Ladder)
	}
	if res.TokensAfter <= target || res.TokensAfter > threshold {
		t.Fatalf("fixture: the cheap tier ended at %d, want between the target %d and the trigger %d", res.TokensAfter, target, threshold)
	}
	if c := BuildContext(log.Path()); c.Compaction != nil {
		t.Fatal("a summary was written")
	}
}

// Engine.Compact keeps its report: passes recorded, then nothing to
// summarize, is a result without an entry and no error; a ladder that
// wrote nothing and nothing to summarize is ErrNothingToCompact, with the
// ladder's report.
func TestEngineLadderReportSurvivesNothingToCompact(t *testing.T) {
	// One turn of tool calls whose results the cheap tier can cut, in a
	// request the provider counts far larger: every message fits in half
	// the target, so there is nothing to summarize.
	var b builder
	b.user(100)
	for i := 0; i < 5; i++ {
		b.result(b.call("read", `{"path":"main.go"}`), "read", 1500)
	}
	a := TextMessage(RoleAssistant, "Read them all.")
	a.StopReason, a.Usage = StopToolUse, &Usage{Input: 60000}
	b.msg(a)
	log := NewSliceLog(b.path()...)
	n := len(log.Entries())
	eng := &Engine{Summarizer: &recorder{}, Ladder: &Ladder{}}
	res, err := eng.Compact(context.Background(), log, Request{Reason: ReasonThreshold, TargetTokens: 20000})
	if err != nil {
		t.Fatalf("passes recorded: %v", err)
	}
	if res == nil || res.Ladder == nil || res.Summarized() || len(res.Ladder.strategies()) == 0 || res.Ladder.UnderTarget {
		t.Fatalf("result %+v", res)
	}
	if got := len(log.Entries()) - n; got != len(res.Ladder.strategies()) {
		t.Fatalf("%d entries written for %d passes", got, len(res.Ladder.strategies()))
	}

	// Nothing for the cheap tier either: nothing is written.
	var small builder
	small.user(100)
	a = TextMessage(RoleAssistant, "Hello.")
	a.StopReason, a.Usage = StopEnd, &Usage{Input: 60000}
	small.msg(a)
	log = NewSliceLog(small.path()...)
	res, err = eng.Compact(context.Background(), log, Request{Reason: ReasonThreshold, TargetTokens: 20000})
	if !errors.Is(err, ErrNothingToCompact) || len(log.Entries()) != 2 {
		t.Fatalf("nothing written: %v, %d entries", err, len(log.Entries()))
	}
	if res == nil || res.Ladder == nil || res.Ladder.TokensBefore != 60000 {
		t.Fatalf("the ladder's report was lost: %+v", res)
	}
}

// A history that shrinks, but not under the trigger: the newest message
// alone is larger. The guard stops with ErrStalled after one compaction.
func TestGuardStallsAboveTrigger(t *testing.T) {
	log := NewSliceLog()
	log.AppendMessage(context.Background(), TextMessage(RoleUser, strings.Repeat("h", 4*3000)))
	log.AppendMessage(context.Background(), TextMessage(RoleAssistant, "ok"))
	log.AppendMessage(context.Background(), TextMessage(RoleUser, strings.Repeat("x", 4*8000)))
	g, events := newGuard(log, 10000)
	g.Engine.Ladder = nil
	model := &fakeModel{window: 10000, factor: 1}
	_, err := g.Call(context.Background(), model.call)
	if !errors.Is(err, ErrStalled) || !strings.Contains(err.Error(), "still above the threshold") {
		t.Fatalf("err %v, want a stall above the threshold", err)
	}
	if model.calls != 0 || len(*events) != 2 || BuildContext(log.Path()).Compaction == nil {
		t.Fatalf("%d model calls, %d events", model.calls, len(*events))
	}
}

// The per-call limit: a policy whose target lies above its trigger lets
// the cheap tier stop above the trigger; after MaxCompactionsPerCall
// compactions the guard stops with ErrStalled instead of going on.
func TestGuardPerCallLimit(t *testing.T) {
	b := overheadSession(14, 1000, 50000)
	log := NewSliceLog(b.path()...)
	var after []*Result
	g := &Guard{
		Engine:                &Engine{Summarizer: &recorder{}, Ladder: &Ladder{}},
		Log:                   log,
		Model:                 ModelInfo{ID: "small", ContextWindow: 60000},
		Policy:                Ratio{Ratio: 0.5, TargetRatio: 0.8},
		MaxCompactionsPerCall: 1,
		AfterCompaction:       func(_ context.Context, r *Result) { after = append(after, r) },
	}
	model := &fakeModel{window: 1 << 30, factor: 1}
	_, err := g.Call(context.Background(), model.call)
	if !errors.Is(err, ErrStalled) || !strings.Contains(err.Error(), "after 1 compactions in this call") {
		t.Fatalf("err %v, want the per-call limit", err)
	}
	if model.calls != 0 || len(after) != 1 {
		t.Fatalf("%d model calls, %d compactions", model.calls, len(after))
	}
}
