package requestbody

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
)

// chatMessage maps the i-th message of a Chat Completions body. Errors
// start with the path inside the message (".content: ...").
func (r *reader) chatMessage(i int, rec jsonrec.Element) error {
	fields, err := jsonrec.Fields(rec.Raw)
	if err != nil {
		return err
	}
	var role string
	if err := jsonrec.String(fields, "role", &role); err != nil {
		return err
	}
	where := fmt.Sprintf("%d: messages[%d]", jsonrec.Line(r.data, rec.Off), i)
	switch role {
	case "system", "developer":
		r.custom("system", rec.Raw)
		return nil
	case "user":
		parts, err := r.chatContent(fields["content"])
		if err != nil {
			return err
		}
		r.addUser(&compact.Message{Role: compact.RoleUser, Content: parts, Extra: jsonrec.Extras(fields, "role", "content")})
		return nil
	case "assistant":
		return r.chatAssistant(fields)
	case "tool", "function":
		var id, name string
		if err := jsonrec.String(fields, "tool_call_id", &id); err != nil {
			return err
		}
		if err := jsonrec.String(fields, "name", &name); err != nil {
			return err
		}
		parts, err := r.chatContent(fields["content"])
		if err != nil {
			return err
		}
		key := "tool_call_id"
		if role == "function" {
			// The legacy function role answers the latest function_call,
			// which had no id: pair it with the number given to that call.
			id, key = fmt.Sprintf("function_call_%d", r.legacy), "function_call"
		}
		m := &compact.Message{Role: compact.RoleToolResult, ToolCallID: id, ToolName: name, Content: parts,
			Extra: jsonrec.Extras(fields, "role", "content", "tool_call_id", "name")}
		if role == "function" {
			m.Extra = jsonrec.Set(m.Extra, "legacyFunctionResult", json.RawMessage("true"))
		}
		r.result(m, where, key)
		return nil
	}
	if role == "" {
		return fmt.Errorf(".role: missing")
	}
	r.t.Unknown[role]++
	r.custom(role, rec.Raw)
	return nil
}

// chatAssistant maps an assistant message: reasoning, content, then the
// tool calls.
func (r *reader) chatAssistant(fields map[string]json.RawMessage) error {
	m := &compact.Message{Role: compact.RoleAssistant}
	known := []string{"role", "content", "tool_calls", "function_call"}
	for _, k := range [...]string{"reasoning_content", "reasoning"} {
		var s string
		if err := jsonrec.String(fields, k, &s); err != nil {
			// reasoning may be an object on some servers: keep it as is.
			continue
		}
		known = append(known, k)
		if s != "" {
			m.Content = append(m.Content, compact.Part{Type: compact.PartThinking, Thinking: s})
		}
	}
	parts, err := r.chatContent(fields["content"])
	if err != nil {
		return err
	}
	for _, p := range parts {
		if p.Type == compact.PartText && p.Text == "" && p.Extra == nil {
			continue // the empty string many clients send beside tool calls
		}
		m.Content = append(m.Content, p)
	}
	if err := jsonrec.EachObject(fields, "tool_calls", func(c map[string]json.RawMessage) error {
		part, err := r.chatCall(c)
		m.Content = append(m.Content, part)
		return err
	}); err != nil {
		return err
	}
	if raw, ok := fields["function_call"]; ok && !jsonrec.IsNull(raw) {
		var fc map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fc); err != nil {
			return fmt.Errorf(".function_call: not an object")
		}
		r.legacy++
		id, _ := json.Marshal(fmt.Sprintf("function_call_%d", r.legacy))
		part, err := r.chatCall(map[string]json.RawMessage{"id": id, "function": raw})
		if err != nil {
			return fmt.Errorf(".function_call%w", err)
		}
		part.Extra = map[string]json.RawMessage{"legacyFunctionCall": json.RawMessage("true")}
		m.Content = append(m.Content, part)
	}
	m.StopReason = stopReason(m)
	m.Extra = jsonrec.Extras(fields, known...)
	r.add(m)
	return nil
}

