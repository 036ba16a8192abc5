package jsonrec

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/compactkit/compact"
)

// Content reads the content member of an OpenAI-style message (Chat
// Completions, and the LiteLLM-shaped histories SWE-agent writes):
// absent or null is no parts, a string one text part, and an array has
// each element mapped by part. Errors follow a path: ".content: ..."
// for the whole value, ".content[N]" + part's error for an element, and
// ".content: neither a string nor " + what, what naming the array as
// the format's documents do ("an array", "a list").
func Content(raw json.RawMessage, what string, part func(raw json.RawMessage) (compact.Part, error)) ([]compact.Part, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || IsNull(raw) {
		return nil, nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf(".content: %v", err)
		}
		return []compact.Part{{Type: compact.PartText, Text: s}}, nil
	case '[':
	default:
		return nil, fmt.Errorf(".content: neither a string nor %s", what)
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf(".content: %v", err)
	}
	out := make([]compact.Part, 0, len(list))
	for j, p := range list {
		part, err := part(p)
		if err != nil {
			return nil, fmt.Errorf(".content[%d]%w", j, err)
		}
		out = append(out, part)
	}
	return out, nil
}

// EachObject calls fn with each element of the array member key of f,
// in order; an absent or null member is no elements. A member that is
// not an array of objects is the error ".KEY: not an array of objects",
// and an error of fn is returned as ".KEY[N]" + its text, wrapped.
func EachObject(f map[string]json.RawMessage, key string, fn func(obj map[string]json.RawMessage) error) error {
	raw, ok := f[key]
	if !ok || IsNull(raw) {
		return nil
	}
	var objs []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &objs); err != nil {
		return fmt.Errorf(".%s: not an array of objects", key)
	}
	for j, o := range objs {
		if err := fn(o); err != nil {
			return fmt.Errorf(".%s[%d]%w", key, j, err)
		}
	}
	return nil
}
