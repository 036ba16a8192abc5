package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/syncbuf"
)

// TestMeasureCountsAsTheGuard: the proxy counts the messages of a request
// as the library's Guard counts the conversation they come from, with
// and without a learned ratio: one meter (compact.Meter). The
// conversation holds an aborted reply of 17,000 characters that asked for
// a tool: the agent does not send it again (compact.ForModel, as pi), so
// the proxy never sees it, and the Guard does not count it either. Before,
// the Guard without a Calibrator counted it (Measure did), and with one it
// rounded the sum of the characters where the proxy rounded each message.
func TestMeasureCountsAsTheGuard(t *testing.T) {
	const model = "m"
	call := &compact.ToolCall{ID: "call_1", Name: "read", Arguments: json.RawMessage(`{"path":"main.go"}`)}
	asked := &compact.Message{Role: compact.RoleAssistant, StopReason: compact.StopToolUse, Content: []compact.Part{
		{Type: compact.PartText, Text: "Reading it."}, {Type: compact.PartToolCall, ToolCall: call}}}
	out := compact.TextMessage(compact.RoleToolResult, strings.Repeat("package main\n", 77))
	out.ToolCallID = "call_1"
	aborted := &compact.Message{Role: compact.RoleAssistant, StopReason: compact.StopAborted, Content: []compact.Part{
		{Type: compact.PartText, Text: strings.Repeat("x", 17000)},
		{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: "call_2", Name: "write", Arguments: json.RawMessage(`{}`)}}}}
	conversation := []*compact.Message{
		compact.TextMessage(compact.RoleUser, "What does main.go do?"),
		asked, out, aborted,
		compact.TextMessage(compact.RoleUser, "Go on, but briefly."),
	}

	// The Chat Completions body an agent sends for it: what ForModel keeps.
	var msgs []map[string]any
	for _, m := range compact.ForModel(conversation) {
		w := map[string]any{"role": string(m.Role), "content": m.Text()}
		switch m.Role {
		case compact.RoleToolResult:
			w["role"], w["tool_call_id"] = "tool", m.ToolCallID
		case compact.RoleAssistant:
			var calls []map[string]any
			for _, c := range m.ToolCalls() {
				calls = append(calls, map[string]any{"id": c.ID, "type": "function",
					"function": map[string]any{"name": c.Name, "arguments": string(c.Arguments)}})
			}
			w["tool_calls"] = calls
		}
		msgs = append(msgs, w)
	}
	if len(msgs) != 4 {
		t.Fatalf("ForModel kept %d messages, want 4 (the aborted reply dropped)", len(msgs))
	}
	body, err := json.Marshal(map[string]any{"model": model, "messages": msgs})
	if err != nil {
		t.Fatal(err)
	}

	for _, learned := range []bool{false, true} {
		srv, err := New(Config{})
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		var cal *compact.Calibrator
		if learned {
			cal = &compact.Calibrator{}
			// Three characters per token, on both sides.
			for _, c := range []*compact.Calibrator{cal, &srv.calib} {
				if !c.Observe(model, 3000, 1000) {
					t.Fatal("observation refused")
				}
			}
		}
		log := &compact.SliceLog{}
		for _, m := range conversation {
			if _, err := log.AppendMessage(context.Background(), m); err != nil {
				t.Fatal(err)
			}
		}
		g := &compact.Guard{Engine: &compact.Engine{}, Log: log, Model: compact.ModelInfo{ID: model}, Calibrator: cal}
		guard := g.Usage().Tokens

		p, err := codecFor(Chat).parse(body)
		if err != nil {
			t.Fatal(err)
		}
		v := &view{api: Chat, p: p}
		srv.measure(v)
		if got := v.tokens - v.envelope; got != guard {
			t.Errorf("learned ratio %v: the proxy counts the messages at %d tokens, the Guard at %d", learned, got, guard)
		}
	}
}

// TestLearnsAsTheMeter: the proxy learns a model's characters per token
// as compact.Meter does (compact.Calibrator.ObserveMessages): the exact
// characters of the messages a request added, against the prompt's growth
// less compact.ImageTokens per image. It used to count four characters
// per estimated token, which rounds each message up and counts an image
// as 4,800 characters: here it learned 3.55 characters per token where
// the provider counted 3.
func TestLearnsAsTheMeter(t *testing.T) {
	const base = 10000
	text := strings.Repeat("a", 3000)
	growth := 1 + 1000 + compact.ImageTokens // "ok", the text at 3 chars a token, the image
	var n atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		prompt := base
		if n.Add(1) > 1 {
			prompt += growth
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":%d,"completion_tokens":1,"total_tokens":%d}}`, prompt, prompt+1)
	}))
	t.Cleanup(up.Close)
	var logs syncbuf.Buffer
	srv, front := proxyIn(t, up.URL, Config{Window: 20000, Summarizer: SummarizerExtractive,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	bodies := []string{
		`{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hello"}]}`,
		`{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hello"},{"role":"assistant","content":"ok"},` +
			`{"role":"user","content":[{"type":"text","text":"` + text + `"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]}]}`,
	}
	for i, body := range bodies {
		req, err := http.NewRequest(http.MethodPost, front.URL+"/v1/chat/completions", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer sk-learn-test")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Session-Id", "conv-learn")
		resp, _ := roundTrip(t, req)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d: status %d", i+1, resp.StatusCode)
		}
		waitRequestLogs(t, &logs, i+1) // its accounting is stored
	}
	srv.mu.Lock()
	st := srv.calib.Stats("m")
	srv.mu.Unlock()
	if !st.Learned || st.CharsPerToken < 2.95 || st.CharsPerToken > 3.05 {
		t.Errorf("learned %+v, want about 3 characters per token", st)
	}
}
