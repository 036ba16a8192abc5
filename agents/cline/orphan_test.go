package cline

import (
	"encoding/json"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/readertest"
)

// A tool result whose call the history does not hold (a native
// tool_result naming no tool_use, or a "[tool] Result:" header after a
// condensation removed its call) is imported as a harness note, never as
// the user's words.
func TestOrphanResultNotTheUser(t *testing.T) {
	const request = "Write a parser for the config file."
	task := map[string]any{"role": "user", "content": []map[string]any{{"type": "text", "text": "<task>\n" + request + "\n</task>"}}}
	answer := map[string]any{"role": "assistant", "content": []map[string]any{{"type": "text", "text": "Looking at the file."}}}
	result := func(block map[string]any) map[string]any {
		return map[string]any{"role": "user", "content": []map[string]any{block}}
	}
	crafted := func(history ...map[string]any) func(t *testing.T) *compact.Transcript {
		return func(t *testing.T) *compact.Transcript { return readHistory(t, history...) }
	}
	readertest.RunOrphans(t, Read, Format, []readertest.Orphan{
		{Name: "native tool_result", Orphan: "exit 2: stale build", Latest: request,
			Read: crafted(task, answer, result(map[string]any{"type": "tool_result", "tool_use_id": "toolu_lost", "content": "exit 2: stale build"}), answer)},
		// A header with an assistant message before it answers a call
		// made up for it; one with none before it answers nothing.
		{Name: "XML header, no assistant message before it", Orphan: "main.go\nparser.go", Latest: request,
			Read: crafted(result(map[string]any{"type": "text", "text": "[list_files for '.'] Result:\nmain.go\nparser.go"}), answer, task, answer)},
		// A real Roo Code history that its condensation rewrote: the
		// update_todo_list call is gone, its result stayed.
		{Name: "real-roo-condensed", Orphan: "Todo list updated successfully.", Latest: "tu as emporté ton analyse avec toi",
			Read: func(t *testing.T) *compact.Transcript {
				return readertest.ReadTestdata(t, ReadFile, "real-roo-condensed")
			}},
	})
}

// readHistory reads history, written as Cline's
// api_conversation_history.json, failing the test on any error.
func readHistory(t *testing.T, history ...map[string]any) *compact.Transcript {
	t.Helper()
	data, err := json.Marshal(history)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Read(data, "api_conversation_history.json")
	if err != nil {
		t.Fatal(err)
	}
	return tr
}
