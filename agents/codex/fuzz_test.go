package codex

import (
	"testing"

	"github.com/compactkit/compact/internal/testing/readertest"
)

// FuzzRead checks that Read never panics, that its errors are one line
// naming the file, and that whatever it accepts imports as a pi session.
func FuzzRead(f *testing.F) {
	readertest.FuzzLines(f, Read,
		line("session_meta", meta)+"\n"+line("compacted", `{"message":"","replacement_history":[{"type":"compaction","encrypted_content":"x"}]}`)+"\n",
		line("response_item", `{"type":"local_shell_call","id":"l","status":"completed","action":"ls"}`)+"\n"+
			line("response_item", `{"type":"function_call_output","call_id":"l","output":{"content_items":[{"type":"input_image","image_url":"http://x"}]}}`),
		line("event_msg", `{"type":"token_count","input_tokens":5,"cached_input_tokens":9}`)+"\n"+line("response_item", `{"type":"reasoning","summary":[{"text":"a"},{"text":"b"}]}`),
		`{"id":"x","timestamp":"t","instructions":"i"}`+"\n"+`{"record_type":"state"}`+"\n"+`{"type":"message","role":"assistant","content":"hi"}`,
		`null`+"\n"+`[]`,
	)
}
