package openai

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
  "id": "chatcmpl-1",
  "object": "chat.completion",
  "created": 1700000000,
  "model": "gpt-test-2024",
  "choices": [{
    "index": 0,
    "message": {"role": "assistant", "content": "the summary", "reasoning_content": "private musings"},
    "finish_reason": "stop"
  }],
  "usage": {
    "prompt_tokens": 1200,
    "completion_tokens": 300,
    "total_tokens": 1500,
    "prompt_tokens_details": {"cached_tokens": 1000}
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
			c := newClient(t, Config{BaseURL: url + "/v1", APIKey: o.APIKey, Header: o.Header, Timeout: o.Timeout})
			if o.Now != nil {
				c.call.Now = o.Now
			}
			return c
		},
		Path: "/v1/chat/completions", KeyHeader: "Authorization", Request: baseReq, Partial: `{"choices":[`,
	}
}

func TestCompleteSendsWireRequest(t *testing.T) {
	temp := 0.2
	tests := []struct {
		name       string
		cfg        Config
		req        summarize.Request
		wantModel  string
		wantAuth   string
		wantField  string // limit field expected; "" means none
		wantSystem bool
		wantHeader [2]string
	}{
		{
			name:       "key and default field for a non-OpenAI host",
			cfg:        Config{APIKey: "sk-test"},
			req:        baseReq,
			wantModel:  "m1",
			wantAuth:   "Bearer sk-test",
			wantField:  "max_tokens",
			wantSystem: true,
		},
		{
			name:       "explicit max_completion_tokens",
			cfg:        Config{APIKey: "sk-test", TokenField: MaxCompletionTokens},
			req:        baseReq,
			wantModel:  "m1",
			wantAuth:   "Bearer sk-test",
			wantField:  "max_completion_tokens",
			wantSystem: true,
		},
		{
			name:       "no key sends no Authorization",
			cfg:        Config{},
			req:        baseReq,
			wantModel:  "m1",
			wantField:  "max_tokens",
			wantSystem: true,
		},
		{
			name:      "config model, no system prompt, no limit",
			cfg:       Config{Model: "fallback-model"},
			req:       summarize.Request{Prompt: "hi"},
			wantModel: "fallback-model",
		},
		{
			name:       "extra header and temperature",
			cfg:        Config{Header: http.Header{"X-Title": {"compact"}}, Temperature: &temp},
			req:        baseReq,
			wantModel:  "m1",
			wantField:  "max_tokens",
			wantSystem: true,
			wantHeader: [2]string{"X-Title", "compact"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := clienttest.NewServer(t, clienttest.Reply(200, okBody))
			tt.cfg.BaseURL = srv.URL + "/v1/"
			c := newClient(t, tt.cfg)
			if _, err := c.Complete(context.Background(), &tt.req); err != nil {
				t.Fatalf("Complete: %v", err)
			}
			got := srv.Last(t)
			if got.Method != http.MethodPost || got.Path != "/v1/chat/completions" {
				t.Errorf("request line = %s %s, want POST /v1/chat/completions", got.Method, got.Path)
			}
			if ct := got.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
			if ua := got.Header.Get("User-Agent"); ua != DefaultUserAgent {
				t.Errorf("User-Agent = %q, want %q", ua, DefaultUserAgent)
			}
			if auth := got.Header.Get("Authorization"); auth != tt.wantAuth {
				t.Errorf("Authorization = %q, want %q", auth, tt.wantAuth)
			}
			if k := tt.wantHeader[0]; k != "" && got.Header.Get(k) != tt.wantHeader[1] {
				t.Errorf("header %s = %q, want %q", k, got.Header.Get(k), tt.wantHeader[1])
			}
			b := got.Body
			if b["model"] != tt.wantModel {
				t.Errorf("model = %v, want %q", b["model"], tt.wantModel)
			}
			if stream, ok := b["stream"]; !ok || stream != false {
				t.Errorf("stream = %v (present %v), want false", stream, ok)
			}
			for _, f := range []string{"max_tokens", "max_completion_tokens"} {
				v, ok := b[f]
				switch {
				case f == tt.wantField && (!ok || v != float64(tt.req.MaxTokens)):
					t.Errorf("%s = %v, want %d", f, v, tt.req.MaxTokens)
				case f != tt.wantField && ok:
					t.Errorf("%s = %v, want absent", f, v)
				}
			}
			if tt.cfg.Temperature != nil && b["temperature"] != *tt.cfg.Temperature {
				t.Errorf("temperature = %v, want %v", b["temperature"], *tt.cfg.Temperature)
			}
			if _, ok := b["temperature"]; tt.cfg.Temperature == nil && ok {
				t.Error("temperature sent though not configured")
			}
			msgs, _ := b["messages"].([]any)
			want := []map[string]any{{"role": "user", "content": tt.req.Prompt}}
			if tt.wantSystem {
				want = append([]map[string]any{{"role": "system", "content": tt.req.System}}, want...)
			}
			if len(msgs) != len(want) {
				t.Fatalf("messages = %v, want %v", msgs, want)
			}
			for i := range want {
				m, _ := msgs[i].(map[string]any)
				if m["role"] != want[i]["role"] || m["content"] != want[i]["content"] {
					t.Errorf("messages[%d] = %v, want %v", i, m, want[i])
				}
			}
		})
	}
}

