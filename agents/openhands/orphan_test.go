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
	tests := []struct {
		name   string
		data   string // "" reads testdata/condensation.json
		orphan string
		latest string // "" when the context holds no request
	}{
		// The request is in the condensation's summary, which the
		// context starts with: the Goal has no request to quote.
		{name: "condensation.json", orphan: "ERROR: the call was lost"},
		{
			name: "crafted",
			data: `[{"id":1,"source":"user","action":"message","args":{"content":"` + request + `"}},
{"id":2,"source":"agent","observation":"run","content":"exit 0: stale output","cause":9,
 "tool_call_metadata":{"function_name":"execute_bash","tool_call_id":"call_lost"},"extras":{}}]`,
			orphan: "exit 0: stale output",
			latest: request,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var data []byte
			if tc.data == "" {
				data = []byte(readertest.File(t, "testdata/condensation.json"))
			} else {
				data = []byte(tc.data)
			}
			tr, err := Read(data, tc.name)
			if err != nil {
				t.Fatal(err)
			}
			readertest.CheckOrphanResult(t, tr, Format, tc.orphan, tc.latest)
		})
	}
}
