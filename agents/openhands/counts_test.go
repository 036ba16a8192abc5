package openhands

import (
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/readertest"
)

// The reader's tool calls and tool results match a plain scan of each
// event list: the actions that carry tool_call_metadata, by the function
// they name, and the observations that answer one of them (an
// observation naming no earlier call is no tool result).
func TestCountsMatchFile(t *testing.T) {
	files := []string{"basic.json", "basic_gui_mode.json", "basic_interactions.json", "condensation.json"}
	readertest.RunCounts(t, ReadFile, files, func(t *testing.T, path string) readertest.Scan {
		calls, results := map[string]int{}, 0
		called := map[string]bool{}
		for _, v := range readertest.Arr(readertest.JSONFile(t, path)) {
			e := readertest.Obj(v)
			meta := readertest.Obj(e["tool_call_metadata"])
			if meta == nil {
				continue
			}
			switch {
			case e["action"] != nil:
				calls[readertest.Str(meta["function_name"])]++
				called[readertest.Str(meta["tool_call_id"])] = true
			case e["observation"] != nil && called[readertest.Str(meta["tool_call_id"])]:
				results++
			}
		}
		return readertest.Scan{Calls: calls, Roles: map[compact.Role]int{compact.RoleToolResult: results}}
	})
}
