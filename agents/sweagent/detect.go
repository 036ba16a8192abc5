package sweagent

import "github.com/compactkit/compact/internal/jsonrec"

// Detect reports whether head, the first bytes of a file (possibly cut
// anywhere), is a SWE-agent trajectory: a JSON object whose top-level
// keys, read up to the first array, include "trajectory", "history" or
// "attempts" holding an array, before any key of a chat request body.
func Detect(head []byte) bool {
	found := false
	jsonrec.Keys(head, func(key string, first byte) bool {
		switch key {
		case "trajectory", "history", "attempts":
			found = first == '['
			return false
		case "messages", "type", "model", "events":
			return false
		}
		return true
	})
	return found
}
