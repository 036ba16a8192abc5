package codex

import (
	"path/filepath"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/readertest"
)

// The reader's tool calls and tool results match a plain scan of each
// rollout's response_item records: function_call, custom_tool_call and
// local_shell_call by name, and their outputs.
func TestCountsMatchFile(t *testing.T) {
	for _, file := range []string{"pomodoro.jsonl", "compaction-constructed.jsonl"} {
		t.Run(file, func(t *testing.T) {
			calls, results := map[string]int{}, 0
			for _, r := range readertest.JSONLines(t, filepath.Join("testdata", file)) {
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
			tr := readertest.ReadTestdata(t, ReadFile, file)
			readertest.SameScan(t, tr, calls, map[compact.Role]int{compact.RoleToolResult: results})
		})
	}
}
