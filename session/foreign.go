package session

import (
	"bytes"
	stdjson "encoding/json"
	"fmt"
)

// notSessionHint is how the errors about other formats end: what a pi
// session looks like.
const notSessionHint = `a pi session is JSONL: a "session" header line, then one entry per line`

// foreignFormat explains a file whose first line is not a session header
// when its JSON shape shows what went wrong: a JSON array, or a document
// spread over several lines, where pi writes one entry per line. first is
// the first non-empty line, data the whole file. It returns nil for any
// other shape; the error wraps ErrNotSession. Naming the agent that wrote
// a file is agents.Detect's job (agents.OpenSession adds it).
func foreignFormat(first, data []byte) error {
	if bytes.HasPrefix(bytes.TrimSpace(first), []byte("[")) && stdjson.Valid(first) {
		return fmt.Errorf("this looks like a JSON array, %w (%s)", ErrNotSession, notSessionHint)
	}
	// A first line that is not JSON on its own, in a file that is one JSON
	// value: a pretty-printed document.
	if stdjson.Valid(first) || !stdjson.Valid(data) {
		return nil
	}
	switch data = bytes.TrimSpace(data); {
	case len(data) > 0 && data[0] == '[':
		return fmt.Errorf("this looks like a JSON array spread over several lines, %w (%s)", ErrNotSession, notSessionHint)
	case len(data) > 0 && data[0] == '{':
		return fmt.Errorf("this looks like a JSON document spread over several lines, %w (%s)", ErrNotSession, notSessionHint)
	}
	return nil
}
