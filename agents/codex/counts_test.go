package codex

import (
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/readertest"
)

// The reader's tool calls and tool results match a plain scan of each
// rollout's response_item records: function_call, custom_tool_call and
// local_shell_call by name, and their outputs.
func TestCountsMatchFile(t *testing.T) {
	readertest.RunCounts(t, ReadFile, []string{"pomodoro.jsonl", "compaction-constructed.jsonl"}, func(t *testing.T, path string) readertest.Scan {
		calls, results := map[string]int{}, 0
		for _, r := range readertest.JSONLines(t, path) {
			if r["type"] != "response_item" {
				continue
			}
			p := readertest.Obj(r["payload"])
			switch p["type"] {
			case "function_call", "custom_tool_call":
				calls[readertest.Str(p["name"])]++
			case "local_shell_call":
				calls["local_shell"]++
			case "function_call_output", "custom_tool_call_output":
				results++
			}
		}
		return readertest.Scan{Calls: calls, Roles: map[compact.Role]int{compact.RoleToolResult: results}}
	})
}
