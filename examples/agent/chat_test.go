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
	"github.com/compactkit/compact/internal/testing/fakeupstream"
)

// sent is the request c sends for msgs, as the fake model reads it.
func sent(t *testing.T, c *Chat, msgs []*compact.Message) sentRequest {
	t.Helper()
	req, err := c.request(msgs)
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	var got sentRequest
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	return got
}

func TestRequestMapsRolesAndToolCalls(t *testing.T) {
	t.Parallel()
	msgs := []*compact.Message{
		compact.TextMessage(compact.RoleUser, "list it"),
		{Role: compact.RoleAssistant, Content: []compact.Part{
			{Type: compact.PartThinking, Thinking: "hidden"},
			{Type: compact.PartText, Text: "Looking."},
			{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: "a", Name: "list_dir", Arguments: json.RawMessage(`{"path":"."}`)}},
			// As this agent stored broken arguments before it used openai's mapping.
			{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: "b", Name: "read_file", Arguments: json.RawMessage(`"{broken"`)}},
			{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: "c", Name: "read_file", Arguments: json.RawMessage(`{"_raw":"{also broken"}`)}},
		}},
		{Role: compact.RoleToolResult, ToolCallID: "a", ToolName: "list_dir", Content: []compact.Part{{Type: compact.PartText, Text: "x.txt"}}},
		{Role: compact.RoleToolResult, ToolCallID: "b", ToolName: "read_file", IsError: true, Content: []compact.Part{{Type: compact.PartText, Text: "error: bad"}}},
	}
	got := sent(t, &Chat{Model: "m", System: "sys"}, msgs).Messages
	if len(got) != 5 {
		t.Fatalf("%d wire messages, want 5", len(got))
	}
	if got[0].Role != "system" || got[0].Content != "sys" || got[1].Role != "user" || got[1].Content != "list it" {
		t.Errorf("system and user messages %+v", got[:2])
	}
	a := got[2]
	if a.Role != "assistant" || a.Content != "Looking." || len(a.ToolCalls) != 3 {
		t.Fatalf("assistant message %+v", a)
	}
	if c := a.ToolCalls[0]; c.ID != "a" || c.Type != "function" || c.Function.Name != "list_dir" || c.Function.Arguments != `{"path":"."}` {
		t.Errorf("first call %+v", c)
	}
	if c := a.ToolCalls[1]; c.Function.Arguments != "{broken" {
		t.Errorf("arguments stored as a string went out as %q, want the original text", c.Function.Arguments)
	}
	if c := a.ToolCalls[2]; c.Function.Arguments != "{also broken" {
		t.Errorf("arguments stored as {\"_raw\": s} went out as %q, want the original text", c.Function.Arguments)
	}
	if got[3].Role != "tool" || got[3].ToolCallID != "a" || got[3].Name != "" || got[3].Content != "x.txt" {
		t.Errorf("tool message %+v", got[3])
	}
}

func TestDecodeAnswerRoundTrip(t *testing.T) {
	t.Parallel()
	body := `{"model":"m1","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":"Let me look.",
		"reasoning_content":"The file first.",
		"tool_calls":[{"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\": \"a.go\"}"}},
		              {"id":"","type":"function","function":{"name":"list_dir","arguments":""}},
		              {"id":"call_3","type":"function","function":{"name":"run_shell","arguments":"{not json"}},
		              {"id":"call_4","type":"function","function":{"name":"list_dir","arguments":"[1, 2]"}}]}}],
		"usage":{"prompt_tokens":1234,"completion_tokens":56,"total_tokens":1290,"prompt_tokens_details":{"cached_tokens":1000}}}`
	m, err := decodeAnswer([]byte(body), "configured")
	if err != nil {
		t.Fatal(err)
	}
	if m.Role != compact.RoleAssistant || m.Text() != "Let me look." || m.StopReason != compact.StopToolUse || m.Model != "m1" {
		t.Errorf("message %+v", m)
	}
	if m.Content[0].Type != compact.PartThinking || m.Content[0].Thinking != "The file first." {
		t.Errorf("the reasoning became %+v, want a thinking part", m.Content[0])
	}
	// Usage as openai maps it: the cached prompt tokens split out.
	if m.Usage == nil || *m.Usage != (compact.Usage{Input: 234, CacheRead: 1000, Output: 56, Total: 1290}) {
		t.Errorf("usage %+v, want input 234, cache read 1000, output 56, total 1290", m.Usage)
	}
	calls := m.ToolCalls()
	if len(calls) != 4 {
		t.Fatalf("%d calls, want 4", len(calls))
	}
	if calls[0].ID != "call_1" || string(calls[0].Arguments) != `{"path": "a.go"}` || calls[0].FilePath() != "a.go" {
		t.Errorf("first call %+v", calls[0])
	}
	if calls[1].ID == "" || string(calls[1].Arguments) != "{}" {
		t.Errorf("a call without id or arguments became %+v", calls[1])
	}
	// Arguments that are not an object are kept as openai.Arguments
	// keeps them; this agent stored them as a JSON string, or as sent
	// when they were JSON but not an object.
	if string(calls[2].Arguments) != `{"_raw":"{not json"}` || string(calls[3].Arguments) != `{"_raw":"[1, 2]"}` {
		t.Errorf("arguments that are not an object stored as %s and %s", calls[2].Arguments, calls[3].Arguments)
	}
	// Back to the wire: the arguments are sent as the model wrote them,
	// and the reasoning is not sent.
	w := sent(t, &Chat{}, []*compact.Message{m}).Messages[0]
	if w.ToolCalls[0].Function.Arguments != `{"path": "a.go"}` || w.ToolCalls[2].Function.Arguments != "{not json" ||
		w.ToolCalls[3].Function.Arguments != "[1, 2]" || w.ToolCalls[1].ID != calls[1].ID || w.Content != "Let me look." {
		t.Errorf("round trip gave %+v", w)
	}
	req, _ := (&Chat{}).request([]*compact.Message{m})
	if strings.Contains(string(req.Messages[0]), "The file first.") {
		t.Errorf("the reasoning was sent back: %s", req.Messages[0])
	}
}

