package claudecode

import (
	"encoding/json"
	"strings"

	"github.com/compactkit/compact"
)

// The members a pi session writes for a message and for a content part,
// lower-cased: the session reader matches JSON keys without regard to
// case, so an extra member of one of these names, in any case, would be
// read as that field. Such extras are kept under "claudeCode.<name>".
var (
	messageKeys = keySet("role", "content", "timestamp", "usage", "stopReason", "provider", "model",
		"errorMessage", "toolCallId", "toolName", "isError", "command", "output", "exitCode",
		"cancelled", "truncated", "excludeFromContext", "customType", "display")
	partKeys = keySet("type", "text", "thinking", "data", "mimeType", "id", "name", "arguments")
)

func keySet(keys ...string) map[string]bool {
	out := make(map[string]bool, len(keys))
	for _, k := range keys {
		out[strings.ToLower(k)] = true
	}
	return out
}

// safeExtras renames the extras of the messages of entries that would be
// taken for modelled fields.
func safeExtras(entries []*compact.Entry) {
	for _, e := range entries {
		if e.Message == nil {
			continue
		}
		e.Message.Extra = rename(e.Message.Extra, messageKeys)
		for i := range e.Message.Content {
			p := &e.Message.Content[i]
			p.Extra = rename(p.Extra, partKeys)
		}
	}
}

func rename(extra map[string]json.RawMessage, taken map[string]bool) map[string]json.RawMessage {
	for k, v := range extra {
		if !taken[strings.ToLower(k)] {
			continue
		}
		delete(extra, k)
		nk := "claudeCode." + k
		for extra[nk] != nil {
			nk = "claudeCode." + nk
		}
		extra[nk] = v
	}
	return extra
}
