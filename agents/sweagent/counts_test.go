package sweagent

import (
	"path/filepath"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/readertest"
)

// The reader's tool calls and messages match a plain scan of each
// trajectory's history: the function names of the assistant items'
// tool_calls (the older thought/action layout has none), the tool items
// as results, and the assistant items.
func TestCountsMatchFile(t *testing.T) {
	for _, file := range []string{"demonstration.traj", "function-calling.traj", "thought-action.traj"} {
		t.Run(file, func(t *testing.T) {
			calls, results, assistants := map[string]int{}, 0, 0
			for _, v := range readertest.Arr(readertest.Obj(readertest.JSONFile(t, filepath.Join("testdata", file)))["history"]) {
				item := readertest.Obj(v)
				switch item["role"] {
				case "assistant":
					assistants++
					for _, c := range readertest.Arr(item["tool_calls"]) {
						calls[readertest.Str(readertest.Obj(readertest.Obj(c)["function"])["name"])]++
					}
				case "tool":
					results++
				}
			}
			tr, err := ReadFile(filepath.Join("testdata", file))
			if err != nil {
				t.Fatal(err)
			}
			got := readertest.ToolCalls(tr)
			if len(calls) == 0 {
				// The older layout: no calls to compare, and none made up.
				if len(got) != 0 {
					t.Errorf("tool calls %v, the file holds none", got)
				}
			} else {
				readertest.SameCounts(t, "tool calls", got, calls)
			}
			roles := readertest.Roles(tr)
			if roles[compact.RoleToolResult] != results || roles[compact.RoleAssistant] != assistants {
				t.Errorf("%d tool results and %d assistant messages, the file holds %d and %d",
					roles[compact.RoleToolResult], roles[compact.RoleAssistant], results, assistants)
			}
		})
	}
}
