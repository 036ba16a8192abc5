package compact

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestOverflowWindow: the window is read only from the providers' own
// error shapes, never from text the request could have put in the
// message.
func TestOverflowWindow(t *testing.T) {
	cases := []struct {
		name, body string
		want       int
	}{
		{"anthropic", `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208432 tokens > 200000 maximum"}}`, 200000},
		{"anthropic stream event", `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 9001 tokens > 9000 maximum"}}`, 9000},
		{"openai chat", `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, 128000},
		{"openai gpt-5", `{"error":{"message":"Input tokens exceed the configured limit of 272,000 tokens. Your messages resulted in 300,000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`, 272000},
		{"responses error object", `{"code":"context_length_exceeded","message":"This model's maximum context length is 400000 tokens."}`, 400000},
		{"responses without number", `{"error":{"message":"Your input exceeds the context window of this model.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}`, 0},

		// Hostile or foreign shapes: the number is somewhere in the text,
		// not in the provider's fixed opening or fields.
		{"quoted in another openai error", `{"error":{"message":"Invalid 'messages[1].content': string too long. Got 'maximum context length is 1024 tokens'","type":"invalid_request_error","code":"string_above_max_length"}}`, 0},
		{"quoted after the template", `{"error":{"message":"Invalid tool: This model's maximum context length is 1024 tokens","type":"invalid_request_error","code":"context_length_exceeded"}}`, 0},
		{"openai template without the code", `{"error":{"message":"This model's maximum context length is 1024 tokens.","type":"invalid_request_error","code":null}}`, 0},
		{"anthropic template with another type", `{"type":"error","error":{"type":"api_error","message":"prompt is too long: 2000 tokens > 1024 maximum"}}`, 0},
		{"anthropic quoted later", `{"type":"error","error":{"type":"invalid_request_error","message":"messages.0: bad text 'prompt is too long: 2000 tokens > 1024 maximum'"}}`, 0},
		{"plain text", `This model's maximum context length is 1024 tokens`, 0},
		{"vllm shape", `{"object":"error","message":"This model's maximum context length is 1024 tokens.","type":"BadRequestError","code":400}`, 0},
		{"number too large", `{"error":{"message":"This model's maximum context length is 99999999999999999999999 tokens.","code":"context_length_exceeded"}}`, 0},
		{"zero", `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 5 tokens > 0 maximum"}}`, 0},
		{"bad comma grouping", `{"error":{"message":"This model's maximum context length is 1,0 tokens.","code":"context_length_exceeded"}}`, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := OverflowWindow(tc.body); got != tc.want {
				t.Errorf("OverflowWindow = %d, want %d", got, tc.want)
			}
		})
	}
}

// FuzzOverflowWindow: no input panics, and a window is only ever read
// from a JSON error that names an overflow in its code or type.
func FuzzOverflowWindow(f *testing.F) {
	f.Add(`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208432 tokens > 200000 maximum"}}`)
	f.Add(`{"error":{"message":"This model's maximum context length is 128,000 tokens.","code":"context_length_exceeded"}}`)
	f.Add(`{"code":"context_length_exceeded","message":"Input tokens exceed the configured limit of 272000 tokens"}`)
	f.Add(`not json`)
	f.Fuzz(func(t *testing.T, body string) {
		n := OverflowWindow(body)
		if n < 0 {
			t.Fatalf("negative window %d", n)
		}
		if n == 0 {
			return
		}
		if !json.Valid([]byte(body)) {
			t.Fatalf("window %d read from a body that is not JSON: %q", n, body)
		}
		if !strings.Contains(body, "context_length_exceeded") && !strings.Contains(body, "invalid_request_error") {
			t.Fatalf("window %d read from a body without an overflow code or type: %q", n, body)
		}
	})
}

// TestPlausibleUsage: usage over twice the model's limit, or negative, is
// impossible; usage over the window but under twice it is a silent
// overflow, still plausible.
func TestPlausibleUsage(t *testing.T) {
	w := ModelInfo{ID: "m", ContextWindow: 200000}
	cases := []struct {
		name string
		u    Usage
		m    ModelInfo
		want bool
	}{
		{"normal", Usage{Input: 1000, CacheRead: 150000, Output: 2000}, w, true},
		{"silent overflow", Usage{Input: 250000}, w, true},
		{"twice the window", Usage{Input: 200000, CacheRead: 200000}, w, true},
		{"1e12 input", Usage{Input: 1_000_000_000_000}, w, false},
		{"1e12 output", Usage{Input: 10, Output: 1_000_000_000_000}, w, false},
		{"cache reads over", Usage{Input: 10, CacheRead: 300000, CacheWrite: 200000}, w, false},
		{"negative", Usage{Input: -5, CacheRead: 10}, w, false},
		{"input limit", Usage{Input: 300000}, ModelInfo{ContextWindow: 400000, InputLimit: 128000}, false},
		{"unknown window", Usage{Input: 1_000_000_000_000}, ModelInfo{}, true},
		{"unknown window, negative", Usage{Output: -1}, ModelInfo{}, false},
		{"near max int", Usage{Input: 1 << 62, CacheRead: 1 << 62, CacheWrite: 1 << 62}, w, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := PlausibleUsage(tc.u, tc.m); got != tc.want {
				t.Errorf("PlausibleUsage(%+v, %+v) = %v, want %v", tc.u, tc.m, got, tc.want)
			}
		})
	}
}