// chatCall maps one element of tool_calls: {id, type, function{name,
// arguments}}, or a custom tool's {id, type:"custom", custom{name,
// input}}.
func (r *reader) chatCall(c map[string]json.RawMessage) (compact.Part, error) {
	var id, typ string
	if err := jsonrec.String(c, "id", &id); err != nil {
		return compact.Part{}, err
	}
	if err := jsonrec.String(c, "type", &typ); err != nil {
		return compact.Part{}, err
	}
	var name string
	var args json.RawMessage
	extra := jsonrec.Extras(c, "id", "type", "function", "custom")
	if typ != "" && typ != "function" {
		extra = jsonrec.Set(extra, "callType", c["type"])
	}
	switch {
	case c["function"] != nil:
		var fn map[string]json.RawMessage
		if err := json.Unmarshal(c["function"], &fn); err != nil {
			return compact.Part{}, fmt.Errorf(".function: not an object")
		}
		if err := jsonrec.String(fn, "name", &name); err != nil {
			return compact.Part{}, fmt.Errorf(".function%w", err)
		}
		var s string
		if err := jsonrec.String(fn, "arguments", &s); err != nil {
			// Some servers send the arguments as an object.
			if bytes.HasPrefix(bytes.TrimSpace(fn["arguments"]), []byte("{")) {
				args = fn["arguments"]
			} else {
				return compact.Part{}, fmt.Errorf(".function%w", err)
			}
		} else {
			args = r.arguments(s, id)
		}
	case c["custom"] != nil:
		var cu struct {
			Name  string `json:"name"`
			Input string `json:"input"`
		}
		if err := json.Unmarshal(c["custom"], &cu); err != nil {
			return compact.Part{}, fmt.Errorf(".custom: %v", err)
		}
		name = cu.Name
		args, _ = json.Marshal(map[string]string{"input": cu.Input})
		extra = jsonrec.Set(extra, "customInput", json.RawMessage("true"))
	default:
		return compact.Part{}, fmt.Errorf(".function: missing")
	}
	if id == "" {
		return compact.Part{}, fmt.Errorf(".id: missing")
	}
	tc := &compact.ToolCall{ID: id, Name: name, Arguments: args}
	r.call(tc)
	return compact.Part{Type: compact.PartToolCall, ToolCall: tc, Extra: extra}, nil
}

// arguments decodes the arguments string of a call. Arguments that are
// not a JSON object (a model's broken output) are kept as sent under
// "_raw", with a warning.
func (r *reader) arguments(s, id string) json.RawMessage {
	args, ok := jsonrec.Arguments(s)
	if !ok {
		r.t.Warnings = append(r.t.Warnings, fmt.Sprintf("%s: tool call %q: arguments are not a JSON object: kept as a string under _raw", r.name, id))
	}
	return args
}

// chatContent maps a Chat content: a string, null, or an array of parts.
func (r *reader) chatContent(raw json.RawMessage) ([]compact.Part, error) {
	return jsonrec.Content(raw, "an array", r.chatPart)
}

// chatPart maps one content part.
func (r *reader) chatPart(raw json.RawMessage) (compact.Part, error) {
	f, err := jsonrec.Fields(raw)
	if err != nil {
		return compact.Part{}, err
	}
	var typ string
	if err := jsonrec.String(f, "type", &typ); err != nil {
		return compact.Part{}, err
	}
	switch typ {
	case "text":
		var s string
		if err := jsonrec.String(f, "text", &s); err != nil {
			return compact.Part{}, err
		}
		return compact.Part{Type: compact.PartText, Text: s, Extra: jsonrec.Extras(f, "type", "text")}, nil
	case "image_url":
		var img struct {
			URL string `json:"url"`
		}
		var u map[string]json.RawMessage
		if json.Unmarshal(f["image_url"], &u) == nil {
			_ = json.Unmarshal(f["image_url"], &img)
		} else {
			_ = json.Unmarshal(f["image_url"], &img.URL) // an early form: the URL itself
		}
		if mime, data, ok := jsonrec.SplitDataURL(img.URL); ok {
			extra := jsonrec.Extras(f, "type", "image_url")
			if u != nil {
				for k, v := range jsonrec.Extras(u, "url") {
					extra = jsonrec.Set(extra, k, v)
				}
			}
			return compact.Part{Type: compact.PartImage, Extra: extra, Image: &compact.Image{MimeType: mime, Data: data}}, nil
		}
		text := ""
		if img.URL != "" {
			text = "[image: " + img.URL + "]"
		}
		return r.placeholder("image_url", text, raw), nil
	case "":
		return compact.Part{}, fmt.Errorf(".type: missing")
	}
	var s string
	_ = jsonrec.String(f, "refusal", &s)
	return r.placeholder(typ, s, raw), nil
}