func TestDefaultTokenField(t *testing.T) {
	tests := []struct {
		base string
		want TokenField
	}{
		{"", MaxCompletionTokens},
		{"https://api.openai.com/v1", MaxCompletionTokens},
		{"https://API.OpenAI.com:443/v1/", MaxCompletionTokens},
		{"https://openrouter.ai/api/v1", MaxTokens},
		{"http://localhost:11434/v1", MaxTokens},
		{"http://127.0.0.1:8000/v1", MaxTokens},
	}
	for _, tt := range tests {
		t.Run(tt.base, func(t *testing.T) {
			c := newClient(t, Config{BaseURL: tt.base})
			if c.tokenField != tt.want {
				t.Errorf("token field = %q, want %q", c.tokenField, tt.want)
			}
		})
	}
}

func TestCompleteResponse(t *testing.T) {
	clienttest.Answers(t, target(), []clienttest.Answer{
		{
			Name: "usage with cached tokens, reasoning_content ignored",
			Body: okBody,
			Want: summarize.Response{
				Text:  "the summary",
				Model: "gpt-test-2024",
				Usage: compact.Usage{Input: 200, CacheRead: 1000, Output: 300, Total: 1500},
			},
		},
		{
			Name: "no usage, no model in answer",
			Body: `{"choices":[{"message":{"role":"assistant","content":"short"},"finish_reason":"stop"}]}`,
			Want: summarize.Response{Text: "short", Model: "m1"},
		},
		{
			Name: "usage without details",
			Body: `{"model":"llama","choices":[{"message":{"content":"x"},"finish_reason":"stop"}],
				"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`,
			Want: summarize.Response{Text: "x", Model: "llama", Usage: compact.Usage{Input: 10, Output: 5, Total: 15}},
		},
		{
			Name: "truncated by the output limit",
			Body: `{"model":"m","choices":[{"message":{"content":"half a sum"},"finish_reason":"length"}],
				"usage":{"prompt_tokens":100,"completion_tokens":512,"total_tokens":612}}`,
			Want: summarize.Response{Text: "half a sum", Truncated: true, Model: "m",
				Usage: compact.Usage{Input: 100, Output: 512, Total: 612}},
		},
		{
			Name: "truncated with nothing written",
			Body: `{"model":"m","choices":[{"message":{"content":null},"finish_reason":"length"}]}`,
			Want: summarize.Response{Truncated: true, Model: "m"},
		},
		{
			Name: "content as an array of parts",
			Body: `{"model":"m","choices":[{"message":{"content":[{"type":"thinking","thinking":"hmm"},
				{"type":"text","text":"part one, "},{"type":"text","text":"part two"}]},"finish_reason":"stop"}]}`,
			Want: summarize.Response{Text: "part one, part two", Model: "m"},
		},
	})
}

const overflowBody = `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`

