package anthropic

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/clienttest"
	"github.com/compactkit/compact/summarize"
)

const okBody = `{
  "id": "msg_01",
  "type": "message",
  "role": "assistant",
  "model": "claude-test-20250101",
  "content": [
    {"type": "thinking", "thinking": "let me think", "signature": "sig"},
    {"type": "text", "text": "the summary"}
  ],
  "stop_reason": "end_turn",
  "stop_sequence": null,
  "usage": {
    "input_tokens": 200,
    "cache_creation_input_tokens": 50,
    "cache_read_input_tokens": 1000,
    "output_tokens": 300
  }
}`

func newClient(t *testing.T, cfg Config) *Client {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

var baseReq = summarize.Request{Model: "m1", System: "be brief", Prompt: "summarize this", MaxTokens: 512}

// target is this package's client for the checks of clienttest.
func target() clienttest.Target {
	return clienttest.Target{
		Provider: providerName,
		New: func(t *testing.T, url string, o clienttest.Options) summarize.Completer {
			c := newClient(t, Config{BaseURL: url, APIKey: o.APIKey, Header: o.Header, Timeout: o.Timeout})
			if o.Now != nil {
				c.call.Now = o.Now
			}
			return c
		},
		Path: "/v1/messages", KeyHeader: "X-Api-Key", Request: baseReq, Partial: `{"type":"message","content":[`,
	}
}

func TestCompleteSendsWireRequest(t *testing.T) {
	temp := 0.3
	tests := []struct {
		name          string
		cfg           Config
		req           summarize.Request
		wantModel     string
		wantKey       string
		wantMax       int
		wantSystem    string // "" means the field is absent
		wantThinking  int    // 0 means no thinking object
		wantTemp      *float64
		wantExtraName string
	}{
		{
			name:       "key, system prompt and limit",
			cfg:        Config{APIKey: "sk-ant-test"},
			req:        baseReq,
			wantModel:  "m1",
			wantKey:    "sk-ant-test",
			wantMax:    512,
			wantSystem: "be brief",
		},
		{
			name:      "no key, config model, no system, default limit",
			cfg:       Config{Model: "fallback"},
			req:       summarize.Request{Prompt: "hi"},
			wantModel: "fallback",
			wantMax:   DefaultMaxTokens,
		},
		{
			name:      "configured default limit",
			cfg:       Config{MaxTokens: 2000},
			req:       summarize.Request{Model: "m", Prompt: "hi"},
			wantModel: "m",
			wantMax:   2000,
		},
		{
			name:         "thinking adds its budget to the limit",
			cfg:          Config{APIKey: "k", ThinkingBudget: 2048},
			req:          baseReq,
			wantModel:    "m1",
			wantKey:      "k",
			wantMax:      512 + 2048,
			wantSystem:   "be brief",
			wantThinking: 2048,
		},
		{
			name:          "temperature and an extra header",
			cfg:           Config{Temperature: &temp, Header: http.Header{"Anthropic-Beta": {"some-beta"}}},
			req:           baseReq,
			wantModel:     "m1",
			wantMax:       512,
			wantSystem:    "be brief",
			wantTemp:      &temp,
			wantExtraName: "Anthropic-Beta",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := clienttest.NewServer(t, clienttest.Reply(200, okBody))
			tt.cfg.BaseURL = srv.URL + "/"
			c := newClient(t, tt.cfg)
			if _, err := c.Complete(context.Background(), &tt.req); err != nil {
				t.Fatalf("Complete: %v", err)
			}
			got := srv.Last(t)
			if got.Method != http.MethodPost || got.Path != "/v1/messages" {
				t.Errorf("request line = %s %s, want POST /v1/messages", got.Method, got.Path)
			}
			for k, want := range map[string]string{
				"Content-Type":      "application/json",
				"Anthropic-Version": "2023-06-01",
				"User-Agent":        DefaultUserAgent,
				"X-Api-Key":         tt.wantKey,
			} {
				if v := got.Header.Get(k); v != want {
					t.Errorf("header %s = %q, want %q", k, v, want)
				}
			}
			if _, ok := got.Header["X-Api-Key"]; tt.wantKey == "" && ok {
				t.Error("x-api-key sent without a key")
			}
			if got.Header.Get("Authorization") != "" {
				t.Error("Authorization sent; the Messages API takes x-api-key")
			}
			if k := tt.wantExtraName; k != "" && got.Header.Get(k) != "some-beta" {
				t.Errorf("header %s = %q, want some-beta", k, got.Header.Get(k))
			}
			b := got.Body
			if b["model"] != tt.wantModel {
				t.Errorf("model = %v, want %q", b["model"], tt.wantModel)
			}
			if b["max_tokens"] != float64(tt.wantMax) {
				t.Errorf("max_tokens = %v, want %d", b["max_tokens"], tt.wantMax)
			}
			if sys, ok := b["system"]; tt.wantSystem == "" && ok || tt.wantSystem != "" && sys != tt.wantSystem {
				t.Errorf("system = %v (present %v), want %q", sys, ok, tt.wantSystem)
			}
			msgs, _ := b["messages"].([]any)
			if len(msgs) != 1 {
				t.Fatalf("messages = %v, want one user message", msgs)
			}
			if m, _ := msgs[0].(map[string]any); m["role"] != "user" || m["content"] != tt.req.Prompt {
				t.Errorf("messages[0] = %v, want user %q", m, tt.req.Prompt)
			}
			th, hasThinking := b["thinking"].(map[string]any)
			switch {
			case tt.wantThinking == 0 && hasThinking:
				t.Errorf("thinking = %v, want absent", th)
			case tt.wantThinking > 0 && (th["type"] != "enabled" || th["budget_tokens"] != float64(tt.wantThinking)):
				t.Errorf("thinking = %v, want enabled with budget %d", th, tt.wantThinking)
			}
			temp, hasTemp := b["temperature"]
			switch {
			case tt.wantTemp == nil && hasTemp:
				t.Errorf("temperature = %v, want absent", temp)
			case tt.wantTemp != nil && temp != *tt.wantTemp:
				t.Errorf("temperature = %v, want %v", temp, *tt.wantTemp)
			}
			if _, ok := b["stream"]; ok {
				t.Errorf("stream = %v, want absent (non-streaming is the default)", b["stream"])
			}
		})
	}
}

