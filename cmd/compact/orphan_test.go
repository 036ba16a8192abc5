package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// An OpenHands tool result whose call the stream does not hold comes out
// of "compact import" as a harness note, never as a user message: the
// context the model sees still holds its text, as a custom message that
// says what it is.
func TestImportOrphanResultIsANote(t *testing.T) {
	tests := []struct {
		name, file, orphan, customType string
	}{
		{"openhands condensation.json", "../../agents/openhands/testdata/condensation.json", "ERROR: the call was lost", "harness:openhands:orphan_result"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCLI(t)
			out := filepath.Join(t.TempDir(), "imported.jsonl")
			// The import warns of the result without its call, and writes.
			if r := c.run("import", tc.file, "-o", out); r.code != 0 || !strings.Contains(r.stderr, "which the stream does not hold") {
				t.Fatalf("import: exit %d, stderr %q: want 0 and a warning naming the orphan result", r.code, r.stderr)
			}
			var cr struct {
				Messages []struct {
					Message struct {
						Role       string          `json:"role"`
						CustomType string          `json:"customType"`
						Content    json.RawMessage `json:"content"`
					} `json:"message"`
				} `json:"messages"`
			}
			c.okJSON(&cr, "context", "--json", out)
			notes := 0
			for _, m := range cr.Messages {
				text := string(m.Message.Content)
				if !strings.Contains(text, tc.orphan) {
					continue
				}
				if m.Message.Role != "custom" || m.Message.CustomType != tc.customType || !strings.Contains(text, "[tool result without its call") {
					t.Errorf("the orphan result is a %q message (customType %q): %s", m.Message.Role, m.Message.CustomType, text)
					continue
				}
				notes++
			}
			if notes != 1 {
				t.Errorf("%d orphan result notes in the context, want 1", notes)
			}
		})
	}
}