func TestDecodeAnswerLegacyAndErrors(t *testing.T) {
	t.Parallel()
	// A legacy function_call has no id: it gets one, and goes back as a
	// tool call its result can answer.
	m, err := decodeAnswer([]byte(`{"choices":[{"finish_reason":"function_call","message":{"role":"assistant","content":null,
		"function_call":{"name":"list_dir","arguments":"{\"path\":\".\"}"}}}]}`), "m")
	if err != nil {
		t.Fatal(err)
	}
	calls := m.ToolCalls()
	if len(calls) != 1 || calls[0].ID == "" || calls[0].Name != "list_dir" || m.StopReason != compact.StopToolUse {
		t.Fatalf("legacy call read as %+v, stop %q", calls, m.StopReason)
	}
	res := &compact.Message{Role: compact.RoleToolResult, ToolCallID: calls[0].ID, Content: []compact.Part{{Type: compact.PartText, Text: "x"}}}
	w := sent(t, &Chat{}, []*compact.Message{m, res}).Messages
	if len(w[0].ToolCalls) != 1 || w[0].ToolCalls[0].ID != calls[0].ID || w[1].ToolCallID != calls[0].ID {
		t.Errorf("legacy call sent as %+v", w)
	}
	for _, tc := range []struct{ body, want string }{
		{`{"choices":[{"finish_reason":"stop"}]}`, "openai-compatible: choices[0].message: not a JSON object"},
		{`{"choices":[{"message":{"content":7}}]}`, "openai-compatible: choices[0].message.content: neither a string nor an array"},
		{`{"choices":[]}`, `openai: response has no choices: {"choices":[]}`},
	} {
		if _, err := decodeAnswer([]byte(tc.body), "m"); err == nil || err.Error() != tc.want {
			t.Errorf("%s: err = %v, want %q", tc.body, err, tc.want)
		}
	}
	// vLLM's error body, sent with status 200 by some versions, is read as
	// openai reads it: an overflow with its status (this agent's copy
	// reported "no choices").
	_, err = decodeAnswer([]byte(`{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens in the messages.","type":"BadRequestError","param":null,"code":400}`), "m")
	var pe *compact.ProviderError
	if !errors.As(err, &pe) || pe.StatusCode != 400 || !compact.IsContextOverflow(err) {
		t.Errorf("vLLM's error body gave %v", err)
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
		// Parts stay parts (this agent joined them into one), as openai reads them.
		{`{"choices":[{"finish_reason":"stop","message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}]}`, compact.StopEnd, "a\nb"},
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
	var got sentRequest
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

	status, answer = http.StatusBadRequest, fakeupstream.OverflowBody(fakeupstream.Chat, 200, 100)
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

// TestErrorInAnswerHidesKey: a server that answers 200 with an error
// quoting the request's credential (as a gateway that echoes headers does)
// gets no key into the error Complete returns.
func TestErrorInAnswerHidesKey(t *testing.T) {
	t.Parallel()
	const key = "sk-example-0123456789"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"error":{"message":"bad credential ` + r.Header.Get("Authorization") + `"}}`))
	}))
	defer srv.Close()
	c := &Chat{BaseURL: srv.URL + "/v1", Model: "m", APIKey: key, HTTP: srv.Client()}
	_, err := c.Complete(context.Background(), []*compact.Message{compact.TextMessage(compact.RoleUser, "hello")})
	var pe *compact.ProviderError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a ProviderError", err)
	}
	if strings.Contains(err.Error(), key) || strings.Contains(pe.Body, key) {
		t.Errorf("the key reached the error: %v (body %s)", err, pe.Body)
	}
}
