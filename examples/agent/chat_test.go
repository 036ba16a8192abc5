package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

func TestToWireMapsRolesAndToolCalls(t *testing.T) {
	t.Parallel()
	msgs := []*compact.Message{
		compact.TextMessage(compact.RoleUser, "list it"),
		{Role: compact.RoleAssistant, Content: []compact.Part{
			{Type: compact.PartThinking, Thinking: "hidden"},
			{Type: compact.PartText, Text: "Looking."},
			{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: "a", Name: "list_dir", Arguments: json.RawMessage(`{"path":"."}`)}},
			{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: "b", Name: "read_file", Arguments: json.RawMessage(`"{broken"`)}},
		}},
		{Role: compact.RoleToolResult, ToolCallID: "a", ToolName: "list_dir", Content: []compact.Part{{Type: compact.PartText, Text: "x.txt"}}},
		{Role: compact.RoleToolResult, ToolCallID: "b", ToolName: "read_file", IsError: true, Content: []compact.Part{{Type: compact.PartText, Text: "error: bad"}}},
	}
	got := toWire(msgs)
	if len(got) != 4 {
		t.Fatalf("%d wire messages, want 4", len(got))
	}
	if got[0].Role != "user" || got[0].Content != "list it" {
		t.Errorf("user message %+v", got[0])
	}
	a := got[1]
	if a.Role != "assistant" || a.Content != "Looking." || len(a.ToolCalls) != 2 {
		t.Fatalf("assistant message %+v", a)
	}
	if c := a.ToolCalls[0]; c.ID != "a" || c.Type != "function" || c.Function.Name != "list_dir" || c.Function.Arguments != `{"path":"."}` {
		t.Errorf("first call %+v", c)
	}
	if c := a.ToolCalls[1]; c.Function.Arguments != "{broken" {
		t.Errorf("arguments stored as a string went out as %q, want the original text", c.Function.Arguments)
	}
	if got[2].Role != "tool" || got[2].ToolCallID != "a" || got[2].Content != "x.txt" {
		t.Errorf("tool message %+v", got[2])
	}
}

func TestDecodeAnswerRoundTrip(t *testing.T) {
	t.Parallel()
	body := `{"model":"m1","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":"Let me look.",
		"tool_calls":[{"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\": \"a.go\"}"}},
		              {"id":"","type":"function","function":{"name":"list_dir","arguments":""}},
		              {"id":"call_3","type":"function","function":{"name":"run_shell","arguments":"{not json"}}]}}],
		"usage":{"prompt_tokens":1234,"completion_tokens":56,"total_tokens":1290}}`
	m, err := decodeAnswer([]byte(body), "configured")
	if err != nil {
		t.Fatal(err)
	}
	if m.Role != compact.RoleAssistant || m.Text() != "Let me look." || m.StopReason != compact.StopToolUse || m.Model != "m1" {
		t.Errorf("message %+v", m)
	}
	if m.Usage == nil || m.Usage.Input != 1234 || m.Usage.Output != 56 {
		t.Errorf("usage %+v, want input 1234 and output 56", m.Usage)
	}
	calls := m.ToolCalls()
	if len(calls) != 3 {
		t.Fatalf("%d calls, want 3", len(calls))
	}
	if calls[0].ID != "call_1" || string(calls[0].Arguments) != `{"path": "a.go"}` || calls[0].FilePath() != "a.go" {
		t.Errorf("first call %+v", calls[0])
	}
	if calls[1].ID == "" || string(calls[1].Arguments) != "{}" {
		t.Errorf("a call without id or arguments became %+v", calls[1])
	}
	if !json.Valid(calls[2].Arguments) {
		t.Errorf("invalid arguments stored as %s, which is not JSON", calls[2].Arguments)
	}
	// Back to the wire: the arguments are sent as the model wrote them.
	w := toWire([]*compact.Message{m})[0]
	if w.ToolCalls[0].Function.Arguments != `{"path": "a.go"}` || w.ToolCalls[2].Function.Arguments != "{not json" ||
		w.ToolCalls[1].ID != calls[1].ID {
		t.Errorf("round trip gave %+v", w.ToolCalls)
	}
}

