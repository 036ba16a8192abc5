package jsonrec

import (
	"encoding/json"
	"strings"

	"github.com/compactkit/compact"
)

// The members a pi session writes itself for a message and for a content
// part, lower-cased: the session reader matches keys without regard to
// case, so an extra of one of these names, in any case, would be read
// back as that field.
var (
	messageKeys = lowerSet("role", "content", "timestamp", "usage", "stopReason", "provider", "model",
		"errorMessage", "toolCallId", "toolName", "isError", "details", "command", "output", "exitCode",
		"cancelled", "truncated", "excludeFromContext", "customType", "display")
	partKeys = lowerSet("type", "text", "thinking", "data", "mimeType", "id", "name", "arguments")
)

func lowerSet(keys ...string) map[string]bool {
	out := make(map[string]bool, len(keys))
	for _, k := range keys {
		out[strings.ToLower(k)] = true
	}
	return out
}

// SafeExtras renames, in place, every message or part extra of t whose
// name a pi session uses for a field of its own: it is kept under
// prefix + "." + name instead, so that writing and reading the session
// neither drops it nor takes it for that field.
func SafeExtras(t *compact.Transcript, prefix string) {
	for _, e := range t.Entries {
		if e.Message == nil {
			continue
		}
		e.Message.Extra = rename(e.Message.Extra, messageKeys, prefix)
		for i := range e.Message.Content {
			p := &e.Message.Content[i]
			p.Extra = rename(p.Extra, partKeys, prefix)
		}
	}
}

func rename(extra map[string]json.RawMessage, taken map[string]bool, prefix string) map[string]json.RawMessage {
	for k, v := range extra {
		if !taken[strings.ToLower(k)] {
			continue
		}
		delete(extra, k)
		nk := prefix + "." + k
		for extra[nk] != nil {
			nk = prefix + "." + nk
		}
		extra[nk] = v
	}
	return extra
}
