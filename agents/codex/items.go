package codex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
)

// isItemType reports whether t is a response item type this package
// reads (used to recognise the bare items of early rollouts).
func isItemType(t string) bool {
	switch t {
	case "message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
		"custom_tool_call_output", "local_shell_call", "web_search_call", "ghost_snapshot",
		"compaction", "compaction_summary", "tool_search_call", "tool_search_output",
		"image_generation_call", "context_compaction", "compaction_trigger", "agent_message",
		"additional_tools":
		return true
	}
	return false
}

// item converts a response item.
func (b *builder) item(r *record) error {
	p := r.payload
	switch r.ptype {
	case "message":
		role, err := jsonrec.OptString(p, "role")
		if err != nil {
			return fmt.Errorf("field payload.%w", trimField(err))
		}
		parts, err := contentParts(p["content"])
		if err != nil {
			return fmt.Errorf("field payload.content%w", err)
		}
		extra := itemExtra(r, "type", "role", "content")
		if role == "assistant" {
			m := b.open(r)
			for i := range parts {
				parts[i].Extra = merge(parts[i].Extra, extra)
			}
			m.Content = append(m.Content, parts...)
			return nil
		}
		b.close()
		m := &compact.Message{Role: compact.RoleUser, Content: parts, Timestamp: jsonrec.Millis(r.timestamp), Extra: extra}
		if role != "user" {
			m.Extra = setExtra(m.Extra, "codexRole", quote(role))
		}
		tag := injected(parts)
		if tag != "" {
			m.Extra = setExtra(m.Extra, "codexInjected", quote(tag))
		}
		if role == "user" && tag == "" {
			b.turns = append(b.turns, len(b.t.Entries))
		} else {
			// Codex's own context and developer instructions: a harness
			// note, which the model still sees as user text and a summary
			// never quotes as the user's request.
			kind := tag
			if kind == "" {
				kind = role
			}
			m.MarkHarnessNote(Format, strings.ReplaceAll(kind, " ", "_"))
		}
		b.add(&compact.Entry{Kind: compact.KindMessage, Message: m}, r)
		return nil
	case "reasoning":
		part := compact.Part{Type: compact.PartThinking, Extra: itemExtra(r, "type", "summary")}
		if raw, ok := p["summary"]; ok && !jsonrec.IsNull(raw) {
			texts, err := itemTexts(raw)
			if err != nil {
				return fmt.Errorf("field payload.summary%w", err)
			}
			part.Thinking = strings.Join(texts, "\n\n")
			if len(texts) != 1 {
				part.Extra = setExtra(part.Extra, "summary", raw)
			}
		}
		if raw, ok := p["content"]; ok && !jsonrec.IsNull(raw) && part.Thinking == "" {
			// Models whose reasoning is readable (served by other
			// providers) store it as content, with no summary; the raw
			// content stays in Extra.
			texts, err := itemTexts(raw)
			if err != nil {
				return fmt.Errorf("field payload.content%w", err)
			}
			part.Thinking = strings.Join(texts, "\n\n")
		}
		m := b.open(r)
		m.Content = append(m.Content, part)
		return nil
	case "tool_search_call":
		// A search the client runs has a call_id and an output to pair;
		// one the server ran has neither.
		if id, _ := jsonrec.OptString(p, "call_id"); id == "" {
			b.open(r)
			b.custom(r, r.ptype)
			return nil
		}
		part, err := b.call(r)
		if err != nil {
			return err
		}
		m := b.open(r)
		m.Content = append(m.Content, part)
		return nil
	case "tool_search_output":
		if id, _ := jsonrec.OptString(p, "call_id"); id == "" || b.calls[id] == "" {
			b.custom(r, r.ptype)
			return nil
		}
		b.close()
		return b.output(r)
	case "function_call", "custom_tool_call", "local_shell_call":
		part, err := b.call(r)
		if err != nil {
			return err
		}
		m := b.open(r)
		m.Content = append(m.Content, part)
		return nil
	case "function_call_output", "custom_tool_call_output":
		b.close()
		return b.output(r)
	case "web_search_call", "image_generation_call":
		// Tools the provider ran itself: part of the response, with no
		// output for the model to pair.
		b.open(r)
		b.custom(r, r.ptype)
		return nil
	case "ghost_snapshot", "compaction", "compaction_summary", "context_compaction", "compaction_trigger",
		"agent_message", "additional_tools":
		b.custom(r, r.ptype)
		return nil
	}
	kind := "response_item." + r.ptype
	b.unknown(kind)
	b.custom(r, kind)
	return nil
}

