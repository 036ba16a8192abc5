package main

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/session"
)

// recorder keeps the compaction events with the number of requests the
// server had seen when each came.
type recorder struct {
	mu     sync.Mutex
	model  *fakeModel
	events []compact.Event
	at     []int
	turns  []compact.ContextUsage // the turn_end events
}

func (r *recorder) add(ev compact.Event) {
	req, _, _, _ := r.model.stats()
	r.mu.Lock()
	defer r.mu.Unlock()
	if ev.Type == compact.EventTurnEnd {
		r.turns = append(r.turns, ev.ContextUsage)
		return
	}
	r.events = append(r.events, ev)
	r.at = append(r.at, req)
}

// simulation is an agent wired to a fake model through HTTP, recording to
// a session file in a temporary directory.
type simulation struct {
	model   *fakeModel
	events  *recorder
	agent   *Agent
	session string
	window  int
}

func newSimulation(t *testing.T, model *fakeModel, window, maxSteps int) *simulation {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh to run the run_shell tool")
	}
	srv := model.server(t)
	dir := workdir(t)
	path := filepath.Join(t.TempDir(), "run.jsonl")
	sess, err := OpenSession(path, dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{model: model}
	lim := LimitsFor(window)
	tools := &Tools{Dir: dir, MaxOutput: lim.ToolOutput, ShellTimeout: 10 * time.Second}
	chat := &Chat{BaseURL: srv.URL + "/v1", Model: "fake-model", System: systemPrompt, Tools: tools.Specs(), HTTP: srv.Client()}
	return &simulation{
		model:  model,
		events: rec,
		agent: &Agent{Guard: NewGuard(sess, "fake-model", lim, rec.add), Model: chat.Complete, Tools: tools,
			MaxSteps: maxSteps},
		session: path,
		window:  window,
	}
}

// checkEvents asserts that the events alternate start and end, that the
// pairs agree on the reason, and that no model call ran more than limit
// compactions. It returns the number of compactions.
func (s *simulation) checkEvents(t *testing.T, limit int) int {
	t.Helper()
	ev := s.events.events
	if len(ev)%2 != 0 {
		t.Fatalf("%d events: a compaction did not end", len(ev))
	}
	perCall := map[int]int{}
	for i := 0; i < len(ev); i += 2 {
		start, end := ev[i], ev[i+1]
		if start.Type != compact.EventStart || end.Type != compact.EventEnd {
			t.Fatalf("events %d and %d are %s, %s; want start then end", i, i+1, start.Type, end.Type)
		}
		if start.Reason != end.Reason {
			t.Errorf("compaction %d starts for %s and ends for %s", i/2, start.Reason, end.Reason)
		}
		if end.Err != nil {
			t.Errorf("compaction %d failed: %v", i/2, end.Err)
		}
		if end.TokensAfter >= end.TokensBefore {
			t.Errorf("compaction %d went from %d to %d tokens", i/2, end.TokensBefore, end.TokensAfter)
		}
		perCall[s.events.at[i]]++
	}
	for req, n := range perCall {
		if n > limit {
			t.Errorf("%d compactions before request %d, want at most %d", n, req+1, limit)
		}
	}
	return len(ev) / 2
}

// checkSession re-opens the session file and checks that its context fits
// in the window; it returns the numbers of compaction and context edit
// entries.
func (s *simulation) checkSession(t *testing.T) (compactions, edits int) {
	t.Helper()
	sess, err := session.Open(s.session, session.Options{})
	if err != nil {
		t.Fatalf("re-open the session: %v", err)
	}
	if h := sess.Header(); h.Version != 3 || h.ID == "" {
		t.Errorf("header %+v, want version 3 with an id", h)
	}
	if w := sess.Warnings(); len(w) > 0 {
		t.Errorf("warnings reading the session: %v", w)
	}
	if u := compact.Measure(sess.Context()); u.Tokens > s.window {
		t.Errorf("the session's context is %d tokens, above the window of %d", u.Tokens, s.window)
	}
	for _, e := range sess.Entries() {
		switch e.Kind {
		case compact.KindCompaction:
			compactions++
		case compact.KindContextEdit:
			edits++
		}
	}
	return compactions, edits
}

func TestLongRunStaysInsideTheWindow(t *testing.T) {
	t.Parallel()
	const window, steps = 12000, 60
	model := &fakeModel{Window: window, Steps: steps}
	sim := newSimulation(t, model, window, steps+1)
	answer, err := sim.agent.Run(context.Background(), "Inspect every file in the directory and report.")
	if err != nil {
		t.Fatal(err)
	}
	if answer != finalAnswer {
		t.Errorf("answer %q, want %q", answer, finalAnswer)
	}
	requests, maxTokens, overflows, problems := model.stats()
	if requests != steps+1 {
		t.Errorf("%d requests, want %d", requests, steps+1)
	}
	if len(overflows) > 0 || maxTokens > window {
		t.Errorf("requests %v overflowed; the largest was %d tokens for a window of %d", overflows, maxTokens, window)
	}
	for _, p := range problems {
		t.Error(p)
	}
	n := sim.checkEvents(t, compact.DefaultMaxCompactionsPerCall)
	if n < 5 {
		t.Errorf("%d compactions; the run should have filled the window several times", n)
	}
	// Every response ends a turn, with the context's measure: reported by
	// the model after the first, and never over the window.
	turns := sim.events.turns
	if len(turns) != steps+1 {
		t.Errorf("%d turn_end events for %d responses", len(turns), steps+1)
	}
	for i, u := range turns {
		if u.Tokens != u.UsageTokens+u.TrailingTokens || u.Tokens <= 0 || u.Tokens > window || u.UsageTokens == 0 {
			t.Errorf("turn %d: context usage %+v", i+1, u)
		}
	}
	summaries, edits := sim.checkSession(t)
	if summaries == 0 {
		t.Error("no compaction entry in the session file")
	}
	t.Logf("%d steps, %d compactions (%d summaries, %d context edits), largest request %d of %d tokens",
		steps, n, summaries, edits, maxTokens, window)
}

