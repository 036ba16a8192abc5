package cline

import (
	"encoding/json"
	"fmt"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
)

// block is one content block of a stored message, decoded into its
// members.
type block struct {
	typ    string
	fields map[string]json.RawMessage
	raw    json.RawMessage
}

// decodeContent reads a message's content: a string (one text block) or an
// array of blocks. Each block must be an object with a string "type".
func decodeContent(raw json.RawMessage) ([]block, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		text, _ := json.Marshal(s)
		return []block{{typ: "text", fields: map[string]json.RawMessage{"type": json.RawMessage(`"text"`), "text": text}}}, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(raw, &raws); err != nil {
		return nil, fmt.Errorf("not a string or an array of blocks")
	}
	out := make([]block, 0, len(raws))
	for i, r := range raws {
		var f map[string]json.RawMessage
		if err := json.Unmarshal(r, &f); err != nil || f == nil {
			return nil, fmt.Errorf("block %d: not an object", i)
		}
		var typ string
		if err := json.Unmarshal(f["type"], &typ); err != nil {
			return nil, fmt.Errorf("block %d: field type: not a string", i)
		}
		out = append(out, block{typ: typ, fields: f, raw: r})
	}
	return out, nil
}

// str returns the string member k of b ("" when absent or not a string).
func (b block) str(k string) string {
	var s string
	_ = json.Unmarshal(b.fields[k], &s)
	return s
}

// partKeys are the members pi writes for content parts; a stored member of
// the same name that this package does not model is kept under a
// "cline_" prefix so that it cannot overwrite them.
var partKeys = map[string]bool{
	"type": true, "text": true, "thinking": true, "thinkingSignature": true, "data": true,
	"mimeType": true, "id": true, "name": true, "arguments": true, "redacted": true,
}

// extras returns the members of f not listed in modelled, or nil; one
// named in reserved is kept as "cline_" + its name.
func extras(f map[string]json.RawMessage, reserved map[string]bool, modelled ...string) map[string]json.RawMessage {
	return jsonrec.ExtrasRenamed(f, reserved, "cline_", modelled...)
}

// textPart returns a text part for a text block.
func textPart(b block) compact.Part {
	return compact.Part{Type: compact.PartText, Text: b.str("text"), Extra: extras(b.fields, partKeys, "type", "text")}
}

// imagePart returns an image part for an Anthropic image block with a
// base64 source; ok is false for other sources (URLs, files).
func imagePart(b block) (compact.Part, bool) {
	var src struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	}
	if json.Unmarshal(b.fields["source"], &src) != nil || src.Type != "base64" {
		return compact.Part{}, false
	}
	return compact.Part{Type: compact.PartImage, Extra: extras(b.fields, partKeys, "type", "source"), Image: &compact.Image{MimeType: src.MediaType, Data: src.Data}}, true
}

// thinkingPart maps the reasoning blocks: Anthropic thinking (its
// signature becomes pi's thinkingSignature), redacted_thinking (no text;
// the encrypted data is kept as redactedData) and the reasoning blocks Roo
// Code stores for other providers (text, summary, encrypted_content).
func thinkingPart(b block) compact.Part {
	p := compact.Part{Type: compact.PartThinking}
	switch b.typ {
	case "thinking":
		p.Thinking = b.str("thinking")
		p.Extra = extras(b.fields, partKeys, "type", "thinking", "signature")
		if sig, ok := b.fields["signature"]; ok {
			if p.Extra == nil {
				p.Extra = map[string]json.RawMessage{}
			}
			p.Extra["thinkingSignature"] = sig
		}
	case "redacted_thinking":
		p.Extra = extras(b.fields, partKeys, "type", "data")
		if d, ok := b.fields["data"]; ok {
			if p.Extra == nil {
				p.Extra = map[string]json.RawMessage{}
			}
			p.Extra["redactedData"] = d
		}
	default: // reasoning
		p.Thinking = b.str("text")
		p.Extra = extras(b.fields, partKeys, "type", "text")
	}
	return p
}

// toolResultParts returns the content of a tool_result block as parts: a
// string becomes one text part, an array its text and image blocks. Other
// blocks inside are returned as unknown.
func toolResultParts(b block) (parts []compact.Part, unknown []json.RawMessage, err error) {
	blocks, err := decodeContent(b.fields["content"])
	if err != nil {
		return nil, nil, fmt.Errorf("field content: %w", err)
	}
	for _, x := range blocks {
		switch x.typ {
		case "text":
			parts = append(parts, textPart(x))
		case "image":
			if p, ok := imagePart(x); ok {
				parts = append(parts, p)
				continue
			}
			unknown = append(unknown, x.raw)
		default:
			unknown = append(unknown, x.raw)
		}
	}
	return parts, unknown, nil
}
