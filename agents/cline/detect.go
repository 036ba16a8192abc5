package cline

import (
	"bytes"
	"encoding/json"
)

// Detect reports whether head, the first bytes of a file (up to 64 KiB,
// possibly cut mid-record), is a Cline-style api_conversation_history.json:
// a JSON array whose first element is an object with a "role" of "user" or
// "assistant" and a "content" member, and no Gemini "parts" member. The
// first element's members are read one by one, so a head cut inside a long
// content string is still judged by the members seen before the cut.
// ui_messages.json is not detected: it is the companion file that ReadFile
// reads beside the history.
func Detect(head []byte) bool {
	dec, ok := firstObject(head)
	if !ok {
		return false
	}
	var role string
	content, parts := false, false
	for dec.More() && !(role != "" && (content || parts)) {
		t, err := dec.Token()
		if err != nil {
			break
		}
		key, ok := t.(string)
		if !ok {
			return false
		}
		switch key {
		case "role":
			var v any
			if dec.Decode(&v) != nil {
				return false
			}
			if role, ok = v.(string); !ok {
				return false
			}
			continue
		case "content":
			content = true
		case "parts":
			parts = true
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			break
		}
	}
	return (role == "user" || role == "assistant") && content && !parts
}

// DetectUIMessages reports whether head, the first bytes of a file (up to
// 64 KiB, possibly cut mid-record), is a ui_messages.json: a JSON array
// whose first element is an object with a numeric "ts" and a "type" of
// "say" or "ask". It is the companion of api_conversation_history.json,
// which holds the conversation: ReadFile needs the history and reads this
// file beside it; alone it cannot be imported.
func DetectUIMessages(head []byte) bool {
	dec, ok := firstObject(head)
	if !ok {
		return false
	}
	ts, typ := false, false
	for dec.More() && !(ts && typ) {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		var v any
		if dec.Decode(&v) != nil {
			return false
		}
		switch t {
		case "ts":
			if _, ok := v.(float64); !ok {
				return false
			}
			ts = true
		case "type":
			if v != "say" && v != "ask" {
				return false
			}
			typ = true
		}
	}
	return ts && typ
}

// firstObject returns a decoder positioned inside the first element of
// the JSON array that head (a byte order mark allowed) starts, after its
// opening brace; false when head does not start an array of objects.
func firstObject(head []byte) (*json.Decoder, bool) {
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return nil, false
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	return dec, true
}
