package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/session"
	"github.com/compactkit/compact/summarize"
	"github.com/compactkit/compact/summarize/extractive"
	"github.com/compactkit/compact/tiktoken"
)

// MaxStepsError means the agent used all its model calls without
// reaching a final answer.
type MaxStepsError struct {
	// Steps is the limit that was reached.
	Steps int
}

// Error implements error.
func (e *MaxStepsError) Error() string {
	return fmt.Sprintf("no final answer within %d steps", e.Steps)
}

// Agent is the tool loop: it asks the model through the guard, runs the
// tools the model calls, and stops at the first answer without a tool
// call.
type Agent struct {
	// Guard keeps the context inside the window; its Log is the session.
	Guard *compact.Guard
	// Model answers; usually (*Chat).Complete.
	Model compact.ModelCall
	// Tools run the model's tool calls.
	Tools *Tools
	// MaxSteps bounds the model calls of one Run.
	MaxSteps int
	// Progress receives one line per step and per tool call; nil
	// discards them.
	Progress io.Writer
}

// Run appends task as a user message and loops until the model answers
// without calling a tool, returning that answer's text. It returns a
// *MaxStepsError when MaxSteps calls were not enough, and the
// guard's errors (compact.ErrOverflowPersists, compact.ErrStalled, ...)
// as they come.
func (a *Agent) Run(ctx context.Context, task string) (string, error) {
	log := a.Guard.Log
	progress := a.Progress
	if progress == nil {
		progress = io.Discard
	}
	// A run that stopped between an answer and its tool results left
	// calls without results, which the API would refuse.
	if err := closeDanglingCalls(ctx, log); err != nil {
		return "", err
	}
	user := compact.TextMessage(compact.RoleUser, task)
	user.Timestamp = time.Now().UnixMilli()
	if err := log.Append(ctx, &compact.Entry{Kind: compact.KindMessage, Message: user}); err != nil {
		return "", fmt.Errorf("record the task: %w", err)
	}
	for step := 1; step <= a.MaxSteps; step++ {
		u := a.Guard.Usage()
		fmt.Fprintf(progress, "step %d: context ~%d tokens\n", step, u.Tokens)
		resp, err := a.Guard.Call(ctx, a.Model)
		if err != nil {
			return "", fmt.Errorf("step %d: %w", step, err)
		}
		calls := resp.ToolCalls()
		if len(calls) == 0 {
			fmt.Fprintf(progress, "step %d: final answer (%s)\n", step, resp.StopReason)
			return resp.Text(), nil
		}
		for _, call := range calls {
			res := a.Tools.Run(ctx, call)
			status := "ok"
			if res.IsError {
				status = "error"
			}
			fmt.Fprintf(progress, "step %d: %s %s -> %s, %d bytes\n", step, call.Name, capText(string(call.Arguments), 120), status, len(res.Text()))
			if err := log.Append(ctx, &compact.Entry{Kind: compact.KindMessage, Message: res}); err != nil {
				return "", fmt.Errorf("record the result of %s: %w", call.Name, err)
			}
		}
	}
	return "", &MaxStepsError{Steps: a.MaxSteps}
}

// closeDanglingCalls appends an error result for every tool call of the
// newest assistant message of the context that has none.
func closeDanglingCalls(ctx context.Context, log compact.Log) error {
	msgs := compact.BuildContext(log.Path()).Messages
	last := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == compact.RoleAssistant {
			last = i
			break
		}
	}
	if last < 0 {
		return nil
	}
	answered := map[string]bool{}
	for _, m := range msgs[last+1:] {
		if m.Role == compact.RoleToolResult {
			answered[m.ToolCallID] = true
		}
	}
	for _, call := range msgs[last].ToolCalls() {
		if answered[call.ID] {
			continue
		}
		res := compact.TextMessage(compact.RoleToolResult, "error: the tool was not run because the agent stopped before it")
		res.ToolCallID, res.ToolName, res.IsError = call.ID, call.Name, true
		res.Timestamp = time.Now().UnixMilli()
		if err := log.Append(ctx, &compact.Entry{Kind: compact.KindMessage, Message: res}); err != nil {
			return fmt.Errorf("close the pending call %s: %w", call.ID, err)
		}
	}
	return nil
}

