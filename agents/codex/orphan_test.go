package codex

import (
	"encoding/json"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/readertest"
)

// A tool output whose call is not in the rollout (lost, or cut when Codex
// replaced its history) is imported as a harness note, never as the
// user's words.
func TestOrphanResultNotTheUser(t *testing.T) {
	const request = "Add a --dry-run flag to the deploy script."
	user, _ := json.Marshal(map[string]any{"type": "message", "role": "user", "content": []map[string]string{{"type": "input_text", "text": request}}})
	// output is the orphan response_item payload.
	orphan := func(name, output, text string) readertest.Orphan {
		data := rollout(
			line("session_meta", meta),
			line("response_item", string(user)),
			line("response_item", output),
			line("response_item", `{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Done."}]}`),
		)
		return readertest.Orphan{Name: name, File: "orphan.jsonl", Body: string(data), Orphan: text, Latest: request,
			Check: func(t *testing.T, notes []*compact.Message) {
				for _, n := range notes {
					if string(n.Extra["call_id"]) != `"call_lost"` {
						t.Errorf("the call id is not kept in the note's extra: %v", n.Extra)
					}
				}
			}}
	}
	readertest.RunOrphans(t, Read, Format, []readertest.Orphan{
		orphan("function_call_output string", `{"type":"function_call_output","call_id":"call_lost","output":"exit 1: no such file"}`, "exit 1: no such file"),
		orphan("function_call_output object, failed", `{"type":"function_call_output","call_id":"call_lost","output":{"content":"denied by policy","success":false}}`, "denied by policy"),
		orphan("custom_tool_call_output", `{"type":"custom_tool_call_output","call_id":"call_lost","output":"patch applied"}`, "patch applied"),
	})
}
