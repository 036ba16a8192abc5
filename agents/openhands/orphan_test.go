package openhands

import (
	"testing"

	"github.com/compactkit/compact/internal/testing/readertest"
)

// A tool result whose call the stream does not hold (its action was lost,
// or cut by a condensation) is imported as a harness note, never as the
// user's words, so that a summary does not take it for the latest request.
func TestOrphanResultNotTheUser(t *testing.T) {
	const request = "Fix the parser bug; see the screenshot."
	readertest.RunOrphans(t, Read, Format, []readertest.Orphan{
		// The request is in the condensation's summary, which the
		// context starts with: the Goal has no request to quote.
		{Name: "condensation.json", Body: readertest.File(t, "testdata/condensation.json"), Orphan: "ERROR: the call was lost"},
		{
			Name: "crafted",
			Body: `[{"id":1,"source":"user","action":"message","args":{"content":"` + request + `"}},
{"id":2,"source":"agent","observation":"run","content":"exit 0: stale output","cause":9,
 "tool_call_metadata":{"function_name":"execute_bash","tool_call_id":"call_lost"},"extras":{}}]`,
			Orphan: "exit 0: stale output",
			Latest: request,
		},
	})
}
