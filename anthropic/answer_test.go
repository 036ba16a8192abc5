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