func TestDecodeAnswerStopReasons(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body string
		want compact.StopReason
		text string
	}{
		{`{"choices":[{"finish_reason":"stop","message":{"content":"done"}}]}`, compact.StopEnd, "done"},
		{`{"choices":[{"finish_reason":"length","message":{"content":"cut"}}]}`, compact.StopLength, "cut"},
		// Ollama has answered tool calls with finish_reason "stop".
		{`{"choices":[{"finish_reason":"stop","message":{"content":null,"tool_calls":[{"id":"x","type":"function","function":{"name":"list_dir","arguments":"{}"}}]}}]}`, compact.StopToolUse, ""},
		{`{"choices":[{"finish_reason":"stop","message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}]}`, compact.StopEnd, "ab"},
	} {
		m, err := decodeAnswer([]byte(tc.body), "m")
		if err != nil {
			t.Fatalf("%s: %v", tc.body, err)
		}
		if m.StopReason != tc.want || m.Text() != tc.text {
			t.Errorf("%s: stop %q text %q, want %q %q", tc.body, m.StopReason, m.Text(), tc.want, tc.text)
		}
	}
}

func TestCompleteSendsToolsAndReportsErrors(t *testing.T) {
	t.Parallel()
	var got wireRequest
	var auth string
	status, answer := http.StatusOK, `{"choices":[{"finish_reason":"stop","message":{"content":"hi"}}]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		json.NewDecoder(r.Body).Decode(&got)
		w.WriteHeader(status)
		w.Write([]byte(answer))
	}))
	defer srv.Close()
	tools := &Tools{Dir: t.TempDir()}
	c := &Chat{BaseURL: srv.URL + "/v1/", Model: "m", APIKey: "k", System: "sys", Tools: tools.Specs(), HTTP: srv.Client()}
	ctx := context.Background()
	m, err := c.Complete(ctx, []*compact.Message{compact.TextMessage(compact.RoleUser, "hello")})
	if err != nil || m.Text() != "hi" {
		t.Fatalf("Complete = %v, %v", m, err)
	}
	if auth != "Bearer k" || got.Model != "m" || len(got.Messages) != 2 || got.Messages[0].Role != "system" || got.Stream {
		t.Errorf("request %+v with authorization %q", got, auth)
	}
	if len(got.Tools) != 3 || got.Tools[0].Type != "function" || got.Tools[0].Function.Name != "read_file" ||
		!json.Valid(got.Tools[0].Function.Parameters) {
		t.Errorf("tools %+v", got.Tools)
	}

	status, answer = http.StatusBadRequest, overflowBody(100, 200)
	_, err = c.Complete(ctx, []*compact.Message{compact.TextMessage(compact.RoleUser, "hello")})
	var pe *compact.ProviderError
	if !errors.As(err, &pe) || pe.StatusCode != 400 || !strings.Contains(pe.Body, "context_length_exceeded") {
		t.Fatalf("err = %v, want a ProviderError with the status and body", err)
	}
	if !compact.IsContextOverflow(err) {
		t.Error("the overflow answer is not recognised as an overflow")
	}

	// llama.cpp reports an overflow with status 500 and its own wording;
	// some servers put the error in a 200 body.
	status, answer = http.StatusInternalServerError, `{"error":{"code":500,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}`
	if _, err = c.Complete(ctx, nil); !compact.IsContextOverflow(err) {
		t.Errorf("llama.cpp overflow not recognised: %v", err)
	}
	status, answer = http.StatusOK, `{"error":{"message":"This model's maximum context length is 10 tokens"}}`
	if _, err = c.Complete(ctx, nil); !errors.As(err, &pe) || !compact.IsContextOverflow(err) {
		t.Errorf("an error in a 200 body gave %v", err)
	}
	status, answer = http.StatusTooManyRequests, `{"error":{"message":"Rate limit reached"}}`
	if _, err = c.Complete(ctx, nil); err == nil || compact.IsContextOverflow(err) {
		t.Errorf("a rate limit gave %v", err)
	}
}