// call converts a function, custom tool or local shell call.
func (b *builder) call(r *record) (compact.Part, error) {
	p := r.payload
	id, err := jsonrec.OptString(p, "call_id")
	if err != nil {
		return compact.Part{}, fmt.Errorf("field payload.%w", trimField(err))
	}
	name, err := jsonrec.OptString(p, "name")
	if err != nil {
		return compact.Part{}, fmt.Errorf("field payload.%w", trimField(err))
	}
	var args json.RawMessage
	var extra map[string]json.RawMessage
	switch r.ptype {
	case "function_call":
		s, err := jsonrec.OptString(p, "arguments")
		if err != nil {
			return compact.Part{}, fmt.Errorf("field payload.%w", trimField(err))
		}
		args = objectArgs(s)
		if !bytes.Equal(args, []byte(s)) {
			extra = setExtra(extra, "codexArguments", quote(s))
		}
		extra = merge(extra, itemExtra(r, "type", "name", "arguments", "call_id"))
	case "custom_tool_call":
		in, err := jsonrec.OptString(p, "input")
		if err != nil {
			return compact.Part{}, fmt.Errorf("field payload.%w", trimField(err))
		}
		args, _ = json.Marshal(map[string]string{"input": in})
		extra = setExtra(itemExtra(r, "type", "name", "input", "call_id"), "codexCustomTool", json.RawMessage("true"))
	case "tool_search_call":
		if name == "" {
			name = "tool_search"
		}
		args = bytes.TrimSpace(p["arguments"])
		if len(args) == 0 || args[0] != '{' || !json.Valid(args) {
			args, _ = json.Marshal(map[string]json.RawMessage{"arguments": orNull(p["arguments"])})
		}
		extra = itemExtra(r, "type", "arguments", "call_id")
	case "local_shell_call":
		if id == "" {
			id, _ = jsonrec.OptString(p, "id")
		}
		if name == "" {
			name = "local_shell"
		}
		args = bytes.TrimSpace(p["action"])
		if len(args) == 0 || args[0] != '{' || !json.Valid(args) {
			args, _ = json.Marshal(map[string]json.RawMessage{"action": orNull(p["action"])})
		}
		extra = setExtra(itemExtra(r, "type", "name", "action", "call_id"), "codexLocalShell", json.RawMessage("true"))
	}
	if id == "" {
		return compact.Part{}, fmt.Errorf("field payload.call_id: missing")
	}
	b.calls[id] = name
	return compact.Part{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: id, Name: name, Arguments: args}, Extra: extra}, nil
}

// objectArgs returns s when it is a JSON object, else {"input": s}.
func objectArgs(s string) json.RawMessage {
	t := bytes.TrimSpace([]byte(s))
	if len(t) > 0 && t[0] == '{' && json.Valid(t) {
		return json.RawMessage(s)
	}
	out, _ := json.Marshal(map[string]string{"input": s})
	return out
}

// output converts a tool output into a tool result message.
func (b *builder) output(r *record) error {
	p := r.payload
	id, err := jsonrec.OptString(p, "call_id")
	if err != nil {
		return fmt.Errorf("field payload.%w", trimField(err))
	}
	m := &compact.Message{Role: compact.RoleToolResult, ToolCallID: id, Timestamp: jsonrec.Millis(r.timestamp),
		Extra: itemExtra(r, "type", "call_id", "output")}
	raw := bytes.TrimSpace(p["output"])
	if r.ptype == "tool_search_output" {
		// The tools found, as the JSON the model was given.
		m.Extra = itemExtra(r, "type", "call_id", "tools")
		raw, _ = json.Marshal(string(orNull(p["tools"])))
	}
	switch {
	case len(raw) == 0 || jsonrec.IsNull(raw):
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("field payload.output: %w", err)
		}
		m.Content = []compact.Part{{Type: compact.PartText, Text: s}}
	case raw[0] == '[':
		if m.Content, err = contentParts(raw); err != nil {
			return fmt.Errorf("field payload.output%w", err)
		}
	case raw[0] == '{':
		// Older versions: {content, success}, with content_items when an
		// MCP tool returned more than text.
		var o map[string]json.RawMessage
		if err := json.Unmarshal(raw, &o); err != nil {
			return fmt.Errorf("field payload.output: %w", err)
		}
		if items, ok := o["content_items"]; ok && !jsonrec.IsNull(items) {
			if m.Content, err = contentParts(items); err != nil {
				return fmt.Errorf("field payload.output.content_items%w", err)
			}
		} else {
			s, err := jsonrec.OptString(o, "content")
			if err != nil {
				return fmt.Errorf("field payload.output.%w", trimField(err))
			}
			m.Content = []compact.Part{{Type: compact.PartText, Text: s}}
		}
		if ok, err := jsonrec.OptBool(o, "success"); err == nil && !ok {
			if _, has := o["success"]; has && !jsonrec.IsNull(o["success"]) {
				m.IsError = true
			}
		}
		m.Extra = setExtra(m.Extra, "codexOutput", raw)
	default:
		return fmt.Errorf("field payload.output: want a string, an array or an object, have %s", jsonrec.Abbrev(raw))
	}
	name, ok := b.calls[id]
	if !ok {
		b.t.Warnings = append(b.t.Warnings, fmt.Sprintf("%s:%d: %s %q has no call before it; kept as a harness note", b.name, r.line, r.ptype, id))
		m.Extra = setExtra(m.Extra, "call_id", quote(id))
		m = compact.OrphanResult(Format, m)
	} else {
		m.ToolName = name
	}
	b.add(&compact.Entry{Kind: compact.KindMessage, Message: m}, r)
	return nil
}

