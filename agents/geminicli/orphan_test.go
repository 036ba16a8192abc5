package geminicli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/compactkit/compact/internal/testing/readertest"
)

// A functionResponse whose functionCall the file does not hold (a /chat
// checkpoint or recording cut by a compression, or a lost call) is
// imported as a harness note, never as the user's words.
func TestOrphanResultNotTheUser(t *testing.T) {
	const ask = "What does scripts/bump.sh do?"
	orphan := map[string]any{"functionResponse": map[string]any{"id": "call-lost", "name": "run_shell_command", "response": map[string]any{"output": "bump: v1.2.3 -> v1.2.4"}}}
	failed := map[string]any{"functionResponse": map[string]any{"id": "call-lost", "name": "read_file", "response": map[string]any{"error": "File not found: notes.md"}}}
	checkpoint := func(part map[string]any) string {
		b, _ := json.Marshal(map[string]any{"history": []map[string]any{
			{"role": "user", "parts": []map[string]any{{"text": ask}}},
			{"role": "model", "parts": []map[string]any{{"text": "Let me look."}}},
			{"role": "user", "parts": []map[string]any{part}},
			{"role": "model", "parts": []map[string]any{{"text": "It bumps the version."}}},
		}})
		return string(b)
	}
	recording := func(part map[string]any) string {
		lines := []string{`{"sessionId":"s1","projectHash":"h","startTime":"2026-08-20T10:00:00.000Z","lastUpdated":"2026-08-20T10:00:00.000Z","kind":"main"}`}
		for i, r := range []map[string]any{
			{"type": "user", "content": []map[string]any{{"text": ask}}},
			{"type": "gemini", "content": "Let me look."},
			{"type": "user", "content": []map[string]any{part}},
			{"type": "gemini", "content": "It bumps the version."},
		} {
			r["id"], r["timestamp"] = string(rune('a'+i)), "2026-08-20T10:00:00.000Z"
			b, _ := json.Marshal(r)
			lines = append(lines, string(b))
		}
		return strings.Join(lines, "\n") + "\n"
	}
	readertest.RunOrphans(t, Read, Format, []readertest.Orphan{
		{Name: "checkpoint", File: "checkpoint-x.json", Body: checkpoint(orphan), Orphan: "bump: v1.2.3 -> v1.2.4", Latest: ask},
		{Name: "checkpoint, an error", File: "checkpoint-x.json", Body: checkpoint(failed), Orphan: "File not found: notes.md", Latest: ask},
		{Name: "recording", File: "session-x.jsonl", Body: recording(orphan), Orphan: "bump: v1.2.3 -> v1.2.4", Latest: ask},
	})
}
