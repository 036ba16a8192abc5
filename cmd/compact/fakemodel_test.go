package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compactkit/compact/internal/testing/fakeupstream"
	"github.com/compactkit/compact/summarize"
)

// seenRequest is one request a fakeModel received, decoded from the
// provider's wire format.
type seenRequest struct {
	Path   string
	Header http.Header
	Body   []byte
	// Model, MaxTokens, System and Prompt are read from the body:
	// Prompt is the one user message.
	Model     string
	MaxTokens int
	System    string
	Prompt    string
}

// contentBytes is the size of the text the model reads: the system
// prompt and the user message.
func (r *seenRequest) contentBytes() int { return len(r.System) + len(r.Prompt) }

// answer is how a fakeModel replies to one request. The zero value is a
// successful answer with the default summary.
type answer struct {
	// status and body, when status is set, are sent as they are: an
	// error response.
	status int
	body   string
	// retryAfter is sent as the Retry-After header when set.
	retryAfter string
	// text replaces the default summary of a successful answer.
	text string
	// truncated ends the answer on the output limit (finish_reason
	// "length", stop_reason "max_tokens").
	truncated bool
	// block holds the answer back until the client gives up or the test
	// ends.
	block bool
	// delay holds the answer back this long, or until the client gives
	// up.
	delay time.Duration
}

// fakeModel is a loopback HTTP server that speaks the wire format of the
// OpenAI Chat Completions API (POST /v1/chat/completions) or of the
// Anthropic Messages API (POST /v1/messages) and records what it is sent.
type fakeModel struct {
	t        *testing.T
	provider string // summarizerOpenAI or summarizerAnthropic
	srv      *httptest.Server

	// answer decides the reply to the n-th request (from 1); nil always
	// answers with the default summary.
	answer func(n int, r *seenRequest) answer
	// paths are carried forward: every one of them that occurs in a
	// prompt (transcript or running summary) is listed in the answer.
	paths []string
	// started receives a value each time a blocking answer starts
	// waiting, when not nil.
	started chan struct{}

	mu       sync.Mutex
	requests []*seenRequest
	release  chan struct{}
}

// newFakeModel starts a fake server for provider and stops it when the
// test ends.
func newFakeModel(t *testing.T, provider string) *fakeModel {
	t.Helper()
	m := &fakeModel{t: t, provider: provider, release: make(chan struct{})}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(func() {
		close(m.release)
		m.srv.Close()
	})
	return m
}

// baseURL is the value of --base-url for this server: OpenAI's base
// URLs include /v1, Anthropic's do not.
func (m *fakeModel) baseURL() string {
	if m.provider == summarizerOpenAI {
		return m.srv.URL + "/v1"
	}
	return m.srv.URL
}

// seen returns the requests received so far.
func (m *fakeModel) seen() []*seenRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*seenRequest(nil), m.requests...)
}

