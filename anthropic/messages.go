package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
)

// This file is the one mapping between the Messages API's content blocks
// and compact's messages. The proxy (to measure and summarize a request it
// forwards unchanged), the request-body reader and the Claude Code reader
// all call it, so that a conversation is measured and summarized the same
// whichever door it came through. The reverse direction, compact to the
// wire, is wireRequest in wire.go: a summary request is one user prompt.
//
// The mapping, block by block (members it does not model stay in
// Part.Extra under their names, cache_control and citations included):
//
//   - text: a text part.
//   - thinking: a thinking part; the signature goes to the
//     "thinkingSignature" extra, where a pi session keeps it.
//   - redacted_thinking: a thinking part whose text is RedactedThinking,
//     with the extras "redacted": true and "thinkingSignature" holding the
//     encrypted data, as pi stores it. The reasoning happened and the
//     model is sent it back, but nobody can read it: the marker measures
//     as a few tokens (the provider's reported usage, which the
//     calibrator learns from, accounts for the rest) and tells a summary
//     that reasoning took place here without inventing its content.
//   - tool_use: a tool-call part. An absent or null input is {}; an input
//     that is not a JSON object (the API asks for one, but a transcript
//     may hold anything) is wrapped as {"input": <value>}, so that
//     Arguments stays an object and the value is still measured. A
//     tool_use without an id is an error.
//   - image: an image part; a base64 source fills Image, any other
//     source (url, file) leaves Image nil and keeps "source" in Extra.
//     Either way it is measured as an image and summarized as "[image]".
//   - tool_result, in a user message: a tool result message of its own
//     (see Content); its content, a string or blocks, mapped by these
//     same rules, is_error into IsError.
//   - any other block (document, search_result, server_tool_use and the
//     server tools' results, mcp_tool_use, a tool_result outside a user
//     message, types yet to come): a text part holding what a reader
//     can make of it (see Unmodelled), with the block as sent in the
//     BlockExtra extra. A document or a web search costs tokens and says
//     things a summary needs; dropping it would hide both.

// RedactedThinking is the text of the thinking part a redacted_thinking
// block becomes.
const RedactedThinking = "[Reasoning redacted]"

// BlockExtra is the Part.Extra key under which the part standing for a
// block this package does not model keeps that block, as sent.
const BlockExtra = "anthropicBlock"

// Block is one content block of a Messages API message.
type Block struct {
	// Type is the block's "type" member.
	Type string
	// Fields holds every member of the block, as sent.
	Fields map[string]json.RawMessage
	// Raw is the block as sent; for a string content, the JSON string.
	// Blocks leaves it nil for the block types Part models (text,
	// thinking, redacted_thinking, tool_use, image, tool_result), whose
	// members are all in Fields.
	Raw json.RawMessage
}

// Blocks decodes a message's "content": a string is one text block, an
// array is its blocks in order, absent or null is no block. Anything else
// is an error whose text starts with the path below content (":", or
// "[N].type: ..."), so that callers can prefix where content stands.
func Blocks(content json.RawMessage) ([]Block, error) {
	content = bytes.TrimSpace(content)
	if len(content) == 0 || jsonrec.IsNull(content) {
		return nil, nil
	}
	if content[0] == '"' {
		// Part reads (and checks) the string.
		return []Block{{Type: "text", Fields: map[string]json.RawMessage{"type": json.RawMessage(`"text"`), "text": content}, Raw: content}}, nil
	}
	// One pass for the members; the blocks' own bytes are only needed,
	// in a second pass, for a block Part does not model (or to say which
	// element is not an object).
	var fields []map[string]json.RawMessage
	if content[0] != '[' || json.Unmarshal(content, &fields) != nil {
		var any []json.RawMessage
		if content[0] != '[' || json.Unmarshal(content, &any) != nil {
			return nil, fmt.Errorf(": want a string or an array of blocks, have %s", abbrev(content))
		}
		for j, raw := range any {
			if raw = bytes.TrimSpace(raw); len(raw) == 0 || raw[0] != '{' {
				return nil, fmt.Errorf("[%d]: want an object, have %s", j, abbrev(raw))
			}
		}
		return nil, fmt.Errorf(": want a string or an array of blocks, have %s", abbrev(content))
	}
	out := make([]Block, len(fields))
	needRaw := false
	for j, f := range fields {
		if f == nil {
			return nil, fmt.Errorf("[%d]: want an object, have null", j)
		}
		var typ string
		if err := str(f, "type", &typ); err != nil {
			return nil, fmt.Errorf("[%d]%w", j, err)
		}
		if typ == "" {
			return nil, fmt.Errorf("[%d].type: missing", j)
		}
		out[j] = Block{Type: typ, Fields: f}
		needRaw = needRaw || !modelled[typ]
	}
	if needRaw {
		var raws []json.RawMessage
		_ = json.Unmarshal(content, &raws)
		for j := range out {
			if j < len(raws) {
				out[j].Raw = raws[j]
			}
		}
	}
	return out, nil
}

