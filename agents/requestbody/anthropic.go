package requestbody

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
)

// anthropicMessage maps the i-th message of a Messages API body. A user
// message's tool_result blocks become tool result messages first, its
// other blocks one user message after them. Errors start with the path
// inside the message.
func (r *reader) anthropicMessage(i int, rec jsonrec.Element) error {
	fields, err := jsonrec.Fields(rec.Raw)
	if err != nil {
		return err
	}
	var role string
	if err := jsonrec.String(fields, "role", &role); err != nil {
		return err
	}
	switch role {
	case "user", "assistant":
	case "":
		return fmt.Errorf(".role: missing")
	default:
		r.t.Unknown[role]++
		r.custom(role, rec.Raw)
		return nil
	}
	blocks, err := anthropicBlocks(fields["content"])
	if err != nil {
		return err
	}
	where := fmt.Sprintf("%d: messages[%d]", jsonrec.Line(r.data, rec.Off), i)
	m := &compact.Message{Role: compact.RoleUser, Extra: jsonrec.Extras(fields, "role", "content")}
	if role == "assistant" {
		m.Role = compact.RoleAssistant
	}
	for j, b := range blocks {
		var typ string
		if err := jsonrec.String(b.f, "type", &typ); err != nil {
			return fmt.Errorf(".content[%d]%w", j, err)
		}
		if typ == "tool_result" && role == "user" {
			res, err := r.anthropicResult(b.f)
			if err != nil {
				return fmt.Errorf(".content[%d]%w", j, err)
			}
			r.result(res, fmt.Sprintf("%s.content[%d]", where, j), "tool_use_id")
			continue
		}
		part, err := r.anthropicPart(typ, b, role == "assistant")
		if err != nil {
			return fmt.Errorf(".content[%d]%w", j, err)
		}
		m.Content = append(m.Content, part)
	}
	if m.Role == compact.RoleAssistant {
		m.StopReason = stopReason(m)
		r.add(m)
	} else if len(m.Content) > 0 || len(blocks) == 0 || m.Extra != nil {
		r.addUser(m)
	}
	return nil
}

// block is one content block: its members, and its bytes as sent.
type block struct {
	f   map[string]json.RawMessage
	raw json.RawMessage
}

// anthropicBlocks returns a content as blocks: a string is one text block.
func anthropicBlocks(raw json.RawMessage) ([]block, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, fmt.Errorf(".content: missing")
	}
	if raw[0] == '"' {
		return []block{{f: map[string]json.RawMessage{"type": json.RawMessage(`"text"`), "text": raw}, raw: raw}}, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(raw, &raws); err != nil {
		return nil, fmt.Errorf(".content: neither a string nor an array of blocks")
	}
	out := make([]block, len(raws))
	for j, b := range raws {
		if err := json.Unmarshal(b, &out[j].f); err != nil || out[j].f == nil {
			return nil, fmt.Errorf(".content[%d]: not a JSON object", j)
		}
		out[j].raw = b
	}
	return out, nil
}

// anthropicPart maps a content block other than a user's tool_result.
func (r *reader) anthropicPart(typ string, blk block, assistant bool) (compact.Part, error) {
	b, raw := blk.f, blk.raw
	switch typ {
	case "text":
		var s string
		if err := jsonrec.String(b, "text", &s); err != nil {
			return compact.Part{}, err
		}
		return compact.Part{Type: compact.PartText, Text: s, Extra: jsonrec.Extras(b, "type", "text")}, nil
	case "thinking":
		var s string
		if err := jsonrec.String(b, "thinking", &s); err != nil {
			return compact.Part{}, err
		}
		extra := jsonrec.Extras(b, "type", "thinking", "signature")
		if sig, ok := b["signature"]; ok {
			extra = jsonrec.Set(extra, "thinkingSignature", sig)
		}
		return compact.Part{Type: compact.PartThinking, Thinking: s, Extra: extra}, nil
	case "redacted_thinking":
		extra := jsonrec.Extras(b, "type", "data")
		extra = jsonrec.Set(extra, "redacted", json.RawMessage("true"))
		if data, ok := b["data"]; ok {
			extra = jsonrec.Set(extra, "thinkingSignature", data)
		}
		return compact.Part{Type: compact.PartThinking, Thinking: "[Reasoning redacted]", Extra: extra}, nil
	case "image":
		var src struct {
			Type      string `json:"type"`
			MediaType string `json:"media_type"`
			Data      string `json:"data"`
			URL       string `json:"url"`
		}
		_ = json.Unmarshal(b["source"], &src)
		if src.Type == "base64" {
			return compact.Part{Type: compact.PartImage, Extra: jsonrec.Extras(b, "type", "source"), Image: &compact.Image{MimeType: src.MediaType, Data: src.Data}}, nil
		}
		text := ""
		if src.URL != "" {
			text = "[image: " + src.URL + "]"
		}
		return r.placeholder("image", text, raw), nil
	case "tool_use":
		if !assistant {
			break
		}
		var id, name string
		if err := jsonrec.String(b, "id", &id); err != nil {
			return compact.Part{}, err
		}
		if err := jsonrec.String(b, "name", &name); err != nil {
			return compact.Part{}, err
		}
		if id == "" {
			return compact.Part{}, fmt.Errorf(".id: missing")
		}
		args := bytes.TrimSpace(b["input"])
		if len(args) == 0 || jsonrec.IsNull(args) {
			args = json.RawMessage("{}")
		} else if args[0] != '{' {
			return compact.Part{}, fmt.Errorf(".input: not an object")
		}
		tc := &compact.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
		r.call(tc)
		return compact.Part{Type: compact.PartToolCall, ToolCall: tc, Extra: jsonrec.Extras(b, "type", "id", "name", "input")}, nil
	case "":
		return compact.Part{}, fmt.Errorf(".type: missing")
	}
	return r.placeholder(typ, "", raw), nil
}

// anthropicResult maps a tool_result block onto a tool result message.
func (r *reader) anthropicResult(b map[string]json.RawMessage) (*compact.Message, error) {
	var id string
	if err := jsonrec.String(b, "tool_use_id", &id); err != nil {
		return nil, err
	}
	m := &compact.Message{Role: compact.RoleToolResult, ToolCallID: id, Extra: jsonrec.Extras(b, "type", "tool_use_id", "content", "is_error")}
	if raw, ok := b["is_error"]; ok && !jsonrec.IsNull(raw) {
		if err := json.Unmarshal(raw, &m.IsError); err != nil {
			return nil, fmt.Errorf(".is_error: not a boolean")
		}
	}
	content := bytes.TrimSpace(b["content"])
	if len(content) == 0 || jsonrec.IsNull(content) {
		return m, nil
	}
	blocks, err := anthropicBlocks(content)
	if err != nil {
		return nil, err
	}
	for j, blk := range blocks {
		var typ string
		if err := jsonrec.String(blk.f, "type", &typ); err != nil {
			return nil, fmt.Errorf(".content[%d]%w", j, err)
		}
		part, err := r.anthropicPart(typ, blk, false)
		if err != nil {
			return nil, fmt.Errorf(".content[%d]%w", j, err)
		}
		m.Content = append(m.Content, part)
	}
	return m, nil
}