func (m *fakeModel) serve(w http.ResponseWriter, r *http.Request) {
	want := "/v1/messages"
	if m.provider == summarizerOpenAI {
		want = "/v1/chat/completions"
	}
	if r.Method != http.MethodPost || r.URL.Path != want {
		m.t.Errorf("fake %s server: %s %s, want POST %s", m.provider, r.Method, r.URL.Path, want)
		http.NotFound(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		m.t.Errorf("fake %s server: reading the body: %v", m.provider, err)
		return
	}
	req := &seenRequest{Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	if err := m.decode(req); err != nil {
		m.t.Errorf("fake %s server: %v\n%.500s", m.provider, err, body)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	m.requests = append(m.requests, req)
	n := len(m.requests)
	m.mu.Unlock()

	var a answer
	if m.answer != nil {
		a = m.answer(n, req)
	}
	if a.block {
		if m.started != nil {
			m.started <- struct{}{}
		}
		select {
		case <-r.Context().Done():
		case <-m.release:
		}
		return
	}
	if a.delay > 0 {
		select {
		case <-time.After(a.delay):
		case <-r.Context().Done():
			return
		case <-m.release:
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if a.retryAfter != "" {
		w.Header().Set("Retry-After", a.retryAfter)
	}
	if a.status != 0 {
		w.WriteHeader(a.status)
		io.WriteString(w, a.body)
		return
	}
	text := a.text
	if text == "" {
		text = m.summary(n, req)
	}
	if err := json.NewEncoder(w).Encode(m.success(req.Model, text, a.truncated)); err != nil {
		m.t.Errorf("fake %s server: writing the answer: %v", m.provider, err)
	}
}

// decode reads the model, the output limit, the system prompt and the
// user message from a request body, checking its shape.
func (m *fakeModel) decode(req *seenRequest) error {
	type msg struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	if m.provider == summarizerOpenAI {
		var b struct {
			Model               string `json:"model"`
			Messages            []msg  `json:"messages"`
			MaxTokens           int    `json:"max_tokens"`
			MaxCompletionTokens int    `json:"max_completion_tokens"`
			Stream              *bool  `json:"stream"`
		}
		if err := json.Unmarshal(req.Body, &b); err != nil {
			return err
		}
		if len(b.Messages) != 2 || b.Messages[0].Role != "system" || b.Messages[1].Role != "user" || b.Stream == nil || *b.Stream {
			return fmt.Errorf("want a system and a user message, not streamed")
		}
		req.Model, req.MaxTokens = b.Model, b.MaxTokens+b.MaxCompletionTokens
		req.System, req.Prompt = b.Messages[0].Content, b.Messages[1].Content
		return nil
	}
	var b struct {
		Model     string `json:"model"`
		MaxTokens int    `json:"max_tokens"`
		System    string `json:"system"`
		Messages  []msg  `json:"messages"`
	}
	if err := json.Unmarshal(req.Body, &b); err != nil {
		return err
	}
	if len(b.Messages) != 1 || b.Messages[0].Role != "user" || b.MaxTokens <= 0 {
		return fmt.Errorf("want one user message and max_tokens")
	}
	if v := req.Header.Get("Anthropic-Version"); v == "" {
		return fmt.Errorf("no anthropic-version header")
	}
	req.Model, req.MaxTokens = b.Model, b.MaxTokens
	req.System, req.Prompt = b.System, b.Messages[0].Content
	return nil
}

// Usage the fake server reports for every successful answer.
const (
	fakeInputTokens  = 1200
	fakeOutputTokens = 150
)

// success is a successful answer in the provider's wire format.
func (m *fakeModel) success(model, text string, truncated bool) any {
	if m.provider == summarizerOpenAI {
		finish := "stop"
		if truncated {
			finish = "length"
		}
		return map[string]any{
			"id": "chatcmpl-fake", "object": "chat.completion", "created": 1735689600, "model": model,
			"choices": []any{map[string]any{
				"index":         0,
				"message":       map[string]any{"role": "assistant", "content": text},
				"finish_reason": finish,
			}},
			"usage": map[string]any{"prompt_tokens": fakeInputTokens, "completion_tokens": fakeOutputTokens,
				"total_tokens": fakeInputTokens + fakeOutputTokens},
		}
	}
	stop := "end_turn"
	if truncated {
		stop = "max_tokens"
	}
	return map[string]any{
		"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
		"content":     []any{map[string]any{"type": "text", "text": text}},
		"stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": fakeInputTokens, "output_tokens": fakeOutputTokens},
	}
}

// fakeSummaryMark opens every summary the fake server writes.
const fakeSummaryMark = "Summary written by the fake model"

// summary is the default answer: the hand-over a model following the
// prompt writes (fakeupstream.Handover), the fake's mark, and every
// carried-forward path found in the prompt. A path seen in an early chunk is in the running summary of
// the next request, and so is listed again: the final summary holds
// every path any request saw, as a model that follows the prompt would.
func (m *fakeModel) summary(n int, req *seenRequest) string {
	var b strings.Builder
	b.WriteString(fakeupstream.Handover(req.Prompt))
	fmt.Fprintf(&b, "\n\n## Critical Context\n- %s, request %d.\n", fakeSummaryMark, n)
	for _, p := range m.paths {
		if strings.Contains(req.Prompt, p) {
			fmt.Fprintf(&b, "- Touched `%s`\n", p)
		}
	}
	return b.String()
}

// fakeAPI is the wire format of provider's summarizer, as fakeupstream
// names it.
func fakeAPI(provider string) fakeupstream.API {
	if provider == summarizerOpenAI {
		return fakeupstream.Chat
	}
	return fakeupstream.Anthropic
}

// providerError is an error body in the provider's format.
func providerError(provider, kind, message string) string {
	return fakeupstream.ErrorBody(fakeAPI(provider), kind, kind, message)
}

// overflowBody is the provider's answer to a prompt larger than its
// window.
func overflowBody(provider string) string {
	if provider == summarizerOpenAI {
		return fakeupstream.OverflowBody(fakeupstream.Chat, 40211, 32768)
	}
	return fakeupstream.OverflowBody(fakeupstream.Anthropic, 210345, 200000)
}

// instantRetries makes the summarizer's waits between tries instant and
// records them; the jitter is zero, so the waits are the exact backoff.
func instantRetries(waits *[]time.Duration) func(*summarize.Options) {
	var mu sync.Mutex
	return func(o *summarize.Options) {
		o.Rand = func() float64 { return 0 }
		o.Sleep = func(ctx context.Context, d time.Duration) error {
			mu.Lock()
			*waits = append(*waits, d)
			mu.Unlock()
			return ctx.Err()
		}
	}
}