// contentParts converts message content items (or a plain string). The
// error is the rest of a "field ..." message, starting with the index.
func contentParts(raw json.RawMessage) ([]compact.Part, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || jsonrec.IsNull(raw) {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf(": %w", err)
		}
		return []compact.Part{{Type: compact.PartText, Text: s}}, nil
	}
	var items []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf(": want an array of content items, have %s", jsonrec.Abbrev(raw))
	}
	parts := make([]compact.Part, 0, len(items))
	for i, it := range items {
		if it == nil {
			return nil, fmt.Errorf("[%d]: want an object", i)
		}
		typ, err := jsonrec.OptString(it, "type")
		if err != nil {
			return nil, fmt.Errorf("[%d].%w", i, trimField(err))
		}
		switch typ {
		case "input_text", "output_text", "text":
			s, err := jsonrec.OptString(it, "text")
			if err != nil {
				return nil, fmt.Errorf("[%d].%w", i, trimField(err))
			}
			extra := jsonrec.Extras(it, "type", "text")
			if typ != "input_text" {
				extra = setExtra(extra, "codexType", quote(typ))
			}
			parts = append(parts, compact.Part{Type: compact.PartText, Text: s, Extra: extra})
		case "input_image":
			url, err := jsonrec.OptString(it, "image_url")
			if err != nil {
				return nil, fmt.Errorf("[%d].%w", i, trimField(err))
			}
			if mime, data, ok := splitDataURL(url); ok {
				parts = append(parts, compact.Part{Type: compact.PartImage, Extra: jsonrec.Extras(it, "type", "image_url"), Image: &compact.Image{MimeType: mime, Data: data}})
			} else {
				// A link, not inline data: kept as it was.
				parts = append(parts, compact.Part{Type: compact.PartType(typ), Extra: jsonrec.Extras(it, "type")})
			}
		default:
			if typ == "" {
				typ = "unknown"
			}
			parts = append(parts, compact.Part{Type: compact.PartType(typ), Extra: jsonrec.Extras(it, "type")})
		}
	}
	return parts, nil
}

// itemTexts returns the text of each item of a summary or content list.
func itemTexts(raw json.RawMessage) ([]string, error) {
	var items []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf(": want an array, have %s", jsonrec.Abbrev(raw))
	}
	var out []string
	for i, it := range items {
		s, err := jsonrec.OptString(it, "text")
		if err != nil {
			return nil, fmt.Errorf("[%d].%w", i, trimField(err))
		}
		out = append(out, s)
	}
	return out, nil
}

// splitDataURL splits "data:<mime>;base64,<data>".
func splitDataURL(url string) (mime, data string, ok bool) {
	rest, found := strings.CutPrefix(url, "data:")
	if !found {
		return "", "", false
	}
	head, data, found := strings.Cut(rest, ",")
	if !found || !strings.HasSuffix(head, ";base64") {
		return "", "", false
	}
	mime, _, _ = strings.Cut(head, ";")
	return mime, data, true
}

// injectedTags are the blocks Codex puts into user messages itself.
var injectedTags = []struct{ prefix, tag string }{
	{"<environment_context>", "environment_context"},
	{"<user_instructions>", "user_instructions"},
	{"<permissions instructions>", "permissions instructions"},
	{"<collaboration_mode>", "collaboration_mode"},
	{"<user_shell_command>", "user_shell_command"},
	{"<turn_aborted>", "turn_aborted"},
	{"# AGENTS.md instructions", "AGENTS.md"},
}

// injected returns the tag of the context block a user message starts
// with, "" for a message the user wrote.
func injected(parts []compact.Part) string {
	for _, p := range parts {
		if p.Type != compact.PartText {
			continue
		}
		text := strings.TrimSpace(p.Text)
		for _, t := range injectedTags {
			if strings.HasPrefix(text, t.prefix) {
				return t.tag
			}
		}
		return ""
	}
	return ""
}

// itemExtra returns the payload members other than keys, with the
// line's own members beside timestamp, type and payload (an ordinal).
// The item's "id" becomes "itemId" so it cannot be taken for a tool
// call's id.
func itemExtra(r *record, keys ...string) map[string]json.RawMessage {
	var out map[string]json.RawMessage
	for k, v := range jsonrec.Extras(r.payload, keys...) {
		if k == "id" {
			k = "itemId"
		}
		out = setExtra(out, k, v)
	}
	if _, enveloped := r.fields["payload"]; enveloped {
		for k, v := range jsonrec.Extras(r.fields, "timestamp", "type", "payload") {
			out = setExtra(out, "codex."+k, v)
		}
	}
	return out
}

func setExtra(m map[string]json.RawMessage, k string, v json.RawMessage) map[string]json.RawMessage {
	if m == nil {
		m = make(map[string]json.RawMessage, 2)
	}
	m[k] = v
	return m
}

// merge adds the members of b to a.
func merge(a, b map[string]json.RawMessage) map[string]json.RawMessage {
	for k, v := range b {
		a = setExtra(a, k, v)
	}
	return a
}

// orNull returns raw, or the JSON null when it is missing.
func orNull(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

func quote(s string) json.RawMessage {
	out, _ := json.Marshal(s)
	return out
}