func TestOverflowRecoversOnce(t *testing.T) {
	t.Parallel()
	const window, steps = 12000, 20
	// Request 12 is small enough for the estimate, but the server says
	// it overflows: the guard compacts with force and retries once.
	model := &fakeModel{Window: window, Steps: steps, OverflowAt: map[int]bool{12: true}}
	sim := newSimulation(t, model, window, steps+1)
	answer, err := sim.agent.Run(context.Background(), "Inspect the files.")
	if err != nil {
		t.Fatal(err)
	}
	if answer != finalAnswer {
		t.Errorf("answer %q", answer)
	}
	requests, _, overflows, problems := model.stats()
	if requests != steps+2 || len(overflows) != 1 || overflows[0] != 12 {
		t.Errorf("%d requests, overflows at %v; want %d requests with one overflow at 12", requests, overflows, steps+2)
	}
	for _, p := range problems {
		t.Error(p)
	}
	if model.sizes[12] >= model.sizes[11] {
		t.Errorf("the retry sent %d tokens, not less than the %d refused", model.sizes[12], model.sizes[11])
	}
	sim.checkEvents(t, compact.DefaultMaxCompactionsPerCall+1)
	var forced int
	for i, ev := range sim.events.events {
		if ev.Type == compact.EventStart && ev.Reason == compact.ReasonOverflow {
			forced++
			if sim.events.at[i] != 12 {
				t.Errorf("the overflow compaction ran after request %d, want 12", sim.events.at[i])
			}
		}
	}
	if forced != 1 {
		t.Errorf("%d overflow compactions, want 1", forced)
	}
	sim.checkSession(t)
}

func TestOverflowTwiceFails(t *testing.T) {
	t.Parallel()
	const window, steps = 12000, 20
	model := &fakeModel{Window: window, Steps: steps, OverflowAt: map[int]bool{12: true, 13: true}}
	sim := newSimulation(t, model, window, steps+1)
	_, err := sim.agent.Run(context.Background(), "Inspect the files.")
	if !errors.Is(err, compact.ErrOverflowPersists) {
		t.Fatalf("err = %v, want one wrapping ErrOverflowPersists", err)
	}
	if !strings.Contains(err.Error(), "step 12") || !strings.Contains(err.Error(), "context_length_exceeded") {
		t.Errorf("the error does not say which step failed and what the server said: %v", err)
	}
	requests, _, overflows, _ := model.stats()
	if requests != 13 || len(overflows) != 2 {
		t.Errorf("%d requests, overflows at %v; want 13 requests, the last two refused", requests, overflows)
	}
	sim.checkEvents(t, compact.DefaultMaxCompactionsPerCall+1)
	sim.checkSession(t)
}

func TestMaxSteps(t *testing.T) {
	t.Parallel()
	model := &fakeModel{Window: 12000, Steps: 10}
	sim := newSimulation(t, model, 12000, 3)
	_, err := sim.agent.Run(context.Background(), "Inspect the files.")
	var ms *MaxStepsError
	if !errors.As(err, &ms) || ms.Steps != 3 {
		t.Fatalf("err = %v, want a MaxStepsError for 3 steps", err)
	}
	if requests, _, _, _ := model.stats(); requests != 3 {
		t.Errorf("%d requests, want 3", requests)
	}
}

func TestResumeClosesDanglingCalls(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	sess, err := OpenSession(path, "/tmp", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := sess.AppendMessage(ctx, compact.TextMessage(compact.RoleUser, "look")); err != nil {
		t.Fatal(err)
	}
	call := &compact.Message{Role: compact.RoleAssistant, StopReason: compact.StopToolUse, Content: []compact.Part{
		{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: "c1", Name: "list_dir", Arguments: []byte(`{"path":"."}`)}},
	}}
	if _, err := sess.AppendMessage(ctx, call); err != nil {
		t.Fatal(err)
	}
	// The run stopped here; a new run opens the file again.
	sess, err = OpenSession(path, "/elsewhere", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if sess.Header().Cwd != "/tmp" {
		t.Errorf("the existing header was replaced: %+v", sess.Header())
	}
	if err := closeDanglingCalls(ctx, sess); err != nil {
		t.Fatal(err)
	}
	msgs := sess.Context().Messages
	last := msgs[len(msgs)-1]
	if last.Role != compact.RoleToolResult || last.ToolCallID != "c1" || !last.IsError {
		t.Errorf("last message %+v, want an error result for c1", last)
	}
	if err := closeDanglingCalls(ctx, sess); err != nil {
		t.Fatal(err)
	}
	if n := len(sess.Context().Messages); n != len(msgs) {
		t.Errorf("a second pass appended %d messages", n-len(msgs))
	}
}

// TestNewGuardCountsOpenAIExactly: the guard of an OpenAI model counts
// with its tokenizer; another model's guard estimates.
func TestNewGuardCountsOpenAIExactly(t *testing.T) {
	for _, tc := range []struct {
		model string
		exact bool
	}{{"gpt-4o", true}, {"qwen2.5-coder:7b", false}} {
		g := NewGuard(compact.NewSliceLog(), tc.model, LimitsFor(32000), nil)
		if (g.Count != nil) != tc.exact || (g.Engine.Count != nil) != tc.exact {
			t.Errorf("%s: guard counts exactly: %v, engine: %v; want %v", tc.model, g.Count != nil, g.Engine.Count != nil, tc.exact)
		}
	}
}
