package claudecode

import (
	"bytes"
	"encoding/json"

	"github.com/compactkit/compact/internal/jsonrec"
)

// Detect reports whether head, the first bytes of a file (up to 64 KiB,
// possibly cut mid-line), is a Claude Code transcript. It looks at the
// first non-empty line: a typed record carrying parentUuid or leafUuid, a
// file-history-snapshot record, or a record of a Claude Code type (user,
// assistant, system, progress, summary, queue-operation, ...) with a
// sessionId or uuid; never one with a "payload" (Codex rollouts) or a
// "projectHash" (Gemini CLI sessions). A first line cut short is judged by
// the members it starts with.
func Detect(head []byte) bool {
	return jsonrec.Sniff(head, looksWhole, looksCut)
}

// looksWhole judges a first line read whole.
func looksWhole(obj map[string]json.RawMessage) bool {
	has := func(k string) bool { _, ok := obj[k]; return ok }
	if has("payload") || has("projectHash") {
		return false
	}
	var typ string
	if json.Unmarshal(obj["type"], &typ) != nil || typ == "" {
		return false
	}
	switch {
	case has("parentUuid"), has("leafUuid"), typ == "file-history-snapshot":
		return true
	case has("sessionId") || has("uuid"):
		return knownTypes[typ]
	}
	return false
}

// looksCut judges a first line that ends before its record does.
func looksCut(line []byte) bool {
	if bytes.Contains(line, []byte(`"payload":`)) || bytes.Contains(line, []byte(`"projectHash":`)) {
		return false
	}
	for _, marker := range [...]string{`"parentUuid":`, `"leafUuid":"`, `"type":"file-history-snapshot"`} {
		if bytes.Contains(line, []byte(marker)) {
			return true
		}
	}
	return false
}
