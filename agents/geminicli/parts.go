package geminicli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
)

// part is one Gemini API Part ({text}, {inlineData}, {functionCall},
// {functionResponse}, ...), decoded into its members.
type part struct {
	fields map[string]json.RawMessage
	raw    json.RawMessage
}

func (p part) has(k string) bool {
	v, ok := p.fields[k]
	return ok && string(v) != "null"
}

func (p part) str(k string) string {
	var s string
	_ = json.Unmarshal(p.fields[k], &s)
	return s
}

// kind names the part by its data member, for counting unknown parts.
func (p part) kind() string {
	for _, k := range []string{"text", "inlineData", "functionCall", "functionResponse", "fileData", "executableCode", "codeExecutionResult"} {
		if p.has(k) {
			return k
		}
	}
	for k := range p.fields {
		return k
	}
	return "empty"
}

// decodeParts reads a PartListUnion: a string, one Part, or an array of
// Parts and strings. A string becomes a text part.
func decodeParts(raw json.RawMessage) ([]part, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []part{textOnly(s)}, nil
	case '{':
		var f map[string]json.RawMessage
		if err := json.Unmarshal(raw, &f); err != nil {
			return nil, err
		}
		return []part{{fields: f, raw: raw}}, nil
	case '[':
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, err
		}
		out := make([]part, 0, len(items))
		for i, it := range items {
			ps, err := decodeParts(it)
			if err != nil || len(ps) != 1 || (len(it) > 0 && it[0] == '[') {
				return nil, fmt.Errorf("part %d: not a part or a string", i)
			}
			out = append(out, ps[0])
		}
		return out, nil
	}
	return nil, fmt.Errorf("not a string, a part or an array of parts")
}

func textOnly(s string) part {
	v, _ := json.Marshal(s)
	return part{fields: map[string]json.RawMessage{"text": v}}
}

// partKeys are the members pi writes for content parts; a stored member
// of the same name that this package does not model is kept under a
// "gemini_" prefix.
var partKeys = map[string]bool{
	"type": true, "text": true, "thinking": true, "thinkingSignature": true, "data": true,
	"mimeType": true, "id": true, "name": true, "arguments": true,
}

// extras returns the members of f other than the modelled ones, nil if
// none; one named in reserved is kept as "gemini_" + its name.
func extras(f map[string]json.RawMessage, reserved map[string]bool, modelled ...string) map[string]json.RawMessage {
	return jsonrec.ExtrasRenamed(f, reserved, "gemini_", modelled...)
}

// contentPart maps a text, thought or image part; ok is false for the
// others (function calls and responses are handled by the caller).
func contentPart(p part) (compact.Part, bool) {
	switch {
	case p.has("text"):
		var thought bool
		_ = json.Unmarshal(p.fields["thought"], &thought)
		if thought {
			return compact.Part{Type: compact.PartThinking, Thinking: p.str("text"),
				Extra: extras(p.fields, partKeys, "text", "thought")}, true
		}
		if p.str("text") == "" && len(p.fields) == 1 {
			return compact.Part{}, true // an empty text: nothing to keep
		}
		return compact.Part{Type: compact.PartText, Text: p.str("text"), Extra: extras(p.fields, partKeys, "text")}, true
	case p.has("inlineData"):
		var d struct {
			MimeType string `json:"mimeType"`
			Data     string `json:"data"`
		}
		if json.Unmarshal(p.fields["inlineData"], &d) != nil || !strings.HasPrefix(d.MimeType, "image/") {
			return compact.Part{}, false
		}
		return compact.Part{Type: compact.PartImage, Extra: extras(p.fields, partKeys, "inlineData"), Image: &compact.Image{MimeType: d.MimeType, Data: d.Data}}, true
	}
	return compact.Part{}, false
}

// functionResponse is the Gemini API's record of a tool's output.
type functionResponse struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

// orphanResult returns the harness note that stands for fr, a function
// response whose call the file does not hold (see compact.OrphanResult).
func orphanResult(fr functionResponse, ts int64) *compact.Message {
	text, isErr, rest := responseText(fr.Response)
	res := &compact.Message{Role: compact.RoleToolResult, ToolCallID: fr.ID, ToolName: fr.Name, IsError: isErr,
		Content: []compact.Part{{Type: compact.PartText, Text: text}}, Timestamp: ts}
	if rest != nil {
		res.Extra = map[string]json.RawMessage{"response": rest}
	}
	return compact.OrphanResult(Format, res)
}

// responseText returns the text of a function response: its output (or
// error) member when it is a string, else the response object as JSON.
// isErr reports an error member; rest holds the response when it has more
// than the member used.
func responseText(raw json.RawMessage) (text string, isErr bool, rest json.RawMessage) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		if len(raw) == 0 || string(raw) == "null" {
			return "", false, nil
		}
		return string(raw), false, nil
	}
	for _, k := range []string{"output", "error"} {
		v, ok := obj[k]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			continue
		}
		if len(obj) > 1 {
			rest = raw
		}
		return s, k == "error", rest
	}
	return string(raw), false, nil
}

// functionCall is the Gemini API's record of a tool call.
type functionCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// objectArgs returns args when it is a JSON object, {} when absent, and
// {"args": args} otherwise.
func objectArgs(args json.RawMessage) json.RawMessage {
	args = bytes.TrimSpace(args)
	switch {
	case len(args) == 0 || string(args) == "null":
		return json.RawMessage(`{}`)
	case args[0] == '{':
		return args
	}
	out, _ := json.Marshal(map[string]json.RawMessage{"args": args})
	return out
}
