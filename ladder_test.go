package compact

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// toolHeavy has many turns whose tool output dwarfs everything else.
func toolHeavy(turns int) *builder {
	var b builder
	for i := 0; i < turns; i++ {
		b.user(50)
		b.result(b.call("bash", `{"command":"go test ./..."}`), "bash", 4000)
		b.assistant(50)
	}
	return &b
}

func TestLadderStopsAtTarget(t *testing.T) {
	log := NewSliceLog(toolHeavy(30).path()...)
	n := len(log.Entries())
	before := Measure(BuildContext(log.Path())).Tokens
	target := before / 2

	dry, err := (Ladder{}).Run(context.Background(), log, target, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(log.Entries()) != n {
		t.Fatal("a dry run wrote entries")
	}
	res, err := (Ladder{}).Run(context.Background(), log, target, false)
	if err != nil {
		t.Fatal(err)
	}
	if !res.UnderTarget || res.TokensAfter > target || res.TokensAfter != dry.TokensAfter {
		t.Fatalf("ladder %d -> %d (target %d, dry run %d)", res.TokensBefore, res.TokensAfter, target, dry.TokensAfter)
	}
	// Images have nothing to strip; masking alone reaches the target, so
	// truncation never runs.
	if len(res.Passes) != 2 || res.Passes[0].Edit != nil || res.Passes[1].Strategy != "mask" || res.Passes[1].Edit == nil {
		t.Fatalf("passes %+v", res.Passes)
	}
	if p := res.Passes[1]; p.Entry == nil || p.CacheBreakIndex < 0 || p.TokensAfter >= p.TokensBefore {
		t.Fatalf("mask pass %+v", p)
	}
	if got := Measure(BuildContext(log.Path())).Tokens; got != res.TokensAfter {
		t.Fatalf("replayed context %d, ladder says %d", got, res.TokensAfter)
	}
	if len(log.Entries()) != n+1 || log.Entries()[n].Kind != KindContextEdit {
		t.Fatal("the pass was not recorded as one context_edit entry")
	}
}

func TestEngineCheapTierBeforeSummary(t *testing.T) {
	// Enough: the cheap tier alone gets under the target, no summary.
	log := NewSliceLog(toolHeavy(30).path()...)
	rec := &recorder{}
	var ends []Event
	eng := &Engine{Summarizer: rec, Ladder: &Ladder{}, OnEvent: func(e Event) {
		if e.Type == EventEnd {
			ends = append(ends, e)
		}
	}}
	target := Measure(BuildContext(log.Path())).Tokens / 2
	res, err := eng.Compact(context.Background(), log, Request{Reason: ReasonThreshold, TargetTokens: target})
	if err != nil {
		t.Fatal(err)
	}
	if res.Summarized() || len(rec.reqs) != 0 || res.Ladder == nil || !res.Ladder.UnderTarget {
		t.Fatalf("summarized %v with %d requests; ladder %+v", res.Summarized(), len(rec.reqs), res.Ladder)
	}
	if len(ends) != 1 || len(ends[0].Strategies) != 1 || ends[0].Strategies[0] != "mask" {
		t.Fatalf("end events %+v", ends)
	}

	// Not enough: passes first, then the summary.
	log = NewSliceLog(toolHeavy(30).path()...)
	rec = &recorder{}
	eng.Summarizer = rec
	res, err = eng.Compact(context.Background(), log, Request{Reason: ReasonThreshold, TargetTokens: 3000})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Summarized() || len(rec.reqs) == 0 || res.Ladder == nil || res.Ladder.UnderTarget {
		t.Fatalf("summarized %v, ladder %+v", res.Summarized(), res.Ladder)
	}
	kinds := map[EntryKind]int{}
	for _, e := range log.Entries() {
		kinds[e.Kind]++
	}
	if kinds[KindContextEdit] == 0 || kinds[KindCompaction] != 1 {
		t.Fatalf("entries by kind %v", kinds)
	}

	// A manual compaction never runs the cheap tier.
	log = NewSliceLog(toolHeavy(30).path()...)
	res, err = eng.Compact(context.Background(), log, Request{Reason: ReasonManual, TargetTokens: target})
	if err != nil || res.Ladder != nil || !res.Summarized() {
		t.Fatalf("manual: %v, ladder %+v", err, res.Ladder)
	}
}

func TestStrategyByName(t *testing.T) {
	var names []string
	for _, s := range Strategies() {
		names = append(names, s.Name())
	}
	if want := []string{"strip_images", "mask", "truncate", "prune", "clear_tool_uses"}; !slices.Equal(names, want) {
		t.Errorf("Strategies: %v, want %v", names, want)
	}
	for _, name := range names {
		s, err := StrategyByName(name)
		if err != nil || s.Name() != name {
			t.Errorf("%s: %v", name, err)
		}
	}
	_, err := StrategyByName("magic")
	if err == nil || errors.Is(err, ErrNothingToCompact) {
		t.Fatal("unknown strategy accepted")
	}
	if want := `unknown strategy "magic" (want strip_images, mask, truncate, prune or clear_tool_uses)`; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

// failingLog fails every Append after the first ok ones.
type failingLog struct {
	*SliceLog
	ok int
}

var errDiskFull = errors.New("disk full")

func (l *failingLog) Append(ctx context.Context, e *Entry) error {
	if l.ok == 0 {
		return errDiskFull
	}
	l.ok--
	return l.SliceLog.Append(ctx, e)
}

func TestLadderReturnsRecordedPassesOnFailure(t *testing.T) {
	mem := NewSliceLog(toolHeavy(30).path()...)
	n := len(mem.Entries())
	log := &failingLog{SliceLog: mem, ok: 1}
	res, err := (Ladder{Strategies: []Strategy{Mask{Turns: 20}, Mask{Turns: 5}}}).Run(context.Background(), log, 0, false)
	if !errors.Is(err, errDiskFull) {
		t.Fatalf("err %v, want the failed append", err)
	}
	if res == nil || len(res.Passes) != 1 || res.Passes[0].Entry == nil {
		t.Fatalf("partial result %+v, want the one recorded pass", res)
	}
	if len(mem.Entries()) != n+1 || mem.Entries()[n].ID != res.Passes[0].Entry.ID {
		t.Fatalf("log holds %d new entries, result names %s", len(mem.Entries())-n, res.Passes[0].Entry.ID)
	}
	if got := Measure(BuildContext(mem.Path())).Tokens; got != res.TokensAfter || got >= res.TokensBefore {
		t.Fatalf("replayed context %d, partial result %d -> %d", got, res.TokensBefore, res.TokensAfter)
	}
}
