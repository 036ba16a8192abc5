package compact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeModel plays an agent's model: it counts the request's tokens with
// its own tokenizer (the estimate times factor, as a provider counts more
// than chars/4), refuses a request above its window with the overflow
// error a provider sends, and otherwise answers with a tool call until
// told to finish.
type fakeModel struct {
	window  int
	factor  float64
	calls   int
	maxSeen int
	// overflowNext forces the next n calls to fail with an overflow.
	overflowNext int
	// orphans counts requests holding a tool result without its call.
	orphans int
	finish  bool
}

func (f *fakeModel) call(ctx context.Context, msgs []*Message) (*Message, error) {
	f.calls++
	tokens := 0
	calls := map[string]bool{}
	for _, m := range msgs {
		tokens += int(float64(EstimateTokens(m)) * f.factor)
		for _, c := range m.ToolCalls() {
			calls[c.ID] = true
		}
		if m.Role == RoleToolResult && !calls[m.ToolCallID] {
			f.orphans++
		}
	}
	if tokens > f.maxSeen {
		f.maxSeen = tokens
	}
	if f.overflowNext > 0 || tokens > f.window {
		if f.overflowNext > 0 {
			f.overflowNext--
		}
		return nil, &ProviderError{Provider: "fake", StatusCode: 400,
			Body: fmt.Sprintf(`{"error":{"message":"This model's maximum context length is %d tokens. However, your messages resulted in %d tokens.","code":"context_length_exceeded"}}`, f.window, tokens)}
	}
	m := &Message{Role: RoleAssistant, Usage: &Usage{Input: tokens, Output: 20}, Model: "fake"}
	if f.finish {
		m.Content = []Part{{Type: PartText, Text: "All done."}}
		m.StopReason = StopEnd
		return m, nil
	}
	id := fmt.Sprintf("call-%d", f.calls)
	m.Content = []Part{{Type: PartText, Text: "Next I run the tests."},
		{Type: PartToolCall, ToolCall: &ToolCall{ID: id, Name: "bash", Arguments: json.RawMessage(`{"command":"go test ./..."}`)}}}
	m.StopReason = StopToolUse
	return m, nil
}

// agentTurn appends the tool results an agent would after resp.
func agentTurn(t *testing.T, log Log, resp *Message, outputTokens int) {
	t.Helper()
	for _, c := range resp.ToolCalls() {
		r := TextMessage(RoleToolResult, strings.Repeat("o", outputTokens*4))
		r.ToolCallID, r.ToolName = c.ID, c.Name
		if err := log.Append(context.Background(), &Entry{Kind: KindMessage, Message: r}); err != nil {
			t.Fatal(err)
		}
	}
}

func newGuard(log Log, window int) (*Guard, *[]Event) {
	var events []Event
	eng := &Engine{Summarizer: &recorder{}, KeepRecentTokens: window / 5, Ladder: &Ladder{},
		OnEvent: func(e Event) { events = append(events, e) }}
	return &Guard{Engine: eng, Log: log, Model: ModelInfo{ID: "fake", ContextWindow: window, MaxOutput: 1000},
		Policy: Ratio{Ratio: 0.75, TargetRatio: 0.4}}, &events
}

// A long tool loop through a small window: the context is compacted
// between tool calls as often as needed, no request ever overflows, no
// tool result loses its call, and compactions stay bounded.
func TestGuardLongRun(t *testing.T) {
	log := NewSliceLog()
	log.AppendMessage(context.Background(), TextMessage(RoleUser, "Fix every failing test in the repository."))
	g, events := newGuard(log, 20000)
	model := &fakeModel{window: 20000, factor: 1.3}
	for i := 0; i < 150; i++ {
		if i%25 == 24 {
			log.AppendMessage(context.Background(), TextMessage(RoleUser, "Keep going, and also check the linter."))
		}
		resp, err := g.Call(context.Background(), model.call)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		agentTurn(t, log, resp, 700)
	}
	if model.maxSeen > model.window {
		t.Fatalf("a request of %d tokens reached a %d-token model", model.maxSeen, model.window)
	}
	if model.orphans != 0 {
		t.Fatalf("%d requests held a tool result without its call", model.orphans)
	}
	starts, ends, summaries := 0, 0, 0
	for i, e := range *events {
		switch e.Type {
		case EventStart:
			starts++
			if i+1 >= len(*events) || (*events)[i+1].Type != EventEnd {
				t.Fatalf("event %d: a start not followed by its end", i)
			}
		case EventEnd:
			ends++
			if e.Err != nil {
				t.Fatalf("event %d failed: %v", i, e.Err)
			}
			if e.Summarizer != "" {
				summaries++
			}
		}
	}
	if starts == 0 || starts != ends {
		t.Fatalf("%d starts, %d ends", starts, ends)
	}
	if starts > 150*DefaultMaxCompactionsPerCall {
		t.Fatalf("%d compactions for 150 calls", starts)
	}
	t.Logf("150 calls, %d model requests, %d compactions (%d with a summary), largest request %d tokens",
		model.calls, starts, summaries, model.maxSeen)
}

