package summarize

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/fakeupstream"
)

// fake is an in-process Completer. It records every request and answers
// with respond, or with "summary N" (N counting from 1) when respond is
// nil.
type fake struct {
	mu      sync.Mutex
	reqs    []Request
	respond func(n int, req *Request) (*Response, error)
}

func (f *fake) Complete(ctx context.Context, req *Request) (*Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, *req)
	n := len(f.reqs)
	f.mu.Unlock()
	if f.respond != nil {
		return f.respond(n, req)
	}
	return &Response{Text: handover(fmt.Sprintf("summary %d", n), req.Prompt), Usage: compact.Usage{Input: 10, Output: 2}}, nil
}

// handover returns the reply of a model that follows the prompt
// (fakeupstream.Handover) with label in place of the fake's mark, so that
// tests tell the replies apart.
func handover(label, prompt string) string {
	return strings.Replace(fakeupstream.Handover(prompt), fakeupstream.HandoverMark, label, 1)
}

func (f *fake) requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.reqs...)
}

// clock records the sleeps asked for; it never sleeps.
type clock struct {
	mu     sync.Mutex
	sleeps []time.Duration
}

func (c *clock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d)
	c.mu.Unlock()
	return ctx.Err()
}

func (c *clock) recorded() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// model limits used across the tests.
var (
	model200k = compact.ModelInfo{ID: "big-200k", ContextWindow: 200000, MaxOutput: 64000}
	model32k  = compact.ModelInfo{ID: "mid-32k", ContextWindow: 32768, MaxOutput: 8192}
	model16k  = compact.ModelInfo{ID: "small-16k", ContextWindow: 16384, MaxOutput: 4096}
	model8k   = compact.ModelInfo{ID: "tiny-8k", ContextWindow: 8192, MaxOutput: 4096}
)

// newTest returns a summarizer over c with a fake clock and a fixed
// jitter of 0.5, applying edit to the options first.
func newTest(t *testing.T, c Completer, info compact.ModelInfo, edit func(*Options)) (*Summarizer, *clock) {
	t.Helper()
	clk := &clock{}
	// The model's part alone: the tests of the hybrid summary (the
	// ledger) turn it back on.
	opts := Options{Completer: c, Info: info, Sleep: clk.Sleep, Rand: func() float64 { return 0.5 }, NoLedger: true}
	if edit != nil {
		edit(&opts)
	}
	s, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s, clk
}

// conservative counts a request at 3 bytes a token, rounded up, as the
// tests' independent check of the window.
func conservative(req Request) int {
	return int(math.Ceil(float64(len(req.System)+len(req.Prompt)) / 3))
}

func user(text string) *compact.Message { return compact.TextMessage(compact.RoleUser, text) }

func assistant(text string) *compact.Message {
	m := compact.TextMessage(compact.RoleAssistant, text)
	m.StopReason = compact.StopEnd
	return m
}

// calls returns an assistant message with the given tool calls, each a
// name and JSON arguments; ids are the name plus the index.
func calls(idPrefix string, nameArgs ...string) *compact.Message {
	m := &compact.Message{Role: compact.RoleAssistant, StopReason: compact.StopToolUse}
	for i := 0; i+1 < len(nameArgs); i += 2 {
		m.Content = append(m.Content, compact.Part{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{
			ID: fmt.Sprintf("%s-%d", idPrefix, i/2), Name: nameArgs[i], Arguments: json.RawMessage(nameArgs[i+1]),
		}})
	}
	return m
}

func result(id, name, text string) *compact.Message {
	m := compact.TextMessage(compact.RoleToolResult, text)
	m.ToolCallID, m.ToolName = id, name
	return m
}

// between returns the text between the first open and the following
// close, "" if either is missing.
func between(s, open, close string) string {
	i := strings.Index(s, open)
	if i < 0 {
		return ""
	}
	s = s[i+len(open):]
	j := strings.Index(s, close)
	if j < 0 {
		return ""
	}
	return s[:j]
}
