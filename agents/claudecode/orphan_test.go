package claudecode

import (
	"testing"

	"github.com/compactkit/compact/internal/testing/readertest"
)

// A tool_result whose tool_use is not in the transcript (the assistant
// line was lost, or the result names a call that never was) is imported
// as a harness note, never as the user's words.
func TestOrphanResultNotTheUser(t *testing.T) {
	const request = "Add a --verbose flag to the CLI."
	// content is the orphan record's message.content as JSON.
	orphan := func(name, content, output string) readertest.Orphan {
		data := lines(
			userText("u1", "", request),
			assistantLine("a1", "u1", "m1", `{"type":"text","text":"Looking."}`),
			rec(`"type":"user","uuid":"r1","parentUuid":"a1","message":{"role":"user","content":`+content+`}`),
			assistantLine("a2", "r1", "m2", `{"type":"text","text":"Done."}`),
		)
		return readertest.Orphan{Name: name, File: "orphan.jsonl", Body: string(data), Orphan: output, Latest: request}
	}
	readertest.RunOrphans(t, Read, Format, []readertest.Orphan{
		orphan("string content", `[{"type":"tool_result","tool_use_id":"toolu_lost","content":"exit status 1: build failed"}]`, "exit status 1: build failed"),
		orphan("block content, an error", `[{"type":"tool_result","tool_use_id":"toolu_lost","is_error":true,"content":[{"type":"text","text":"permission denied"}]}]`, "permission denied"),
		orphan("beside the user's text", `[{"type":"tool_result","tool_use_id":"toolu_lost","content":"stale output"},{"type":"text","text":"`+request+`"}]`, "stale output"),
	})
}