func TestGuardOverflowRecovery(t *testing.T) {
	setup := func() (*Guard, *SliceLog) {
		log := NewSliceLog()
		log.AppendMessage(context.Background(), TextMessage(RoleUser, "start"))
		for i := 0; i < 12; i++ {
			log.AppendMessage(context.Background(), TextMessage(RoleUser, strings.Repeat("u", 4000)))
			log.AppendMessage(context.Background(), TextMessage(RoleAssistant, strings.Repeat("a", 4000)))
		}
		g, _ := newGuard(log, 100000)
		return g, log
	}
	// The provider counts far more than the estimate: the first call
	// overflows; the guard compacts with force and the retry succeeds.
	g, log := setup()
	model := &fakeModel{window: 100000, factor: 1, overflowNext: 1}
	if _, err := g.Call(context.Background(), model.call); err != nil {
		t.Fatalf("recovery: %v", err)
	}
	last := BuildContext(log.Path())
	if last.Compaction == nil || last.Compaction.Compaction.Details["reason"] != string(ReasonOverflow) {
		t.Fatal("no overflow compaction was recorded")
	}
	// Two overflows in a row: a clear error, once.
	g, _ = setup()
	model = &fakeModel{window: 100000, factor: 1, overflowNext: 2}
	if _, err := g.Call(context.Background(), model.call); !errors.Is(err, ErrOverflowPersists) {
		t.Fatalf("second overflow: %v", err)
	}
	if model.calls != 2 {
		t.Fatalf("%d model calls, want 2 (one retry)", model.calls)
	}
	// Disabled: no recovery unless asked for.
	g, _ = setup()
	g.Disabled = true
	model = &fakeModel{window: 100000, factor: 1, overflowNext: 1}
	if _, err := g.Call(context.Background(), model.call); err == nil || !strings.Contains(err.Error(), "disabled") {
		t.Fatalf("disabled: %v", err)
	}
	g, _ = setup()
	g.Disabled, g.RecoverWhenDisabled = true, true
	model = &fakeModel{window: 100000, factor: 1, overflowNext: 1}
	if _, err := g.Call(context.Background(), model.call); err != nil {
		t.Fatalf("disabled with recovery: %v", err)
	}
}

