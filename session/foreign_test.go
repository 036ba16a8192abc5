package session

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// Files of other formats fail with one line naming the format they look
// like, not a decoding error about the session header.
func TestForeignFormats(t *testing.T) {
	claudeUser := `{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/p","sessionId":"5d1f","version":"2.0.14","gitBranch":"main","type":"user","message":{"role":"user","content":"hello"},"uuid":"9a2c","timestamp":"2025-10-01T10:00:00.000Z"}`
	claudeAssistant := `{"parentUuid":"9a2c","isSidechain":false,"userType":"external","cwd":"/p","sessionId":"5d1f","version":"2.0.14","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"hi"}]},"type":"assistant","uuid":"b3e0","timestamp":"2025-10-01T10:00:01.000Z"}`
	cases := []struct {
		name, data, what string
	}{
		{"Claude Code transcript", claudeUser + "\n" + claudeAssistant + "\n", "a Claude Code transcript"},
		{"Claude Code transcript starting with a summary", `{"type":"summary","summary":"Fix the build","leafUuid":"b3e0"}` + "\n" + claudeUser + "\n", "a Claude Code transcript"},
		{"Claude Code transcript starting with a snapshot", `{"type":"file-history-snapshot","messageId":"9a2c","snapshot":{"messageId":"9a2c","trackedFileBackups":{},"timestamp":"t"},"isSnapshotUpdate":false}` + "\n" + claudeUser + "\n", "a Claude Code transcript"},
		{"Codex rollout", `{"timestamp":"2025-10-01T10:00:00.000Z","type":"session_meta","payload":{"id":"0199","timestamp":"t","cwd":"/p","originator":"codex_cli_rs","cli_version":"0.46.0"}}` + "\n" +
			`{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hello"}]}}` + "\n", "a Codex rollout"},
		{"older Codex rollout", `{"id":"0199","timestamp":"2025-05-01T10:00:00.000Z","instructions":null}` + "\n" +
			`{"type":"message","role":"user","content":[{"type":"input_text","text":"hello"}]}` + "\n", "a Codex rollout"},
		{"request body on one line", `{"model":"gpt-4o","messages":[{"role":"user","content":"hello"}]}` + "\n", "an OpenAI or Anthropic request body"},
		{"pretty-printed request body", "{\n  \"model\": \"claude-sonnet-4-5\",\n  \"max_tokens\": 1024,\n  \"messages\": [\n    {\"role\": \"user\", \"content\": \"hello\"}\n  ]\n}\n", "an OpenAI or Anthropic request body"},
		{"pretty-printed JSON document", "{\n  \"type\": \"session\",\n  \"id\": \"x\"\n}\n", "a JSON document spread over several lines"},
		{"JSON array", `[{"role":"user","content":"hello"}]` + "\n", "a JSON array"},
		{"pretty-printed JSON array", "[\n  {\"role\": \"user\", \"content\": \"hello\"}\n]\n", "a JSON array spread over several lines"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := writeRaw(t, c.data)
			for _, lenient := range []bool{false, true} {
				_, err := Open(p, Options{Lenient: lenient})
				var le *LineError
				if !errors.As(err, &le) || le.Line != 1 || !errors.Is(err, ErrNotSession) {
					t.Fatalf("lenient=%v: %v; want a *LineError at line 1 wrapping ErrNotSession", lenient, err)
				}
				msg := err.Error()
				if want := fmt.Sprintf("%s:1: this looks like %s", p, c.what); !strings.HasPrefix(msg, want) || !strings.Contains(msg, ", not a pi session file (") {
					t.Errorf("lenient=%v: %q, want it to start with %q", lenient, msg, want)
				}
				if strings.HasPrefix(c.what, "a Claude") || strings.HasPrefix(c.what, "a Codex") {
					if !strings.HasSuffix(msg, "(compact import converts it to one; package agents reads it)") {
						t.Errorf("lenient=%v: %q does not point at compact import", lenient, msg)
					}
				}
				if strings.Contains(msg, "unmarshal") || strings.Contains(msg, "\n") {
					t.Errorf("lenient=%v: %q is not one plain line", lenient, msg)
				}
			}
		})
	}
}

// Gemini CLI's stream-json output, whose message events have a role and a
// string content, is not taken for a Codex rollout.
func TestGeminiStreamNotCodex(t *testing.T) {
	for _, first := range []string{
		`{"type":"message","timestamp":"2025-10-10T10:00:00.100Z","role":"user","content":"list the files"}`,
		`{"type":"init","timestamp":"2025-10-10T10:00:00.000Z","session_id":"c0ffee","model":"gemini-2.5-pro"}`,
	} {
		p := writeRaw(t, first+"\n")
		_, err := Open(p, Options{})
		if err == nil || strings.Contains(err.Error(), "Codex rollout") {
			t.Errorf("%s: %v; want an error that names no Codex rollout", first, err)
		}
	}
}
