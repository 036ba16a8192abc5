package sweagent

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
)

// builder holds the state of one Read.
type builder struct {
	name  string
	data  []byte
	t     *compact.Transcript
	calls map[string]string // tool call id -> tool name

	// ids gives each entry an id derived from pos, the place in the file
	// of the member or history item being read, and src, its bytes.
	ids jsonrec.IDs
	pos string
	src []byte
}

// at sets the member or history item the next entries are read from.
func (r *builder) at(pos string, src []byte) { r.pos, r.src = pos, src }

// entry appends e with its id.
func (r *builder) entry(e *compact.Entry) {
	e.ID = r.ids.Derive(r.pos, r.src)
	r.t.Entries = append(r.t.Entries, e)
}

// custom appends a custom entry of the given record type.
func (r *builder) custom(typ string, data json.RawMessage) {
	r.entry(&compact.Entry{Kind: compact.KindCustom, Meta: &compact.EntryMeta{CustomType: Format + ":" + typ, Data: data}})
}

// add appends a message entry.
func (r *builder) add(m *compact.Message) {
	r.entry(&compact.Entry{Kind: compact.KindMessage, Message: m})
}

// item maps one history item. Errors start with the path inside it.
func (r *builder) item(it jsonrec.Element) error {
	f, err := jsonrec.Fields(it.Raw)
	if err != nil {
		return err
	}
	var role string
	if err := jsonrec.String(f, "role", &role); err != nil {
		return err
	}
	switch role {
	case "system":
		r.custom("system", it.Raw)
		return nil
	case "user":
		parts, err := r.content(f["content"])
		if err != nil {
			return err
		}
		r.add(&compact.Message{Role: compact.RoleUser, Content: parts, Extra: jsonrec.Extras(f, "role", "content")})
		return nil
	case "assistant":
		return r.assistant(f)
	case "tool":
		return r.tool(f, it)
	case "":
		return fmt.Errorf(".role: missing")
	}
	r.t.Unknown[role]++
	r.custom(role, it.Raw)
	return nil
}

// assistant maps an assistant item: thinking blocks, the content, then
// the tool calls.
func (r *builder) assistant(f map[string]json.RawMessage) error {
	m := &compact.Message{Role: compact.RoleAssistant, Extra: jsonrec.Extras(f, "role", "content", "tool_calls", "thinking_blocks")}
	if raw := f["thinking_blocks"]; !jsonrec.IsEmpty(raw) {
		var blocks []map[string]json.RawMessage
		if err := json.Unmarshal(raw, &blocks); err != nil {
			return fmt.Errorf(".thinking_blocks: not an array of objects")
		}
		for j, b := range blocks {
			var typ, text string
			if err := jsonrec.String(b, "type", &typ); err != nil {
				return fmt.Errorf(".thinking_blocks[%d]%w", j, err)
			}
			if err := jsonrec.String(b, "thinking", &text); err != nil {
				return fmt.Errorf(".thinking_blocks[%d]%w", j, err)
			}
			extra := jsonrec.Extras(b, "type", "thinking", "signature", "data")
			if sig, ok := b["signature"]; ok {
				extra = jsonrec.Set(extra, "thinkingSignature", sig)
			}
			if typ == "redacted_thinking" {
				text = "[Reasoning redacted]"
				extra = jsonrec.Set(extra, "redacted", json.RawMessage("true"))
				if data, ok := b["data"]; ok {
					extra = jsonrec.Set(extra, "thinkingSignature", data)
				}
			}
			m.Content = append(m.Content, compact.Part{Type: compact.PartThinking, Thinking: text, Extra: extra})
		}
	}
	parts, err := r.content(f["content"])
	if err != nil {
		return err
	}
	for _, p := range parts {
		if p.Type == compact.PartText && p.Text == "" && p.Extra == nil {
			continue
		}
		m.Content = append(m.Content, p)
	}
	if err := jsonrec.EachObject(f, "tool_calls", func(c map[string]json.RawMessage) error {
		part, err := r.call(c)
		m.Content = append(m.Content, part)
		return err
	}); err != nil {
		return err
	}
	m.StopReason = compact.StopEnd
	if len(m.ToolCalls()) > 0 {
		m.StopReason = compact.StopToolUse
	}
	if demo := f["is_demo"]; string(demo) != "true" {
		m.Model = r.t.Model
	}
	r.add(m)
	return nil
}

