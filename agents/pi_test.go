package agents

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact/session"
)

// OpenSession names the agent whose file it was given, from the same
// detection as Detect, and leaves every other error as session.Open
// returns it.
func TestOpenSessionNamesTheFormat(t *testing.T) {
	claudeUser := `{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/p","sessionId":"5d1f","version":"2.0.14","gitBranch":"main","type":"user","message":{"role":"user","content":"hello"},"uuid":"9a2c","timestamp":"2025-10-01T10:00:00.000Z"}`
	cases := []struct {
		name, data, want string
	}{
		{"Claude Code transcript", claudeUser + "\n", "this looks like a Claude Code file (format claude-code), not a pi session file (compact import"},
		{"Claude Code starting with a snapshot", `{"type":"file-history-snapshot","messageId":"9a2c","snapshot":{"messageId":"9a2c","trackedFileBackups":{},"timestamp":"t"},"isSnapshotUpdate":false}` + "\n" + claudeUser + "\n", "(format claude-code)"},
		{"Codex rollout", `{"timestamp":"2025-10-01T10:00:00.000Z","type":"session_meta","payload":{"id":"0199","timestamp":"t","cwd":"/p","originator":"codex_cli_rs","cli_version":"0.46.0"}}` + "\n" +
			`{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hello"}]}}` + "\n", "this looks like a Codex file (format codex)"},
		{"request body", `{"model":"gpt-4o","messages":[{"role":"user","content":"hello"}]}` + "\n", "this looks like a chat API request file (format request-body)"},
		{"JSON array", `[1, 2]` + "\n", "this looks like a JSON array, not a pi session file"},
		{"Gemini stream-json is no Codex rollout", `{"type":"init","timestamp":"2025-10-10T10:00:00.000Z","session_id":"c0ffee","model":"gemini-2.5-pro"}` + "\n", "not a pi session file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "s.jsonl")
			if err := os.WriteFile(p, []byte(c.data), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := OpenSession(p, session.Options{})
			var le *session.LineError
			if !errors.As(err, &le) || le.Line != 1 || !errors.Is(err, session.ErrNotSession) {
				t.Fatalf("%v; want a *session.LineError at line 1 wrapping ErrNotSession", err)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, p+":1: ") || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
				t.Errorf("%q; want one line at %s:1 holding %q", msg, p, c.want)
			}
			if strings.HasPrefix(c.name, "Gemini") && strings.Contains(err.Error(), "format codex") {
				t.Errorf("%v names Codex", err)
			}
		})
	}
	if _, err := OpenSession("../examples/sessions/demo.jsonl", session.Options{}); err != nil {
		t.Errorf("a pi session: %v", err)
	}
}
