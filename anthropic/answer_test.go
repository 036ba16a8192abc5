package anthropic

import (
	"encoding/json"
	"testing"

	"github.com/compactkit/compact"
)

func TestUsage(t *testing.T) {
	tests := []struct {
		name, usage string
		prev, want  compact.Usage
	}{
		{"answer", `{"input_tokens":12,"output_tokens":5,"cache_read_input_tokens":300,"cache_creation_input_tokens":40}`,
			compact.Usage{}, compact.Usage{Input: 12, Output: 5, CacheRead: 300, CacheWrite: 40}},
		{"absent and null counts", `{"input_tokens":7,"output_tokens":null}`,
			compact.Usage{}, compact.Usage{Input: 7}},
		// A message_delta over message_start: only the counts it holds change.
		{"delta over start", `{"output_tokens":90}`,
			compact.Usage{Input: 12, Output: 1, CacheRead: 300, Total: 313}, compact.Usage{Input: 12, Output: 90, CacheRead: 300, Total: 313}},
		// Writes split by the cache's lifetime.
		{"cache lifetimes", `{"input_tokens":3,"output_tokens":9,"cache_read_input_tokens":0,"cache_creation_input_tokens":5000,"cache_creation":{"ephemeral_5m_input_tokens":1000,"ephemeral_1h_input_tokens":4000}}`,
			compact.Usage{}, compact.Usage{Input: 3, Output: 9, CacheWrite: 5000, CacheWrite1h: 4000}},
		// Threshold compaction: the top-level counts are the answer's
		// step; the compaction step is in iterations only (the figures of
		// Anthropic's "Compaction at a token threshold" example).
		{"threshold compaction iterations", `{"input_tokens":23000,"output_tokens":1000,"iterations":[` +
			`{"type":"compaction","input_tokens":180000,"output_tokens":3500,"cache_read_input_tokens":0,"cache_creation_input_tokens":0},` +
			`{"type":"message","input_tokens":23000,"output_tokens":1000,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}]}`,
			compact.Usage{}, compact.Usage{Input: 23000, Output: 1000, Compaction: compact.StepUsage{Input: 180000, Output: 3500}}},
		// Iterations without a compaction step (a server tool loop) add
		// nothing: the top-level counts hold them.
		{"message iterations only", `{"input_tokens":50,"output_tokens":7,"iterations":[{"type":"message","input_tokens":20,"output_tokens":3},{"type":"message","input_tokens":30,"output_tokens":4}]}`,
			compact.Usage{}, compact.Usage{Input: 50, Output: 7}},
		// A delta that carries no iterations keeps the step counted so far.
		{"delta keeps the compaction step", `{"output_tokens":1200}`,
			compact.Usage{Input: 23000, Output: 1, Compaction: compact.StepUsage{Input: 180000, Output: 3500, CacheRead: 10, CacheWrite: 20, CacheWrite1h: 5}},
			compact.Usage{Input: 23000, Output: 1200, Compaction: compact.StepUsage{Input: 180000, Output: 3500, CacheRead: 10, CacheWrite: 20, CacheWrite1h: 5}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var u Usage
			if err := json.Unmarshal([]byte(tc.usage), &u); err != nil {
				t.Fatal(err)
			}
			if got := u.Over(tc.prev); got != tc.want {
				t.Errorf("Over = %+v, want %+v", got, tc.want)
			}
			if tc.prev == (compact.Usage{}) && u.Usage() != tc.want {
				t.Errorf("Usage = %+v, want %+v", u.Usage(), tc.want)
			}
		})
	}
}

func TestStopReason(t *testing.T) {
	for s, want := range map[string]compact.StopReason{
		"max_tokens": compact.StopLength, "model_context_window_exceeded": compact.StopLength,
		"tool_use": compact.StopToolUse, "end_turn": compact.StopEnd, "stop_sequence": compact.StopEnd,
		"pause_turn": compact.StopEnd, "refusal": compact.StopEnd, "": "", "something_new": "",
	} {
		if got := StopReason(s); got != want {
			t.Errorf("StopReason(%q) = %q, want %q", s, got, want)
		}
	}
}
