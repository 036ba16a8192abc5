package geminicli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/readertest"
)

// The context Gemini CLI sends as the first user message of a chat (the
// date, the system, the folders; newer versions in <session_context>) is
// a harness note, in a /chat save checkpoint and in a recording alike: a
// summary's Goal starts with the user's first real request.
func TestSetupContextNotTheUser(t *testing.T) {
	const old = "This is the Gemini CLI. We are setting up the context for our chat.\nToday's date is Thursday, August 20, 2026 (formatted according to the user's locale).\nMy operating system is: linux\nI'm currently working in the directory: /home/kim/proj"
	const wrapped = "<session_context>\n" + old + "\n</session_context>"
	const ask = "What does scripts/bump.sh do?"
	checkpoint := func(setup string) []byte {
		b, _ := json.MarshalIndent(map[string]any{"history": []map[string]any{
			{"role": "user", "parts": []map[string]any{{"text": setup}}},
			{"role": "model", "parts": []map[string]any{{"text": "Got it. Thanks for the context!"}}},
			{"role": "user", "parts": []map[string]any{{"text": ask}}},
			{"role": "model", "parts": []map[string]any{{"text": "It bumps the version."}}},
		}}, "", "  ")
		return b
	}
	recording := func(setup string) []byte {
		lines := []string{
			`{"sessionId":"s1","projectHash":"h","startTime":"2026-08-20T10:00:00.000Z","lastUpdated":"2026-08-20T10:00:00.000Z","kind":"main"}`,
		}
		for i, m := range []struct{ typ, text string }{{"user", setup}, {"gemini", "Got it."}, {"user", ask}, {"gemini", "It bumps the version."}} {
			b, _ := json.Marshal(map[string]any{"id": string(rune('a' + i)), "timestamp": "2026-08-20T10:00:00.000Z", "type": m.typ, "content": m.text})
			if m.typ == "user" {
				b, _ = json.Marshal(map[string]any{"id": string(rune('a' + i)), "timestamp": "2026-08-20T10:00:00.000Z", "type": m.typ, "content": []map[string]string{{"text": m.text}}})
			}
			lines = append(lines, string(b))
		}
		return []byte(strings.Join(lines, "\n") + "\n")
	}
	tests := []struct {
		name, file string
		data       []byte
	}{
		{"checkpoint", "checkpoint-x.json", checkpoint(old)},
		{"checkpoint, session_context", "checkpoint-x.json", checkpoint(wrapped)},
		{"recording, session_context", "session-x.jsonl", recording(wrapped)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := Read(tc.data, tc.file)
			if err != nil {
				t.Fatal(err)
			}
			var msgs []*compact.Message
			notes := 0
			for _, e := range tr.Entries {
				if m := e.Message; m != nil {
					msgs = append(msgs, m)
					if compact.IsHarnessNote(m) && m.Meta.CustomType == "harness:gemini-cli:session_context" {
						notes++
					}
				}
			}
			if notes != 1 {
				t.Errorf("%d session_context notes, want 1", notes)
			}
			sum := readertest.Summary(t, msgs)
			if !strings.Contains(sum, "## Goal\n- Initially: "+ask) || strings.Contains(sum, "setting up the context") {
				t.Errorf("Goal does not start with the request %q alone:\n%s", ask, sum)
			}
		})
	}
}
