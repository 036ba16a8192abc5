package compact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
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

// A history that cannot shrink: the newest message alone is above the
// trigger. The guard says so instead of compacting again and again.
func TestGuardStalls(t *testing.T) {
	log := NewSliceLog()
	log.AppendMessage(context.Background(), TextMessage(RoleUser, "small start"))
	log.AppendMessage(context.Background(), TextMessage(RoleAssistant, "ok"))
	log.AppendMessage(context.Background(), TextMessage(RoleUser, strings.Repeat("x", 4*9000)))
	g, _ := newGuard(log, 10000)
	g.Engine.Ladder = nil
	model := &fakeModel{window: 10000, factor: 1}
	_, err := g.Call(context.Background(), model.call)
	if !errors.Is(err, ErrStalled) && !errors.Is(err, ErrNothingToCompact) {
		t.Fatalf("err %v, want a stall", err)
	}
	if model.calls != 0 {
		t.Fatal("the model was called with an oversized context")
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
