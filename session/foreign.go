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
// when it looks like something else people feed to compact by mistake:
// another agent's transcript (Claude Code, Codex), a JSON document
// instead of JSONL, or a chat API request body. first is the first
// non-empty line, data the whole file. It returns nil when the file looks
// like none of these; the error wraps ErrNotSession.
func foreignFormat(first, data []byte) error {
	var obj map[string]stdjson.RawMessage
	if err := stdjson.Unmarshal(first, &obj); err == nil {
		if what := lookalike(obj); what != "" {
			return fmt.Errorf("this looks like %s, %w (compact import converts it to one; package agents reads it)", what, ErrNotSession)
		}
		if isArray(obj["messages"]) {
			return fmt.Errorf("this looks like an OpenAI or Anthropic request body {\"messages\": [...]}, %w (%s)", ErrNotSession, notSessionHint)
		}
		return nil
	}
	if bytes.HasPrefix(bytes.TrimSpace(first), []byte("[")) && stdjson.Valid(first) {
		return fmt.Errorf("this looks like a JSON array, %w (%s)", ErrNotSession, notSessionHint)
	}
	// A first line that is not JSON on its own, in a file that is one JSON
	// value: a pretty-printed document.
	if !stdjson.Valid(data) {
		return nil
	}
	switch data = bytes.TrimSpace(data); {
	case len(data) > 0 && data[0] == '[':
		return fmt.Errorf("this looks like a JSON array spread over several lines, %w (%s)", ErrNotSession, notSessionHint)
	case len(data) > 0 && data[0] == '{':
		if err := stdjson.Unmarshal(data, &obj); err == nil && isArray(obj["messages"]) {
			return fmt.Errorf("this looks like an OpenAI or Anthropic request body {\"messages\": [...]}, %w (%s)", ErrNotSession, notSessionHint)
		}
		return fmt.Errorf("this looks like a JSON document spread over several lines, %w (%s)", ErrNotSession, notSessionHint)
	}
	return nil
}

// lookalike names the agent whose transcript line obj looks like, "" for
// none. Claude Code project transcripts carry sessionId, uuid and
// parentUuid on their user, assistant, system and summary lines (summary
// lines a leafUuid), and may start with file-history-snapshot lines. Codex
// rollouts wrap each line as {"timestamp", "type", "payload"}; older ones
// start with a bare {"id", "timestamp", "instructions"} object followed by
// {"type": "message", "role": ..., "content": [...]} items (Gemini CLI's
// stream-json output has message events too, with a string content).
func lookalike(obj map[string]stdjson.RawMessage) string {
	var typ string
	if raw, ok := obj["type"]; ok {
		_ = stdjson.Unmarshal(raw, &typ)
	}
	has := func(k string) bool { _, ok := obj[k]; return ok }
	switch {
	case has("payload") && (typ == "session_meta" || typ == "response_item" || typ == "event_msg" ||
		typ == "turn_context" || typ == "compacted"):
		return "a Codex rollout"
	case !has("type") && has("id") && has("timestamp") && has("instructions"),
		has("record_type"),
		typ == "message" && has("role") && !has("message") && isArray(obj["content"]):
		return "a Codex rollout"
	case has("sessionId") || has("parentUuid") || has("leafUuid") || typ == "file-history-snapshot",
		has("uuid") && (typ == "user" || typ == "assistant" || typ == "system" || typ == "summary"):
		return "a Claude Code transcript"
	}
	return ""
}

// isArray reports whether raw is a JSON array.
func isArray(raw stdjson.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '['
}