// Limits derives the guard's settings from a context window.
type Limits struct {
	// Window is the model's context window in tokens.
	Window int
	// Reserve is the room kept free for the answer: the guard compacts
	// above Window - Reserve.
	Reserve int
	// KeepRecent is the newest part of the history kept verbatim.
	KeepRecent int
	// SummaryTokens bounds the summary.
	SummaryTokens int
	// ToolOutput caps each tool result, in bytes.
	ToolOutput int
}

// LimitsFor scales the settings to the window: the library's defaults
// (a 16384-token reserve, 20000 tokens kept) suit windows of 128k and
// more, but would leave nothing usable in the 8k to 32k windows of local
// models. Each setting is the default or a share of the window, whichever
// is smaller; a tool result may take an eighth of the window (at four
// bytes a token).
func LimitsFor(window int) Limits {
	return Limits{
		Window:        window,
		Reserve:       min(compact.DefaultReserveTokens, window/4),
		KeepRecent:    min(compact.DefaultKeepRecentTokens, window/4),
		SummaryTokens: min(summarize.ReserveBudget(compact.DefaultReserveTokens), window/8),
		ToolOutput:    max(min(DefaultMaxOutput, window/8*4), 1024),
	}
}

// NewGuard returns a guard over log for a model with the given limits:
// the cheap strategies first, then an offline extractive summary, so
// that compaction needs no second model. onEvent, when set, receives the
// compaction events.
//
// For an OpenAI model, whose tokenizer is public, the messages after the
// last usage report are counted exactly (package tiktoken); for the
// others the guard learns the model's ratio of characters to tokens.
func NewGuard(log compact.Log, model string, lim Limits, onEvent func(compact.Event)) *compact.Guard {
	var count func(*compact.Message) int
	if tc, ok := tiktoken.ForModel(model); ok {
		count = tc.MessageTokens
	}
	return &compact.Guard{
		Engine: &compact.Engine{
			Summarizer:       extractive.New(extractive.Options{}),
			Ladder:           &compact.Ladder{},
			KeepRecentTokens: lim.KeepRecent,
			OnEvent:          onEvent,
			Count:            count,
		},
		Log:        log,
		Model:      compact.ModelInfo{ID: model, ContextWindow: lim.Window},
		Policy:     compact.Reserve{Tokens: lim.Reserve},
		Request:    compact.Request{MaxTokens: lim.SummaryTokens},
		Calibrator: &compact.Calibrator{},
		Count:      count,
	}
}

// OpenSession opens the session file at path, creating it with a version
// 3 header when it does not exist. cwd is recorded in a new header.
func OpenSession(path, cwd string, now time.Time) (*session.Session, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	switch {
	case err == nil:
		header, merr := json.Marshal(struct {
			Type      string `json:"type"`
			Version   int    `json:"version"`
			ID        string `json:"id"`
			Timestamp string `json:"timestamp"`
			Cwd       string `json:"cwd"`
		}{"session", session.CurrentVersion, newUUID(), now.UTC().Format("2006-01-02T15:04:05.000Z"), cwd})
		if merr != nil {
			f.Close()
			return nil, merr
		}
		_, werr := f.Write(append(header, '\n'))
		if serr := f.Sync(); werr == nil {
			werr = serr
		}
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return nil, fmt.Errorf("write the session header: %w", werr)
		}
	case !errors.Is(err, os.ErrExist):
		return nil, err
	}
	return session.Open(path, session.Options{})
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// formatEvent renders a compaction or turn event as one line.
func formatEvent(ev compact.Event) string {
	switch ev.Type {
	case compact.EventStart:
		return fmt.Sprintf("compaction start (%s): %d tokens, %d messages to summarize", ev.Reason, ev.TokensBefore, ev.MessagesSummarized)
	case compact.EventTurnEnd:
		u := ev.ContextUsage
		return fmt.Sprintf("turn end: context %d tokens (%d reported by the model, %d estimated after)", u.Tokens, u.UsageTokens, u.TrailingTokens)
	}
	s := fmt.Sprintf("compaction end (%s): %d -> %d tokens in %v", ev.Reason, ev.TokensBefore, ev.TokensAfter, ev.Duration.Round(time.Millisecond))
	if len(ev.Strategies) > 0 {
		s += fmt.Sprintf(", cheap passes %v", ev.Strategies)
	}
	if ev.Summarizer != "" {
		s += ", summary by " + ev.Summarizer
	}
	if ev.Err != nil {
		s += ", failed: " + ev.Err.Error()
	}
	return s
}
