package codex

import (
	"bytes"
	"encoding/json"

	"github.com/compactkit/compact/internal/jsonrec"
)

// recordTypes are the line types of the {"timestamp", "type", "payload"}
// envelope.
var recordTypes = []string{"session_meta", "response_item", "event_msg", "turn_context", "compacted"}

// Detect reports whether head, the first bytes of a file (up to 64 KiB,
// possibly cut mid-line), is a Codex rollout: its first non-empty line is
// an envelope with a payload and one of the rollout line types, or the
// bare {id, timestamp, instructions} object early rollouts start with. A
// first line cut short (a session_meta with long instructions) is judged
// by its start.
func Detect(head []byte) bool {
	return jsonrec.Sniff(head, looksWhole, looksCut)
}

// looksWhole judges a first line read whole.
func looksWhole(obj map[string]json.RawMessage) bool {
	has := func(k string) bool { _, ok := obj[k]; return ok }
	var typ string
	_ = json.Unmarshal(obj["type"], &typ)
	if has("payload") {
		for _, t := range recordTypes {
			if typ == t {
				return true
			}
		}
		return false
	}
	return !has("type") && has("id") && has("timestamp") && has("instructions")
}

// looksCut judges a first line that ends before its record does: an
// envelope whose type, a rollout line type, comes before its payload.
func looksCut(line []byte) bool {
	p := bytes.Index(line, []byte(`"payload":`))
	if p < 0 {
		return false
	}
	for _, t := range recordTypes {
		if bytes.Contains(line[:p], []byte(`"type":"`+t+`"`)) {
			return true
		}
	}
	return false
}
