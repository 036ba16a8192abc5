package cline

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDetectUIMessages: ui_messages.json is told apart from the history
// and from other JSON arrays, also when the head ends inside it.
func TestDetectUIMessages(t *testing.T) {
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	tests := []struct {
		name string
		head string
		want bool
	}{
		{"cline", read(filepath.Join("testdata", "xml-task", UIMessagesFile)), true},
		{"roo, indented", read(filepath.Join("testdata", "real-roo-2025-02", UIMessagesFile)), true},
		{"cut inside the first text", `[{"ts":1741600000000,"type":"say","say":"task","text":"Fix`, true},
		{"ask first", `[{"ts":1,"type":"ask","ask":"followup"}]`, true},
		{"the history", read(filepath.Join("testdata", "xml-task", APIHistoryFile)), false},
		{"ts as a string", `[{"ts":"1","type":"say"}]`, false},
		{"another type", `[{"ts":1,"type":"message"}]`, false},
		{"no ts", `[{"type":"say","say":"text"}]`, false},
		{"an object", `{"ts":1,"type":"say"}`, false},
		{"empty array", `[]`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DetectUIMessages([]byte(tt.head)); got != tt.want {
				t.Errorf("DetectUIMessages = %v, want %v", got, tt.want)
			}
			if tt.want && Detect([]byte(tt.head)) {
				t.Error("Detect takes it for the history")
			}
		})
	}
}

// FuzzDetectUIMessages: any head is judged without a panic.
func FuzzDetectUIMessages(f *testing.F) {
	f.Add([]byte(`[{"ts":1,"type":"say"}]`))
	f.Add([]byte(`[{"ts":`))
	f.Fuzz(func(t *testing.T, head []byte) { DetectUIMessages(head) })
}