func TestCompleteResponse(t *testing.T) {
	clienttest.Answers(t, target(), []clienttest.Answer{
		{
			Name: "usage mapping, thinking skipped",
			Body: okBody,
			Want: summarize.Response{
				Text:  "the summary",
				Model: "claude-test-20250101",
				Usage: compact.Usage{Input: 200, Output: 300, CacheRead: 1000, CacheWrite: 50},
			},
		},
		{
			Name: "several text blocks joined in order",
			Body: `{"type":"message","model":"c","content":[{"type":"text","text":"first, "},
				{"type":"redacted_thinking","data":"xyz"},{"type":"text","text":"second"}],
				"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":2}}`,
			Want: summarize.Response{Text: "first, second", Model: "c", Usage: compact.Usage{Input: 5, Output: 2}},
		},
		{
			Name: "no usage, no model in answer",
			Body: `{"type":"message","content":[{"type":"text","text":"short"}],"stop_reason":"end_turn"}`,
			Want: summarize.Response{Text: "short", Model: "m1"},
		},
		{
			Name: "cut by max_tokens",
			Body: `{"type":"message","model":"c","content":[{"type":"text","text":"half a sum"}],
				"stop_reason":"max_tokens","usage":{"input_tokens":100,"output_tokens":512}}`,
			Want: summarize.Response{Text: "half a sum", Truncated: true, Model: "c",
				Usage: compact.Usage{Input: 100, Output: 512}},
		},
		{
			Name: "thinking used the whole limit",
			Body: `{"type":"message","model":"c","content":[{"type":"thinking","thinking":"long"}],"stop_reason":"max_tokens"}`,
			Want: summarize.Response{Truncated: true, Model: "c"},
		},
		{
			Name: "cut by the context window",
			Body: `{"type":"message","model":"c","content":[{"type":"text","text":"part"}],"stop_reason":"model_context_window_exceeded"}`,
			Want: summarize.Response{Text: "part", Truncated: true, Model: "c"},
		},
	})
}

const overflowBody = `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208000 tokens > 200000 maximum"},"request_id":"req_011"}`

