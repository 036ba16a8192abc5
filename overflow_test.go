package compact

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// overflowFixture is one file of testdata/overflow: an error response a
// provider really sent, where it was found, and whether it reports a
// context overflow.
type overflowFixture struct {
	Provider string `json:"provider"`
	Status   int    `json:"status"`
	Body     string `json:"body"`
	Source   string `json:"source"`
	Overflow *bool  `json:"overflow"`
	Note     string `json:"note"`
}

// minOverflowFixtures guards against the fixtures going missing: the glob
// would otherwise pass with nothing to check.
const minOverflowFixtures = 20

func loadOverflowFixtures(t *testing.T) map[string]overflowFixture {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "overflow", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < minOverflowFixtures {
		t.Fatalf("testdata/overflow holds %d fixtures, want at least %d", len(paths), minOverflowFixtures)
	}
	fixtures := make(map[string]overflowFixture, len(paths))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		var f overflowFixture
		if err := dec.Decode(&f); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		name := strings.TrimSuffix(filepath.Base(p), ".json")
		switch {
		case f.Provider == "" || !strings.HasPrefix(name, f.Provider+"-"):
			t.Fatalf("%s: provider %q does not match the file name", p, f.Provider)
		case f.Source == "":
			t.Fatalf("%s: no source", p)
		case f.Overflow == nil:
			t.Fatalf("%s: no overflow verdict", p)
		}
		fixtures[name] = f
	}
	return fixtures
}

func TestIsContextOverflowFixtures(t *testing.T) {
	fixtures := loadOverflowFixtures(t)
	var yes, no int
	for name, f := range fixtures {
		want := *f.Overflow
		if want {
			yes++
		} else {
			no++
		}
		t.Run(name, func(t *testing.T) {
			pe := &ProviderError{Provider: f.Provider, StatusCode: f.Status, Body: f.Body}
			if got := IsContextOverflow(pe); got != want {
				t.Errorf("IsContextOverflow(%s %d %.120q) = %v, want %v", f.Provider, f.Status, f.Body, got, want)
			}
			wrapped := fmt.Errorf("summarize: %w", fmt.Errorf("call model: %w", pe))
			if got := IsContextOverflow(wrapped); got != want {
				t.Errorf("wrapped twice: IsContextOverflow = %v, want %v", got, want)
			}
			// The same text in an error of another kind, as an SDK that keeps
			// only the message would return it. A body-less fixture has
			// nothing to match without its status.
			if f.Body != "" {
				plain := errors.New(f.Body)
				if got := IsContextOverflow(plain); got != want {
					t.Errorf("plain error: IsContextOverflow = %v, want %v", got, want)
				}
				if got := IsContextOverflow(fmt.Errorf("%s: HTTP %d: %w", f.Provider, f.Status, plain)); got != want {
					t.Errorf("plain error with a prefix: IsContextOverflow = %v, want %v", got, want)
				}
			}
		})
	}
	if yes == 0 || no == 0 {
		t.Errorf("fixtures hold %d overflows and %d other errors; want both kinds", yes, no)
	}
}

// TestIsContextOverflowProviders checks that every provider the matcher is
// documented to recognise has at least one real overflow body.
func TestIsContextOverflowProviders(t *testing.T) {
	fixtures := loadOverflowFixtures(t)
	covered := map[string]bool{}
	for _, f := range fixtures {
		if *f.Overflow {
			covered[f.Provider] = true
		}
	}
	for _, p := range []string{
		"openai", "anthropic", "gemini", "mistral", "deepseek", "groq", "cerebras",
		"xai", "openrouter", "ollama", "llamacpp", "vllm", "lmstudio",
	} {
		if !covered[p] {
			t.Errorf("no overflow fixture for %s", p)
		}
	}
}