// modelled are the block types Part maps onto a part of their own; the
// others become text parts that keep the block as sent.
var modelled = map[string]bool{"text": true, "thinking": true, "redacted_thinking": true, "tool_use": true, "image": true, "tool_result": true}

// Content maps the content of one Messages API message of the given role
// onto compact messages, in the order of its blocks: each tool_result
// block of a user message becomes a tool result message, and each run of
// other blocks one message of role (compact.RoleUser or
// compact.RoleAssistant). A message with no block other than tool
// results gives only those; one with no blocks at all gives one empty
// message of role. The API wants a user message's tool results before
// its text, so a valid request gives the results first.
//
// Errors give the path inside the message (".content[2].text: want a
// string, have 5"): prefix where the message stands.
func Content(role compact.Role, content json.RawMessage) ([]*compact.Message, error) {
	blocks, err := Blocks(content)
	if err != nil {
		return nil, fmt.Errorf(".content%w", err)
	}
	var out []*compact.Message
	var cur *compact.Message
	for j, b := range blocks {
		if b.Type == "tool_result" && role == compact.RoleUser {
			m, err := ToolResult(b)
			if err != nil {
				return nil, fmt.Errorf(".content[%d]%w", j, err)
			}
			out = append(out, m)
			cur = nil
			continue
		}
		p, err := Part(b)
		if err != nil {
			return nil, fmt.Errorf(".content[%d]%w", j, err)
		}
		if cur == nil {
			cur = &compact.Message{Role: role, Content: make([]compact.Part, 0, len(blocks)-j)}
			out = append(out, cur)
		}
		cur.Content = append(cur.Content, p)
	}
	if len(out) == 0 {
		out = append(out, &compact.Message{Role: role})
	}
	return out, nil
}

// Part maps one content block onto a compact part (see the rules at the
// top of this file; a tool_result given here is a block the mapping does
// not model, since only a user message's results are answers). Errors
// name the member at fault (".text: want a string, have 5").
func Part(b Block) (compact.Part, error) {
	f := b.Fields
	switch b.Type {
	case "text":
		var s string
		if err := str(f, "text", &s); err != nil {
			return compact.Part{}, err
		}
		return compact.Part{Type: compact.PartText, Text: s, Extra: jsonrec.Extras(f, "type", "text")}, nil
	case "thinking":
		var s string
		if err := str(f, "thinking", &s); err != nil {
			return compact.Part{}, err
		}
		extra := jsonrec.Extras(f, "type", "thinking", "signature")
		if sig, ok := f["signature"]; ok {
			extra = jsonrec.Set(extra, "thinkingSignature", sig)
		}
		return compact.Part{Type: compact.PartThinking, Thinking: s, Extra: extra}, nil
	case "redacted_thinking":
		extra := jsonrec.Set(jsonrec.Extras(f, "type", "data"), "redacted", json.RawMessage("true"))
		if data, ok := f["data"]; ok {
			extra["thinkingSignature"] = data
		}
		return compact.Part{Type: compact.PartThinking, Thinking: RedactedThinking, Extra: extra}, nil
	case "tool_use":
		var id, name string
		if err := str(f, "id", &id); err != nil {
			return compact.Part{}, err
		}
		if err := str(f, "name", &name); err != nil {
			return compact.Part{}, err
		}
		if id == "" {
			return compact.Part{}, fmt.Errorf(".id: missing")
		}
		return compact.Part{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: id, Name: name, Arguments: arguments(f["input"])},
			Extra: jsonrec.Extras(f, "type", "id", "name", "input")}, nil
	case "image":
		raw, ok := f["source"]
		if !ok || jsonrec.IsNull(raw) {
			return compact.Part{Type: compact.PartImage, Extra: jsonrec.Extras(f, "type", "source")}, nil
		}
		var src struct {
			Type      string `json:"type"`
			MediaType string `json:"media_type"`
			Data      string `json:"data"`
		}
		if err := json.Unmarshal(raw, &src); err != nil || bytes.TrimSpace(raw)[0] != '{' {
			return compact.Part{}, fmt.Errorf(".source: want an object with string members, have %s", abbrev(raw))
		}
		if src.Type == "base64" {
			return compact.Part{Type: compact.PartImage, Image: &compact.Image{MimeType: src.MediaType, Data: src.Data},
				Extra: jsonrec.Extras(f, "type", "source")}, nil
		}
		return compact.Part{Type: compact.PartImage, Extra: jsonrec.Extras(f, "type")}, nil
	}
	if b.Raw == nil {
		// A tool_result outside a user message: Blocks kept no bytes for
		// it; its members, re-encoded, say the same.
		b.Raw, _ = json.Marshal(b.Fields)
	}
	return compact.Part{Type: compact.PartText, Text: Unmodelled(b), Extra: map[string]json.RawMessage{BlockExtra: b.Raw}}, nil
}