// call maps one tool call {id, type, function{name, arguments}}.
func (r *builder) call(c map[string]json.RawMessage) (compact.Part, error) {
	var id, name, args string
	if err := jsonrec.String(c, "id", &id); err != nil {
		return compact.Part{}, err
	}
	if id == "" {
		return compact.Part{}, fmt.Errorf(".id: missing")
	}
	fn, err := jsonrec.Fields(c["function"])
	if err != nil {
		return compact.Part{}, fmt.Errorf(".function%w", err)
	}
	if err := jsonrec.String(fn, "name", &name); err != nil {
		return compact.Part{}, fmt.Errorf(".function%w", err)
	}
	var arguments json.RawMessage
	if raw := bytes.TrimSpace(fn["arguments"]); len(raw) > 0 && raw[0] == '{' {
		arguments = raw // already an object
	} else {
		if err := jsonrec.String(fn, "arguments", &args); err != nil {
			return compact.Part{}, fmt.Errorf(".function%w", err)
		}
		var ok bool
		if arguments, ok = jsonrec.Arguments(args); !ok {
			r.t.Warnings = append(r.t.Warnings, jsonrec.ArgumentsWarning(r.name, id))
		}
	}
	extra := jsonrec.Extras(c, "id", "type", "function")
	var typ string
	if jsonrec.String(c, "type", &typ) == nil && typ != "" && typ != "function" {
		extra = jsonrec.Set(extra, "callType", c["type"])
	}
	tc := &compact.ToolCall{ID: id, Name: name, Arguments: arguments}
	r.calls[id] = name
	return compact.Part{Type: compact.PartToolCall, ToolCall: tc, Extra: extra}, nil
}

// tool maps a tool item: the result of the call its tool_call_ids name,
// or, when that call is not in the history, a harness note (see
// compact.OrphanResult) and a warning.
func (r *builder) tool(f map[string]json.RawMessage, it jsonrec.Element) error {
	var ids []string
	if raw := f["tool_call_ids"]; !jsonrec.IsNull(raw) && raw != nil {
		if err := json.Unmarshal(raw, &ids); err != nil {
			return fmt.Errorf(".tool_call_ids: not an array of strings")
		}
	}
	parts, err := r.content(f["content"])
	if err != nil {
		return err
	}
	id := ""
	if len(ids) > 0 {
		id = ids[0]
	}
	name, ok := r.calls[id]
	if !ok {
		r.t.Warnings = append(r.t.Warnings, fmt.Sprintf("%s:%d: tool result for call %q, which the history does not hold: kept as a harness note", r.name, jsonrec.Line(r.data, it.Off), id))
		r.add(compact.OrphanResult(Format, &compact.Message{Role: compact.RoleToolResult, ToolCallID: id, Content: parts, Extra: jsonrec.Extras(f, "role", "content")}))
		return nil
	}
	extra := jsonrec.Extras(f, "role", "content", "tool_call_ids")
	if len(ids) > 1 {
		// SWE-agent writes one id per observation; keep any others.
		extra = jsonrec.Set(extra, "tool_call_ids", f["tool_call_ids"])
	}
	r.add(&compact.Message{Role: compact.RoleToolResult, ToolCallID: id, ToolName: name, Content: parts, Extra: extra})
	return nil
}

// content maps an item's content: a string, or a list of parts (text,
// image_url with a data: URL; any other part stays a text part "[type]"
// holding the part under its "part" extra).
func (r *builder) content(raw json.RawMessage) ([]compact.Part, error) {
	return jsonrec.Content(raw, "a list", r.part)
}

// part maps one element of a content list.
func (r *builder) part(p json.RawMessage) (compact.Part, error) {
	f, err := jsonrec.Fields(p)
	if err != nil {
		return compact.Part{}, err
	}
	var typ, text string
	if err := jsonrec.String(f, "type", &typ); err != nil {
		return compact.Part{}, err
	}
	switch typ {
	case "text":
		if err := jsonrec.String(f, "text", &text); err != nil {
			return compact.Part{}, err
		}
		return compact.Part{Type: compact.PartText, Text: text, Extra: jsonrec.Extras(f, "type", "text")}, nil
	case "image_url":
		var img struct {
			URL string `json:"url"`
		}
		_ = json.Unmarshal(f["image_url"], &img)
		if mime, data, ok := jsonrec.SplitDataURL(img.URL); ok {
			return compact.Part{Type: compact.PartImage, Extra: jsonrec.Extras(f, "type", "image_url"), Image: &compact.Image{MimeType: mime, Data: data}}, nil
		}
	case "":
		return compact.Part{}, fmt.Errorf(".type: missing")
	}
	r.t.Unknown[typ+" part"]++
	return compact.Part{Type: compact.PartText, Text: "[" + typ + "]", Extra: map[string]json.RawMessage{"part": p}}, nil
}
