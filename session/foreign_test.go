package session

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// A file whose JSON shape is not JSONL fails with one line saying so, not
// a decoding error about the session header. (Naming the agent that wrote
// a file is agents.OpenSession's job, tested there.)
func TestForeignShapes(t *testing.T) {
	cases := []struct {
		name, data, what string
	}{
		{"pretty-printed request body", "{\n  \"model\": \"claude-sonnet-4-5\",\n  \"max_tokens\": 1024,\n  \"messages\": [\n    {\"role\": \"user\", \"content\": \"hello\"}\n  ]\n}\n", "a JSON document spread over several lines"},
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
				if strings.Contains(msg, "unmarshal") || strings.Contains(msg, "\n") {
					t.Errorf("lenient=%v: %q is not one plain line", lenient, msg)
				}
			}
		})
	}
}

// An object on one line that is no session header is left to the header
// error: the session reader does not guess which agent wrote it.
func TestForeignObjectNotGuessed(t *testing.T) {
	p := writeRaw(t, `{"timestamp":"t","type":"session_meta","payload":{"id":"0199"}}`+"\n")
	_, err := Open(p, Options{})
	if !errors.Is(err, ErrNotSession) || strings.Contains(err.Error(), "looks like") {
		t.Errorf("%v; want ErrNotSession naming no format", err)
	}
}
