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
	tests := []struct {
		name  string
		usage Usage
		model ModelInfo
		want  bool
	}{
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsSilentOverflow(tt.usage, tt.model); got != tt.want {
				t.Errorf("IsSilentOverflow(%+v, window %d) = %v, want %v", tt.usage, tt.model.ContextWindow, got, tt.want)
			}
		})
	}
}
