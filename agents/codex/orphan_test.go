package codex

import (
	"encoding/json"
	"testing"

	"github.com/compactkit/compact/internal/testing/readertest"
)

// A tool output whose call is not in the rollout (lost, or cut when Codex
// replaced its history) is imported as a harness note, never as the
// user's words.
func TestOrphanResultNotTheUser(t *testing.T) {
	const request = "Add a --dry-run flag to the deploy script."
	user, _ := json.Marshal(map[string]any{"type": "message", "role": "user", "content": []map[string]string{{"type": "input_text", "text": request}}})
	tests := []struct {
		name   string
		output string // the orphan response_item payload
		orphan string
	}{
		{"function_call_output string", `{"type":"function_call_output","call_id":"call_lost","output":"exit 1: no such file"}`, "exit 1: no such file"},
		{"function_call_output object, failed", `{"type":"function_call_output","call_id":"call_lost","output":{"content":"denied by policy","success":false}}`, "denied by policy"},
		{"custom_tool_call_output", `{"type":"custom_tool_call_output","call_id":"call_lost","output":"patch applied"}`, "patch applied"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := rollout(
				line("session_meta", meta),
				line("response_item", string(user)),
				line("response_item", tc.output),
				line("response_item", `{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Done."}]}`),
			)
			tr, err := Read(data, "orphan.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			notes := readertest.CheckOrphanResult(t, tr, Format, tc.orphan, request)
			for _, n := range notes {
				if string(n.Extra["call_id"]) != `"call_lost"` {
					t.Errorf("the call id is not kept in the note's extra: %v", n.Extra)
				}
			}
		})
	}
}