// A guard that cannot bring the context under the trigger says so instead
// of compacting again and again, and never calls the model with it.
func TestGuardStalls(t *testing.T) {
	for _, tc := range []struct {
		name        string
		first, last string // the first and the newest user message
		check       func(t *testing.T, err error, events []Event, log *SliceLog)
	}{
		{"the newest message alone is above the trigger: it cannot shrink",
			"small start", strings.Repeat("x", 4*9000),
			func(t *testing.T, err error, _ []Event, _ *SliceLog) {
				if !errors.Is(err, ErrStalled) && !errors.Is(err, ErrNothingToCompact) {
					t.Fatalf("err %v, want a stall", err)
				}
			}},
		{"it shrinks, but not under the trigger: one compaction, then a stall",
			strings.Repeat("h", 4*3000), strings.Repeat("x", 4*8000),
			func(t *testing.T, err error, events []Event, log *SliceLog) {
				if !errors.Is(err, ErrStalled) || !strings.Contains(err.Error(), "still above the threshold") {
					t.Fatalf("err %v, want a stall above the threshold", err)
				}
				if len(events) != 2 || BuildContext(log.Path()).Compaction == nil {
					t.Fatalf("%d events, compaction %v", len(events), BuildContext(log.Path()).Compaction)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := NewSliceLog()
			log.AppendMessage(context.Background(), TextMessage(RoleUser, tc.first))
			log.AppendMessage(context.Background(), TextMessage(RoleAssistant, "ok"))
			log.AppendMessage(context.Background(), TextMessage(RoleUser, tc.last))
			g, events := newGuard(log, 10000)
			g.Engine.Ladder = nil
			model := &fakeModel{window: 10000, factor: 1}
			_, err := g.Call(context.Background(), model.call)
			tc.check(t, err, *events, log)
			if model.calls != 0 {
				t.Fatalf("the model was called %d times with an oversized context", model.calls)
			}
		})
	}
}

func TestGuardHooksAndContinuation(t *testing.T) {
	build := func(finished bool) (*Guard, *SliceLog) {
		log := NewSliceLog()
		for i := 0; i < 10; i++ {
			log.AppendMessage(context.Background(), TextMessage(RoleUser, strings.Repeat("u", 4000)))
			a := TextMessage(RoleAssistant, strings.Repeat("a", 4000))
			a.StopReason = StopToolUse
			if finished && i == 9 {
				a.StopReason = StopEnd
			}
			log.AppendMessage(context.Background(), a)
		}
		g, _ := newGuard(log, 20000)
		g.Engine.Ladder = nil
		return g, log
	}
	var seen []string
	model := func(ctx context.Context, msgs []*Message) (*Message, error) {
		seen = append(seen, msgs[0].Text())
		m := TextMessage(RoleAssistant, "fine")
		m.StopReason = StopEnd
		return m, nil
	}

	// Mid-task: the continuation note follows the summary.
	g, _ := build(false)
	if _, err := g.Call(context.Background(), model); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(seen[0], ContinuationNote) {
		t.Fatal("no continuation note after an automatic compaction mid-task")
	}
	// The task was finished: no note.
	g, _ = build(true)
	if _, err := g.Call(context.Background(), model); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(seen[1], ContinuationNote) {
		t.Fatal("continuation note after a finished task")
	}

	// Hooks: skip, then supply the summary; the after-hook sees results.
	g, log := build(false)
	g.BeforeCompaction = func(context.Context, Reason, ContextUsage) (HookDecision, error) {
		return HookDecision{Skip: true}, nil
	}
	n := len(log.Entries())
	model2 := &fakeModel{window: 1 << 30, factor: 1, finish: true}
	if _, err := g.Call(context.Background(), model2.call); err != nil {
		t.Fatal(err)
	}
	if len(log.Entries()) != n+1 {
		t.Fatal("a skipped compaction wrote entries")
	}
	g, log = build(false)
	var after []*Result
	g.BeforeCompaction = func(context.Context, Reason, ContextUsage) (HookDecision, error) {
		return HookDecision{Summary: "## Goal\nfrom the hook"}, nil
	}
	g.AfterCompaction = func(_ context.Context, r *Result) { after = append(after, r) }
	if _, err := g.Call(context.Background(), model2.call); err != nil {
		t.Fatal(err)
	}
	c := BuildContext(log.Path())
	if len(after) != 1 || c.Compaction == nil || !strings.HasPrefix(c.Compaction.Compaction.Summary, "## Goal\nfrom the hook") ||
		c.Compaction.Compaction.Details["summarizer"] != "hook" {
		t.Fatalf("hook summary not used: %d results", len(after))
	}
}

// With a Calibrator the guard learns that the provider counts more than
// chars/4 and predicts each request closely.
func TestGuardCalibrated(t *testing.T) {
	worstOf := map[bool]float64{}
	for _, calibrated := range []bool{false, true} {
		log := NewSliceLog()
		log.AppendMessage(context.Background(), TextMessage(RoleUser, "Fix every failing test in the repository."))
		g, _ := newGuard(log, 20000)
		if calibrated {
			g.Calibrator = &Calibrator{}
		}
		model := &fakeModel{window: 20000, factor: 1.4}
		worst := 0.0
		for i := 0; i < 60; i++ {
			predicted := g.Usage().Tokens
			resp, err := g.Call(context.Background(), model.call)
			if err != nil {
				t.Fatalf("calibrated %v, call %d: %v", calibrated, i, err)
			}
			// Compare the prediction with what the model counted, away
			// from compactions (which change the context in between).
			if i > 10 && resp.Usage != nil && BuildContext(log.Path()).Compaction == nil {
				if e := float64(predicted-resp.Usage.Input) / float64(resp.Usage.Input); e < 0 && -e > worst {
					worst = -e
				}
			}
			agentTurn(t, log, resp, 500)
		}
		if model.maxSeen > model.window {
			t.Fatalf("calibrated %v: a request of %d tokens", calibrated, model.maxSeen)
		}
		t.Logf("calibrated %v: worst under-prediction %.1f%%", calibrated, 100*worst)
		worstOf[calibrated] = worst
	}
	if worstOf[false] == 0 || worstOf[true] >= worstOf[false] || worstOf[true] > 0.01 {
		t.Fatalf("under-prediction: chars/4 %.3f, calibrated %.3f", worstOf[false], worstOf[true])
	}
}

// TestGuardWaitsAfterASummary: a context summarized to 900 tokens that
// grew to just past its 1,000-token trigger is sent as it is, as the
// proxy sends it ("pass (compacted recently)"); once it has grown by a
// quarter of the trigger the Guard compacts again. Before, the Guard
// compacted again at once.
func TestGuardWaitsAfterASummary(t *testing.T) {
	// DefaultPolicy on a 1,250-token window: a reserve of 250, a trigger
	// of 1,000.
	model := ModelInfo{ID: "tiny", ContextWindow: 1250}
	for _, tc := range []struct {
		reported int
		compacts bool
	}{
		{1050, false}, // 150 tokens since the summary, under 250
		{1150, true},  // 250 tokens since
	} {
		ctx := context.Background()
		log := &SliceLog{}
		if _, err := log.AppendMessage(ctx, TextMessage(RoleUser, strings.Repeat("old ", 400))); err != nil {
			t.Fatal(err)
		}
		kept, _ := log.AppendMessage(ctx, TextMessage(RoleUser, "go on"))
		if err := log.Append(ctx, &Entry{Kind: KindCompaction, Compaction: &Compaction{Summary: "## Goal\nwork", FirstKeptID: kept.ID, TokensBefore: 2000, TokensAfter: 900}}); err != nil {
			t.Fatal(err)
		}
		reply := TextMessage(RoleAssistant, "done")
		reply.StopReason, reply.Usage = StopToolUse, &Usage{Total: tc.reported}
		if _, err := log.AppendMessage(ctx, reply); err != nil {
			t.Fatal(err)
		}
		asked := false
		g := &Guard{Engine: &Engine{}, Log: log, Model: model,
			BeforeCompaction: func(context.Context, Reason, ContextUsage) (HookDecision, error) {
				asked = true
				return HookDecision{Skip: true}, nil
			}}
		if _, err := g.Call(ctx, func(context.Context, []*Message) (*Message, error) {
			return TextMessage(RoleAssistant, "ok"), nil
		}); err != nil {
			t.Fatal(err)
		}
		if asked != tc.compacts {
			t.Errorf("reported %d tokens, 900 after the summary: compacts %v, want %v", tc.reported, asked, tc.compacts)
		}
	}
}

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

// cheapTierGuard returns a Guard with a cheap tier and a recording
// summarizer over overheadSession(14, 1000, 50000) on model, its log, and
// the results its compactions report.
func cheapTierGuard(model ModelInfo) (*Guard, *SliceLog, *[]*Result) {
	b := overheadSession(14, 1000, 50000)
	log := NewSliceLog(b.path()...)
	var after []*Result
	g := &Guard{
		Engine:          &Engine{Summarizer: &recorder{}, Ladder: &Ladder{}},
		Log:             log,
		Model:           model,
		AfterCompaction: func(_ context.Context, r *Result) { after = append(after, r) },
	}
	return g, log, &after
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
	g, log, after := cheapTierGuard(ModelInfo{ID: "small", ContextWindow: 60000, MaxOutput: 4096})
	threshold, _ := Reserve{}.Threshold(g.Model)
	target := Reserve{}.Target(g.Model)
	model := &fakeModel{window: 1 << 30, factor: 1, finish: true}
	if _, err := g.Call(context.Background(), model.call); err != nil {
		t.Fatal(err)
	}
	if model.calls != 1 || len(*after) != 1 {
		t.Fatalf("%d model calls, %d compactions", model.calls, len(*after))
	}
	res := (*after)[0]
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

// The per-call limit: a policy whose target lies above its trigger lets
// the cheap tier stop above the trigger; after MaxCompactionsPerCall
// compactions the guard stops with ErrStalled instead of going on.
func TestGuardPerCallLimit(t *testing.T) {
	g, _, after := cheapTierGuard(ModelInfo{ID: "small", ContextWindow: 60000})
	g.Policy = Ratio{Ratio: 0.5, TargetRatio: 0.8}
	g.MaxCompactionsPerCall = 1
	model := &fakeModel{window: 1 << 30, factor: 1}
	_, err := g.Call(context.Background(), model.call)
	if !errors.Is(err, ErrStalled) || !strings.Contains(err.Error(), "after 1 compactions in this call") {
		t.Fatalf("err %v, want the per-call limit", err)
	}
	if model.calls != 0 || len(*after) != 1 {
		t.Fatalf("%d model calls, %d compactions", model.calls, len(*after))
	}
}

// gatedSummarizer counts its calls and answers each once release is
// closed.
type gatedSummarizer struct {
	calls   atomic.Int32
	release chan struct{}
}

func (s *gatedSummarizer) Summarize(ctx context.Context, req *SummaryRequest) (*Summary, error) {
	s.calls.Add(1)
	select {
	case <-s.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &Summary{Text: "## Goal\nWritten ahead.", Summarizer: "gated"}, nil
}

// TestGuardAhead: with Ahead, the call that leaves the context past the
// early mark starts the summary in the background; the call that crosses
// the threshold records it without calling the summarizer, and a
// conversation that compacts this way never waits in line for a summary.
func TestGuardAhead(t *testing.T) {
	for _, ready := range []bool{true, false} {
		t.Run(fmt.Sprintf("ready=%v", ready), func(t *testing.T) {
			ctx := context.Background()
			log := NewSliceLog()
			if _, err := log.AppendMessage(ctx, TextMessage(RoleUser, "Fix the tests.")); err != nil {
				t.Fatal(err)
			}
			model := &fakeModel{window: 20000, factor: 1}
			sum := &gatedSummarizer{release: make(chan struct{})}
			var results []*Result
			g := &Guard{Engine: &Engine{Summarizer: sum, KeepRecentTokens: 4000}, Log: log, Model: ModelInfo{ContextWindow: 20000},
				Policy: Reserve{Tokens: 5000}, Ahead: 0.8,
				AfterCompaction: func(_ context.Context, r *Result) { results = append(results, r) }}
			defer g.Close()
			const threshold, mark = 15000, 12000
			prev := 0
			for i := 0; i < 60 && len(results) == 0; i++ {
				started := g.ahead != nil
				calls := sum.calls.Load()
				if started && !ready && g.Usage().Tokens > threshold {
					// Not ready at the crossing: the call waits for it.
					go func() { time.Sleep(20 * time.Millisecond); close(sum.release) }()
				}
				resp, err := g.Call(ctx, model.call)
				if err != nil {
					t.Fatal(err)
				}
				// (Not ready, the summary written ahead may call the
				// summarizer during the crossing call.)
				if len(results) > 0 && (results[0].Remainder != nil || ready && sum.calls.Load() != calls) {
					t.Errorf("the crossing call wrote a summary in line (%d summarizer calls)", sum.calls.Load()-calls)
				}
				if !started && g.ahead != nil {
					if u := g.Usage().Tokens; u < mark || u >= threshold || prev >= mark {
						t.Errorf("summary started ahead at %d tokens (the call before: %d); want the first call past %d", u, prev, mark)
					}
					if ready {
						close(sum.release)
						<-g.ahead.done
					}
				}
				prev = g.Usage().Tokens
				agentTurn(t, log, resp, 1000)
			}
			if len(results) != 1 || results[0].Ahead == nil || results[0].Entry.Compaction.Details["ahead"] != true {
				t.Fatalf("results %+v, want one compaction applied from the summary written ahead", results)
			}
			if g.Usage().Tokens >= threshold || model.maxSeen > 20000 {
				t.Errorf("context %d after the compaction (max seen %d)", g.Usage().Tokens, model.maxSeen)
			}
		})
	}
}
