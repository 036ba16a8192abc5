package requestbody

import (
	"testing"

	"github.com/compactkit/compact/internal/testing/readertest"
)

// A tool result whose call the body does not hold (the client trimmed its
// history, or the result names a call that never was) is imported as a
// harness note, never as the user's words.
func TestOrphanResultNotTheUser(t *testing.T) {
	const request = "Rename the config loader and keep the old name as an alias."
	orphan := func(name, body, output string) readertest.Orphan {
		return readertest.Orphan{Name: name, File: "body.json", Body: body, Orphan: output, Latest: request}
	}
	readertest.RunOrphans(t, Read, Format, []readertest.Orphan{
		orphan("chat tool message",
			`{"model":"gpt-4.1","messages":[{"role":"user","content":"`+request+`"},{"role":"tool","tool_call_id":"call_gone","content":"exit 1: grep found nothing"},{"role":"assistant","content":"Done."}]}`,
			"exit 1: grep found nothing"),
		orphan("chat legacy function message",
			`{"model":"gpt-4.1","messages":[{"role":"user","content":"`+request+`"},{"role":"function","name":"grep","content":"no matches"},{"role":"assistant","content":"Done."}]}`,
			"no matches"),
		orphan("anthropic tool_result block",
			`{"model":"claude-sonnet-4","messages":[{"role":"user","content":"`+request+`"},{"role":"assistant","content":"Looking."},`+
				`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_gone","is_error":true,"content":[{"type":"text","text":"permission denied: config.go"}]}]},`+
				`{"role":"assistant","content":"Done."}]}`,
			"permission denied: config.go"),
	})
}
