package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/compactkit/compact/internal/testing/fakeupstream"
)

// fakeModel is a scripted model behind a Chat Completions endpoint. It
// counts a request's tokens more strictly than the library's estimate
// (characters / 3 instead of / 4), refuses requests above its window the
// way OpenAI does, checks that every tool message follows its call, and
// answers with tool calls for Steps answers, then with a final answer.
type fakeModel struct {
	// Window is the request size above which the model answers with a
	// context_length_exceeded error.
	Window int
	// Steps is the number of answers that call a tool.
	Steps int
	// OverflowAt lists request numbers (1-based) answered with an
	// overflow error whatever their size.
	OverflowAt map[int]bool

	mu        sync.Mutex
	requests  int
	answered  int
	maxTokens int
	sizes     []int    // tokens of each request, in order
	overflows []int    // request numbers answered with an overflow
	problems  []string // malformed requests (orphans, dangling calls, ...)
	auth      string   // the Authorization header of the last request
}

const finalAnswer = "All files inspected; the task is done."

func (f *fakeModel) server(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	return srv
}

func (f *fakeModel) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	var req sentRequest
	var raw struct{ Messages []json.RawMessage }
	body, err := io.ReadAll(r.Body)
	if err == nil {
		err = errors.Join(json.Unmarshal(body, &req), json.Unmarshal(body, &raw))
	}
	if err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests++
	n := f.requests
	f.auth = r.Header.Get("Authorization")
	tokens := countTokens(req.Messages)
	f.sizes = append(f.sizes, tokens)
	f.maxTokens = max(f.maxTokens, tokens)
	f.check(n, req, raw.Messages)
	if tokens > f.Window || f.OverflowAt[n] {
		f.overflows = append(f.overflows, n)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, fakeupstream.OverflowBody(fakeupstream.Chat, tokens, f.Window))
		return
	}
	f.answered++
	msg := map[string]any{"role": "assistant"}
	finish := "stop"
	completion := 10
	if f.answered <= f.Steps {
		name, args := scriptedCall(f.answered)
		msg["content"] = fmt.Sprintf("Step %d: calling %s to look further.", f.answered, name)
		msg["tool_calls"] = []map[string]any{{
			"id": fmt.Sprintf("call_%d", f.answered), "type": "function",
			"function": map[string]any{"name": name, "arguments": args},
		}}
		finish = "tool_calls"
		completion = len(args)/3 + 20
	} else {
		msg["content"] = finalAnswer
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion", "model": req.Model,
		"choices": []map[string]any{{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": tokens, "completion_tokens": completion, "total_tokens": tokens + completion},
	})
}

// scriptedCall is the tool call of the i-th answer: list_dir, read_file
// and run_shell in turn, most of them with large results.
func scriptedCall(i int) (name, args string) {
	switch i % 4 {
	case 0:
		return "list_dir", `{"path":"."}`
	case 1:
		return "read_file", `{"path":"big.txt"}`
	case 2:
		return "run_shell", `{"command":"cat big.txt"}`
	}
	return "read_file", fmt.Sprintf(`{"path":"src/file%d.txt"}`, i%5)
}

// sentRequest is a request as the fake model reads it: the agent's
// messages have string content.
type sentRequest struct {
	Model    string        `json:"model"`
	Messages []sentMessage `json:"messages"`
	Tools    []wireTool    `json:"tools"`
	Stream   bool          `json:"stream"`
}

// sentMessage is one of a request's messages.
type sentMessage struct {
	Role      string `json:"role"`
	Content   string `json:"content"`
	Name      string `json:"name"`
	ToolCalls []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
	ToolCallID string `json:"tool_call_id"`
}

// countTokens is the fake model's tokenizer: every character of the
// contents, tool names and arguments, divided by 3.
func countTokens(msgs []sentMessage) int {
	chars := 0
	for _, m := range msgs {
		chars += len(m.Content)
		for _, c := range m.ToolCalls {
			chars += len(c.Function.Name) + len(c.Function.Arguments)
		}
	}
	return (chars + 2) / 3
}

// check records what is wrong with a request: tool messages and calls
// that do not pair (fakeupstream.Pairing, the proxy tests' rule), a
// request that does not end with a user message or a tool result.
func (f *fakeModel) check(n int, req sentRequest, raw []json.RawMessage) {
	for _, p := range fakeupstream.Pairing(fakeupstream.Chat, raw) {
		f.problems = append(f.problems, fmt.Sprintf("request %d: %s", n, p))
	}
	if len(req.Messages) == 0 || req.Messages[len(req.Messages)-1].Role == "assistant" {
		f.problems = append(f.problems, fmt.Sprintf("request %d does not end with a user message or tool result", n))
	}
}

func (f *fakeModel) stats() (requests, maxTokens int, overflows []int, problems []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests, f.maxTokens, append([]int(nil), f.overflows...), append([]string(nil), f.problems...)
}

// workdir makes a directory with a large file, a few small ones and a
// subdirectory.
func workdir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var big strings.Builder
	for i := 0; big.Len() < 40_000; i++ {
		fmt.Fprintf(&big, "line %05d: the quick brown fox jumps over the lazy dog, again and again\n", i)
	}
	write := func(name, text string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("big.txt", big.String())
	write("notes.txt", "Remember: the config lives in src/.\n")
	for i := range 5 {
		write(fmt.Sprintf("src/file%d.txt", i), strings.Repeat(fmt.Sprintf("source file %d content\n", i), 40))
	}
	return dir
}

func TestFakeModelCheckFindsOrphans(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		msgs string
		want int
	}{
		{`[{"role":"user","content":"a"},{"role":"assistant","content":"","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"r"}]`, 0},
		{`[{"role":"user","content":"a"},{"role":"tool","tool_call_id":"c","content":"r"}]`, 1},
		{`[{"role":"user","content":"a"},{"role":"assistant","content":"","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}]`, 2},
	} {
		var req sentRequest
		var raw []json.RawMessage
		if err := errors.Join(json.Unmarshal([]byte(tc.msgs), &req.Messages), json.Unmarshal([]byte(tc.msgs), &raw)); err != nil {
			t.Fatal(err)
		}
		f := &fakeModel{}
		f.check(1, req, raw)
		if len(f.problems) != tc.want {
			t.Errorf("%s: problems %q, want %d", tc.msgs, f.problems, tc.want)
		}
	}
}
