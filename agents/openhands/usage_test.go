package openhands

import (
	"encoding/json"
	"testing"

	"github.com/compactkit/compact"
)

func TestUsage(t *testing.T) {
	tests := []struct {
		name, usage string
		want        compact.Usage
	}{
		{"openai", `{"prompt_tokens":100,"completion_tokens":7,"total_tokens":107,"prompt_tokens_details":{"cached_tokens":30}}`,
			compact.Usage{Input: 70, CacheRead: 30, Output: 7, Total: 107}},
		{"no details", `{"prompt_tokens":100,"completion_tokens":7,"prompt_tokens_details":null}`,
			compact.Usage{Input: 100, Output: 7}},
		{"anthropic through litellm", `{"prompt_tokens":1000,"completion_tokens":9,"cache_read_input_tokens":600,"cache_creation_input_tokens":300,"prompt_tokens_details":{"cached_tokens":600}}`,
			compact.Usage{Input: 100, CacheRead: 600, CacheWrite: 300, Output: 9}},
		{"cache read wins over details", `{"prompt_tokens":1000,"cache_read_input_tokens":600,"prompt_tokens_details":{"cached_tokens":500}}`,
			compact.Usage{Input: 400, CacheRead: 600}},
		{"never below zero", `{"prompt_tokens":10,"cache_read_input_tokens":8,"cache_creation_input_tokens":5}`,
			compact.Usage{CacheRead: 8, CacheWrite: 5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var u liteLLMUsage
			if err := json.Unmarshal([]byte(tc.usage), &u); err != nil {
				t.Fatal(err)
			}
			if got := u.usage(); got != tc.want {
				t.Errorf("usage %+v, want %+v", got, tc.want)
			}
		})
	}
}