// arguments returns a tool_use input as a call's arguments: {} when
// absent or null, the object as sent, any other value as {"input": value}.
func arguments(input json.RawMessage) json.RawMessage {
	input = bytes.TrimSpace(input)
	switch {
	case len(input) == 0 || jsonrec.IsNull(input):
		return json.RawMessage("{}")
	case input[0] == '{':
		return input
	}
	out := make([]byte, 0, len(input)+10)
	out = append(out, `{"input":`...)
	out = append(out, input...)
	return append(out, '}')
}

// ToolResult maps a tool_result block onto a tool result message:
// ToolCallID from tool_use_id, IsError from is_error, the content (a
// string, or blocks mapped by Part) as its parts, none when absent or
// null. Its other members (cache_control, ...) go to Message.Extra.
// ToolName is left for the caller, which knows the calls before it.
func ToolResult(b Block) (*compact.Message, error) {
	f := b.Fields
	m := &compact.Message{Role: compact.RoleToolResult, Extra: jsonrec.Extras(f, "type", "tool_use_id", "content", "is_error")}
	if err := str(f, "tool_use_id", &m.ToolCallID); err != nil {
		return nil, err
	}
	if raw, ok := f["is_error"]; ok && !jsonrec.IsNull(raw) {
		if err := json.Unmarshal(raw, &m.IsError); err != nil {
			return nil, fmt.Errorf(".is_error: want true or false, have %s", abbrev(raw))
		}
	}
	blocks, err := Blocks(f["content"])
	if err != nil {
		return nil, fmt.Errorf(".content%w", err)
	}
	if len(blocks) > 0 {
		m.Content = make([]compact.Part, 0, len(blocks))
	}
	for j, ib := range blocks {
		p, err := Part(ib)
		if err != nil {
			return nil, fmt.Errorf(".content[%d]%w", j, err)
		}
		m.Content = append(m.Content, p)
	}
	return m, nil
}

// UnmodelledType returns the type of the block p stands for when p is
// the text part of a block the mapping does not model (see BlockExtra),
// "" for any other part: what a reader counts among the things it did
// not know.
func UnmodelledType(p compact.Part) string {
	raw, ok := p.Extra[BlockExtra]
	if !ok {
		return ""
	}
	var b struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(raw, &b)
	return b.Type
}

// Unmodelled is the text of the part standing for a block the mapping
// does not model: "[<type>]" (for a server or MCP tool call "[<name>
// <input>]"), then, a line each, the readable strings the block holds
// (titles, URLs, text, a text document's data, a command's output), in
// order. Encrypted content, signatures and base64 data are not readable
// and are left out.
func Unmodelled(b Block) string {
	var sb strings.Builder
	switch b.Type {
	case "server_tool_use", "mcp_tool_use":
		var name string
		_ = json.Unmarshal(b.Fields["name"], &name)
		sb.WriteString("[" + name + " " + string(bytes.TrimSpace(b.Fields["input"])) + "]")
	default:
		sb.WriteString("[" + b.Type + "]")
		var v any
		if json.Unmarshal(b.Raw, &v) == nil {
			readable(v, &sb)
		}
	}
	return sb.String()
}

// readableKeys are the members whose string values a reader of a block
// can use; "data" counts only in a text source ({"type":"text","data"}).
var readableKeys = map[string]bool{
	"text": true, "title": true, "url": true, "source": true, "content": true,
	"context": true, "stdout": true, "stderr": true, "error_code": true, "cited_text": true,
}

// readable appends the readable strings of a decoded JSON value to sb,
// each on its own line, in document order.
func readable(v any, sb *strings.Builder) {
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			readable(e, sb)
		}
	case map[string]any:
		textSource := v["type"] == "text"
		for _, k := range sortedKeys(v) {
			switch e := v[k].(type) {
			case string:
				if e != "" && (readableKeys[k] || k == "data" && textSource) {
					sb.WriteString("\n" + e)
				}
			case map[string]any, []any:
				if k != "citations" && k != "input" && k != "cache_control" {
					readable(e, sb)
				}
			}
		}
	}
}

// sortedKeys returns the keys of an object in a fixed order: the ones
// naming the block first (title, url, source), then the rest by name.
func sortedKeys(v map[string]any) []string {
	keys := make([]string, 0, len(v))
	for _, k := range [...]string{"title", "url", "source"} {
		if _, ok := v[k]; ok {
			keys = append(keys, k)
		}
	}
	rest := len(keys)
	for k := range v {
		if k != "title" && k != "url" && k != "source" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys[rest:])
	return keys
}

// str reads the string member key of f into dst: absent or null leaves
// dst as it is, another kind of value is the error ".key: want a string,
// have <value>".
func str(f map[string]json.RawMessage, key string, dst *string) error {
	raw, ok := f[key]
	if !ok || jsonrec.IsNull(raw) {
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf(".%s: want a string, have %s", key, abbrev(raw))
	}
	return nil
}

// abbrev quotes a value in an error: its start (jsonrec.Abbrev), on one
// line however the body was printed.
func abbrev(raw []byte) string {
	return strings.Join(strings.Fields(jsonrec.Abbrev(raw)), " ")
}
