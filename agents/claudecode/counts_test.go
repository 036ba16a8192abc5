package claudecode

import (
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/readertest"
)

// The reader's tool calls, tool results and assistant messages match a
// plain scan of each sample: the tool_use and tool_result blocks of the
// main conversation's records (all records of a subagent's file), and its
// responses by message id.
func TestCountsMatchFile(t *testing.T) {
	files := []string{"tool-heavy.jsonl", "compaction.jsonl", "subagent.jsonl", "pomodoro.jsonl"}
	readertest.RunCounts(t, ReadFile, files, func(t *testing.T, path string) readertest.Scan {
		calls, results := map[string]int{}, 0
		responses := map[string]bool{}
		records := readertest.JSONLines(t, path)
		// A subagent's own file holds only sidechain records; in a
		// main file they are another conversation.
		main := false
		for _, r := range records {
			if (r["type"] == "user" || r["type"] == "assistant") && r["isSidechain"] != true {
				main = true
			}
		}
		for _, r := range records {
			if main && r["isSidechain"] == true {
				continue
			}
			msg := readertest.Obj(r["message"])
			switch r["type"] {
			case "assistant":
				responses[readertest.Str(msg["id"])] = true
				for _, b := range readertest.Blocks(msg["content"]) {
					if b["type"] == "tool_use" {
						calls[readertest.Str(b["name"])]++
					}
				}
			case "user":
				for _, b := range readertest.Blocks(msg["content"]) {
					if b["type"] == "tool_result" {
						results++
					}
				}
			}
		}
		return readertest.Scan{Calls: calls, Roles: map[compact.Role]int{compact.RoleToolResult: results, compact.RoleAssistant: len(responses)}}
	})
}