func TestCompleteProviderErrors(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	huge := `{"type":"error","error":{"type":"api_error","message":"` + strings.Repeat("x", 2*MaxErrorBody) + `"}}`
	clienttest.ProviderErrors(t, target(), now, []clienttest.ProviderErrorCase{
		{
			Name:          "429 with Retry-After seconds",
			Status:        429,
			Headers:       []string{"Retry-After", "12"},
			Body:          `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`,
			WantStatus:    429,
			WantRetry:     12 * time.Second,
			WantRetryable: true,
		},
		{
			Name:          "500 api_error",
			Status:        500,
			Body:          `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`,
			WantStatus:    500,
			WantRetryable: true,
		},
		{
			Name:          "529 overloaded_error",
			Status:        529,
			Body:          `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			WantStatus:    529,
			WantRetryable: true,
		},
		{
			Name:         "400 prompt too long",
			Status:       400,
			Body:         overflowBody,
			WantStatus:   400,
			WantOverflow: true,
		},
		{
			Name:       "401 authentication_error",
			Status:     401,
			Body:       `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`,
			WantStatus: 401,
		},
		{
			Name:          "error body capped",
			Status:        500,
			Body:          huge,
			WantStatus:    500,
			WantBody:      huge[:MaxErrorBody],
			WantRetryable: true,
		},
		{
			Name:          "200 with an overloaded error body",
			Status:        200,
			Body:          `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			WantStatus:    529,
			WantRetryable: true,
		},
		{
			Name:         "200 with a prompt-too-long error body",
			Status:       200,
			Body:         overflowBody,
			WantStatus:   400,
			WantOverflow: true,
		},
		{
			Name:       "200 with an unknown error type",
			Status:     200,
			Body:       `{"type":"error","error":{"type":"brand_new_error","message":"?"}}`,
			WantStatus: 0,
		},
	})
}

func TestCompleteEmptyAnswer(t *testing.T) {
	clienttest.EmptyAnswers(t, target(), []clienttest.EmptyAnswer{
		{Name: "no content blocks", Body: `{"type":"message","content":[],"stop_reason":"end_turn"}`, WantIs: ErrEmptySummary, WantMsg: "end_turn"},
		{Name: "only thinking", Body: `{"type":"message","content":[{"type":"thinking","thinking":"all of it"}],"stop_reason":"end_turn"}`, WantIs: ErrEmptySummary, WantMsg: "end_turn"},
		{Name: "whitespace text", Body: `{"type":"message","content":[{"type":"text","text":"\n\n"}],"stop_reason":"end_turn"}`, WantIs: ErrEmptySummary, WantMsg: "end_turn"},
		{Name: "refusal", Body: `{"type":"message","content":[{"type":"text","text":"I can't"}],"stop_reason":"refusal"}`, WantIs: nil, WantMsg: "refusal"},
	})
}

func TestCompleteCancelled(t *testing.T) { clienttest.Cancelled(t, target()) }

func TestCompleteTimeout(t *testing.T) { clienttest.Timeout(t, target()) }

func TestCompleteWithoutSending(t *testing.T) { clienttest.WithoutSending(t, target()) }

// TestErrorsCarryNoKey checks that a server quoting the request's
// headers in its answer does not put the key, or a secret extra header,
// into the error Complete returns.
func TestErrorsCarryNoKey(t *testing.T) { clienttest.ErrorsCarryNoKey(t, target()) }

// TestRedirectNamed checks that a redirect is not followed and that the
// error says where it pointed.
func TestRedirectNamed(t *testing.T) { clienttest.RedirectNamed(t, target()) }

func TestNewRejects(t *testing.T) {
	temp := 1.0
	clienttest.Rejects(t, New, map[string]Config{
		"relative base URL":         {BaseURL: "api.anthropic.com"},
		"unsupported scheme":        {BaseURL: "ws://example.com"},
		"unparsable base URL":       {BaseURL: "http://[::1"},
		"negative max tokens":       {MaxTokens: -1},
		"thinking budget too small": {ThinkingBudget: 500},
		"negative thinking budget":  {ThinkingBudget: -1},
		"temperature with thinking": {ThinkingBudget: 2048, Temperature: &temp},
	})
}

func TestNewDefaults(t *testing.T) {
	c := newClient(t, Config{})
	if c.call.URL != "https://api.anthropic.com/v1/messages" {
		t.Errorf("endpoint = %q", c.call.URL)
	}
	if c.call.Timeout != DefaultTimeout || c.maxTokens != DefaultMaxTokens || c.call.UserAgent != DefaultUserAgent {
		t.Errorf("defaults = timeout %v, max tokens %d, user agent %q", c.call.Timeout, c.maxTokens, c.call.UserAgent)
	}
	if c.call.Client == nil || c.call.Client.CheckRedirect == nil {
		t.Error("nil HTTPClient did not select the default client (which returns redirects)")
	}
}

func TestConfigFromEnv(t *testing.T) {
	clienttest.FromEnv(t, clienttest.Env{Key: "ANTHROPIC_API_KEY", BaseURL: "ANTHROPIC_BASE_URL", OtherKey: "OPENAI_API_KEY"},
		func(getenv func(string) string) (string, string, string) {
			c := ConfigFromEnv(getenv)
			return c.APIKey, c.BaseURL, c.Model
		})
}
