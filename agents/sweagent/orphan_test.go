package sweagent

import (
	"testing"

	"github.com/compactkit/compact/internal/testing/readertest"
)

// A tool item whose call the history does not hold (SWE-agent's history
// processors cut it, or it names no call) is imported as a harness note,
// never as the user's words.
func TestOrphanResultNotTheUser(t *testing.T) {
	const request = "Fix the off-by-one in pagination.py."
	head := `{"history":[{"role":"user","content":"` + request + `","message_type":"observation"},
{"role":"assistant","content":"Looking.","message_type":"action"},`
	orphan := func(name, item, output string) readertest.Orphan {
		body := head + item + `,
{"role":"assistant","content":"Done.","message_type":"action"}]}`
		return readertest.Orphan{Name: name, File: "x.traj", Body: body, Orphan: output, Latest: request}
	}
	readertest.RunOrphans(t, Read, Format, []readertest.Orphan{
		orphan("unknown call id", `{"role":"tool","content":"OBSERVATION: 3 tests failed","tool_call_ids":["call_cut"]}`, "OBSERVATION: 3 tests failed"),
		orphan("no call id", `{"role":"tool","content":[{"type":"text","text":"Old file contents"}]}`, "Old file contents"),
	})
}
