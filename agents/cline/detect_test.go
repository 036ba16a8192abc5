package cline

import (
	"path/filepath"
	"testing"

	"github.com/compactkit/compact/internal/testing/readertest"
)

// TestDetectUIMessages: ui_messages.json is told apart from the history
// and from other JSON arrays, also when the head ends inside it.
func TestDetectUIMessages(t *testing.T) {
	readertest.CheckDetect(t, DetectUIMessages, []readertest.Head{
		{"cline", readertest.File(t, filepath.Join("testdata", "xml-task", UIMessagesFile)), true},
		{"roo, indented", readertest.File(t, filepath.Join("testdata", "real-roo-2025-02", UIMessagesFile)), true},
		{"cut inside the first text", `[{"ts":1741600000000,"type":"say","say":"task","text":"Fix`, true},
		{"ask first", `[{"ts":1,"type":"ask","ask":"followup"}]`, true},
		{"the history", readertest.File(t, filepath.Join("testdata", "xml-task", APIHistoryFile)), false},
		{"ts as a string", `[{"ts":"1","type":"say"}]`, false},
		{"another type", `[{"ts":1,"type":"message"}]`, false},
		{"no ts", `[{"type":"say","say":"text"}]`, false},
		{"an object", `{"ts":1,"type":"say"}`, false},
		{"empty array", `[]`, false},
	}, Detect)
}

// FuzzDetectUIMessages: any head is judged without a panic.
func FuzzDetectUIMessages(f *testing.F) {
	f.Add([]byte(`[{"ts":1,"type":"say"}]`))
	f.Add([]byte(`[{"ts":`))
	f.Fuzz(func(t *testing.T, head []byte) { DetectUIMessages(head) })
}