func TestCompleteProviderErrors(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	huge := `{"error":{"message":"` + strings.Repeat("x", 2*MaxErrorBody) + `"}}`
	clienttest.ProviderErrors(t, target(), now, []clienttest.ProviderErrorCase{
		{
			Name:          "429 with Retry-After seconds",
			Status:        429,
			Headers:       []string{"Retry-After", "20"},
			Body:          `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`,
			WantStatus:    429,
			WantRetry:     20 * time.Second,
			WantRetryable: true,
		},
		{
			Name:          "500",
			Status:        500,
			Body:          `{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}`,
			WantStatus:    500,
			WantRetryable: true,
		},
		{
			Name:          "529",
			Status:        529,
			Body:          `{"error":{"message":"overloaded"}}`,
			WantStatus:    529,
			WantRetryable: true,
		},
		{
			Name:         "400 context overflow",
			Status:       400,
			Body:         overflowBody,
			WantStatus:   400,
			WantOverflow: true,
		},
		{
			Name:       "401 with an empty body",
			Status:     401,
			Body:       "",
			WantStatus: 401,
		},
		{
			Name:       "error body capped",
			Status:     400,
			Body:       huge,
			WantStatus: 400,
			WantBody:   huge[:MaxErrorBody],
		},
		{
			Name:          "200 with an error object and an HTTP code",
			Status:        200,
			Body:          `{"error":{"message":"Provider returned error","code":502,"metadata":{"provider_name":"x"}}}`,
			WantStatus:    502,
			WantRetryable: true,
		},
		{
			Name:         "200 with an overflow error object",
			Status:       200,
			Body:         overflowBody,
			WantStatus:   0,
			WantOverflow: true,
		},
		{
			Name:       "200 with a vLLM-style error",
			Status:     200,
			Body:       `{"object":"error","message":"model not found","type":"NotFoundError","param":null,"code":404}`,
			WantStatus: 404,
		},
		{
			Name:       "200 with a bare error string",
			Status:     200,
			Body:       `{"error":"something broke"}`,
			WantStatus: 0,
		},
	})
}

func TestCompleteEmptyAnswer(t *testing.T) {
	clienttest.EmptyAnswers(t, target(), []clienttest.EmptyAnswer{
		{Name: "empty string", Body: `{"choices":[{"message":{"content":""},"finish_reason":"stop"}]}`, WantIs: ErrEmptySummary, WantMsg: "stop"},
		{Name: "null content", Body: `{"choices":[{"message":{"content":null},"finish_reason":"stop"}]}`, WantIs: ErrEmptySummary, WantMsg: "stop"},
		{Name: "whitespace only", Body: `{"choices":[{"message":{"content":" \n "},"finish_reason":"stop"}]}`, WantIs: ErrEmptySummary, WantMsg: "stop"},
		{Name: "only reasoning", Body: `{"choices":[{"message":{"content":"","reasoning_content":"all the text"},"finish_reason":"stop"}]}`, WantIs: ErrEmptySummary, WantMsg: "stop"},
		{Name: "no choices", Body: `{"choices":[]}`, WantIs: nil, WantMsg: "no choices"},
		{Name: "content filter", Body: `{"choices":[{"message":{"content":"partial"},"finish_reason":"content_filter"}]}`, WantIs: nil, WantMsg: "content filter"},
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
	clienttest.Rejects(t, New, map[string]Config{
		"relative base URL":   {BaseURL: "localhost:8080/v1"},
		"unsupported scheme":  {BaseURL: "ftp://example.com/v1"},
		"unparsable base URL": {BaseURL: "http://[::1"},
		"unknown token field": {TokenField: "max_output_tokens"},
	})
}

func TestConfigFromEnv(t *testing.T) {
	clienttest.FromEnv(t, clienttest.Env{Key: "OPENAI_API_KEY", BaseURL: "OPENAI_BASE_URL", OtherKey: "ANTHROPIC_API_KEY"},
		func(getenv func(string) string) (string, string, string) {
			c := ConfigFromEnv(getenv)
			return c.APIKey, c.BaseURL, c.Model
		})
}
