package openai

import (
	"encoding/json"
	"testing"

	"github.com/compactkit/compact"
)

func TestUsage(t *testing.T) {
	for _, tc := range []struct {
		name, chat, responses string
		want                  compact.Usage
	}{
		{"cached split out", `{"prompt_tokens":1200,"completion_tokens":300,"total_tokens":1500,"prompt_tokens_details":{"cached_tokens":1000}}`,
			`{"input_tokens":1200,"output_tokens":300,"total_tokens":1500,"input_tokens_details":{"cached_tokens":1000}}`,
			compact.Usage{Input: 200, CacheRead: 1000, Output: 300, Total: 1500}},
		{"no details", `{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12,"prompt_tokens_details":null}`,
			`{"input_tokens":10,"output_tokens":2,"total_tokens":12}`,
			compact.Usage{Input: 10, Output: 2, Total: 12}},
		// Explicit prompt caching bills the prompt written to the cache
		// apart.
		{"cache writes split out", `{"prompt_tokens":1200,"completion_tokens":3,"total_tokens":1203,"prompt_tokens_details":{"cached_tokens":800,"cache_write_tokens":300}}`,
			`{"input_tokens":1200,"output_tokens":3,"total_tokens":1203,"input_tokens_details":{"cached_tokens":800,"cache_write_tokens":300}}`,
			compact.Usage{Input: 100, CacheRead: 800, CacheWrite: 300, Output: 3, Total: 1203}},
		// The proxy's observer used to report Input -5 here.
		{"more cached than sent", `{"prompt_tokens":5,"prompt_tokens_details":{"cached_tokens":10}}`,
			`{"input_tokens":5,"input_tokens_details":{"cached_tokens":10}}`,
			compact.Usage{CacheRead: 10}},
	} {
		var c ChatUsage
		var r ResponsesUsage
		if err := json.Unmarshal([]byte(tc.chat), &c); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(tc.responses), &r); err != nil {
			t.Fatal(err)
		}
		if got := c.Usage(); got != tc.want {
			t.Errorf("%s: chat %+v, want %+v", tc.name, got, tc.want)
		}
		if got := r.Usage(); got != tc.want {
			t.Errorf("%s: responses %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