func TestIsContextOverflowRules(t *testing.T) {
	const anthropicOverflow = `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}`
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"typed nil ProviderError", (*ProviderError)(nil), false},
		{"unrelated error", errors.New("connection refused"), false},
		{"context deadline", context.DeadlineExceeded, false},
		{"EOF", io.EOF, false},
		{"overflow body", &ProviderError{Provider: "anthropic", StatusCode: 400, Body: anthropicOverflow}, true},
		{"overflow body inside a stream", &ProviderError{Provider: "anthropic", Body: anthropicOverflow}, true},
		{"overflow body with status 429", &ProviderError{Provider: "anthropic", StatusCode: 429, Body: anthropicOverflow}, false},
		{"upper case", &ProviderError{Provider: "x", StatusCode: 400, Body: "PROMPT IS TOO LONG"}, true},
		{"413 without a body", &ProviderError{Provider: "somewhere", StatusCode: 413}, true},
		{"413 with blank body", &ProviderError{Provider: "somewhere", StatusCode: 413, Body: " \n"}, true},
		{"413 with an unrelated body", &ProviderError{Provider: "somewhere", StatusCode: 413, Body: "Request Entity Too Large"}, false},
		{"400 without a body from Cerebras", &ProviderError{Provider: "Cerebras", StatusCode: 400}, true},
		{"400 without a body from others", &ProviderError{Provider: "openai", StatusCode: 400}, false},
		{"500 without a body", &ProviderError{Provider: "cerebras", StatusCode: 500}, false},
		{"old phrase: bare context window", &ProviderError{Provider: "groq", StatusCode: 400, Body: "the `context_window` for this model"}, false},
		{"ProviderError decides over the wrapping text", fmt.Errorf("prompt is too long: %w", &ProviderError{Provider: "openai", StatusCode: 401, Body: "bad key"}), false},
		{"plain error overflow", errors.New("llm: request (20001 tokens) exceeds the available context size (8192 tokens), try increasing it"), true},
		{"plain error rate limit", errors.New("429 Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Requested 31538. The input or output tokens must be reduced"), false},
		// Made-up texts that carry an overflow phrase next to a throttling
		// marker: the marker wins, whatever the status.
		{"per-minute limit with an overflow phrase", &ProviderError{Provider: "groq", StatusCode: 413, Body: "Request too large on tokens per minute (TPM). Please reduce the length of the messages."}, false},
		{"quota with an overflow phrase", &ProviderError{Provider: "gemini", StatusCode: 400, Body: "quota exceeded: input token count exceeds the maximum number of tokens allowed"}, false},
		{"plain error rate limit with an overflow phrase", errors.New("rate_limit_error: prompt is too long for this minute"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsContextOverflow(tt.err); got != tt.want {
				t.Errorf("IsContextOverflow(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestIsSilentOverflow(t *testing.T) {
	model := ModelInfo{ID: "m", ContextWindow: 128000}
	runUsageRule(t, "IsSilentOverflow", IsSilentOverflow, []usageCase{
		{"well inside", Usage{Input: 1000, Output: 500}, model, false},
		{"exactly the window", Usage{Input: 128000}, model, false},
		{"input above", Usage{Input: 128001}, model, true},
		{"cache reads count", Usage{Input: 1000, CacheRead: 127001}, model, true},
		{"cache writes count", Usage{Input: 100000, CacheWrite: 28001}, model, true},
		{"output does not count", Usage{Input: 100000, Output: 50000}, model, false},
		{"provider total does not count", Usage{Input: 1000, Total: 200000}, model, false},
		{"unknown window", Usage{Input: 10_000_000}, ModelInfo{ID: "m"}, false},
		{"negative window", Usage{Input: 10}, ModelInfo{ID: "m", ContextWindow: -1}, false},
		{"z.ai style report", Usage{Input: 140000, CacheRead: 2000}, ModelInfo{ID: "glm", ContextWindow: 131072, MaxOutput: 8192}, true},
	})
}

// usageCase is a case of a rule on a usage report and a model.
type usageCase struct {
	name string
	u    Usage
	m    ModelInfo
	want bool
}

// runUsageRule checks rule, named name in the messages, on each case.
func runUsageRule(t *testing.T, name string, rule func(Usage, ModelInfo) bool, cases []usageCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := rule(tc.u, tc.m); got != tc.want {
				t.Errorf("%s(%+v, %+v) = %v, want %v", name, tc.u, tc.m, got, tc.want)
			}
		})
	}
}

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
	runUsageRule(t, "PlausibleUsage", PlausibleUsage, []usageCase{
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
	})
}
