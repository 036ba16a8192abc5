package geminicli

import (
	"bytes"
	"encoding/json"

	"github.com/compactkit/compact/internal/jsonrec"
)

// Detect reports whether head, the first bytes of a file (up to 64 KiB,
// possibly cut mid-record), is a Gemini CLI chat recording or checkpoint:
// an object whose members include sessionId and projectHash (a session-*.json
// recording, or the first line of a session-*.jsonl one), an object with a
// "history" array whose first element has "role" and "parts" (a
// checkpoint-*.json), or such an array alone (a checkpoint in the older
// form). The members are read
// one by one, so a head cut inside a long value is judged by those before
// the cut.
func Detect(head []byte) bool {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	dec := json.NewDecoder(bytes.NewReader(head))
	t, err := dec.Token()
	if err != nil {
		return false
	}
	switch t {
	case json.Delim('{'):
		keys := members(dec, 2)
		if keys["history"] {
			// A checkpoint: its history holds Content objects. SWE-agent
			// trajectories have a history too, of chat messages.
			return contents(dec)
		}
		return keys["sessionId"] && keys["projectHash"]
	case json.Delim('['):
		return contents(dec)
	}
	return false
}

// contents reports whether dec is at an array (its opening bracket read
// or next) whose first element is a Content object: role and parts, no
// content.
func contents(dec *json.Decoder) bool {
	t, err := dec.Token()
	if err != nil {
		return false
	}
	if t == json.Delim('[') {
		if t, err = dec.Token(); err != nil {
			return false
		}
	}
	if t != json.Delim('{') {
		return false
	}
	keys := members(dec, 2)
	return keys["role"] && keys["parts"] && !keys["content"]
}

// members reads the member names of the object dec has just opened until
// it has seen enough of the interesting ones (want), the object ends or
// the input is cut.
func members(dec *json.Decoder, want int) map[string]bool {
	keys := map[string]bool{}
	found := 0
	for dec.More() && found < want {
		t, err := dec.Token()
		if err != nil {
			break
		}
		k, ok := t.(string)
		if !ok {
			break
		}
		keys[k] = true
		switch k {
		case "sessionId", "projectHash", "role", "parts":
			found++
		case "history":
			return keys
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			break
		}
	}
	return keys
}

// streamEvents are the event types of Gemini CLI's --output-format
// stream-json output, each with a member only that event has.
var streamEvents = map[string]string{
	"init":        "session_id",
	"message":     "role",
	"tool_use":    "tool_id",
	"tool_result": "tool_id",
	"error":       "severity",
	"result":      "status",
}

// DetectStreamJSON reports whether head, the first bytes of a file (up to
// 64 KiB, possibly cut mid-line), is the output of gemini
// --output-format stream-json: JSON Lines of events {type, timestamp, ...}
// whose first is an init, message, tool_use, tool_result, error or result
// event. That stream is what a headless run prints on stdout, not the
// chat recording Detect accepts, and this package does not read it: the
// same run's recording, in ~/.gemini/tmp/<project>/chats/, is the file to
// read.
func DetectStreamJSON(head []byte) bool {
	obj, _, _ := jsonrec.FirstObject(head)
	if obj == nil {
		return false
	}
	var typ string
	if json.Unmarshal(obj["type"], &typ) != nil {
		return false
	}
	key, ok := streamEvents[typ]
	if !ok {
		return false
	}
	_, ts := obj["timestamp"]
	_, k := obj[key]
	_, payload := obj["payload"]
	return ts && k && !payload
}
