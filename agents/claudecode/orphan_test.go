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
	tests := []struct {
		name    string
		content string // the orphan record's message.content as JSON
		orphan  string
	}{
		{"string content", `[{"type":"tool_result","tool_use_id":"toolu_lost","content":"exit status 1: build failed"}]`, "exit status 1: build failed"},
		{"block content, an error", `[{"type":"tool_result","tool_use_id":"toolu_lost","is_error":true,"content":[{"type":"text","text":"permission denied"}]}]`, "permission denied"},
		{"beside the user's text", `[{"type":"tool_result","tool_use_id":"toolu_lost","content":"stale output"},{"type":"text","text":"` + request + `"}]`, "stale output"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := lines(
				userText("u1", "", request),
				assistantLine("a1", "u1", "m1", `{"type":"text","text":"Looking."}`),
				rec(`"type":"user","uuid":"r1","parentUuid":"a1","message":{"role":"user","content":`+tc.content+`}`),
				assistantLine("a2", "r1", "m2", `{"type":"text","text":"Done."}`),
			)
			tr, err := Read(data, "orphan.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			readertest.CheckOrphanResult(t, tr, Format, tc.orphan, request)
		})
	}
}
