package requestbody

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/compactkit/compact"
)

// chatMessage maps the i-th message of a Chat Completions body. Errors
// start with the path inside the message (".content: ...").
func (r *reader) chatMessage(i int, rec record) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(rec.raw, &fields); err != nil || fields == nil {
		return fmt.Errorf(": not a JSON object")
	}
	var role string
	if err := str(fields, "role", &role); err != nil {
		return err
	}
	where := fmt.Sprintf("line %d, messages[%d]", lineAt(r.data, rec.off), i)
	switch role {
	case "system", "developer":
		r.custom("system", rec.raw)
		return nil
	case "user":
		parts, err := r.chatContent(fields["content"])
		if err != nil {
			return err
		}
		r.add(&compact.Message{Role: compact.RoleUser, Content: parts, Extra: extras(fields, "role", "content")})
		return nil
	case "assistant":
		return r.chatAssistant(fields)
	case "tool", "function":
		var id, name string
		if err := str(fields, "tool_call_id", &id); err != nil {
			return err
		}
		if err := str(fields, "name", &name); err != nil {
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
			Extra: extras(fields, "role", "content", "tool_call_id", "name")}
		if role == "function" {
			m.Extra = setRaw(m.Extra, "legacyFunctionResult", json.RawMessage("true"))
		}
		r.result(m, where, key)
		return nil
	}
	if role == "" {
		return fmt.Errorf(".role: missing")
	}
	r.t.Unknown[role]++
	r.custom(role, rec.raw)
	return nil
}

// chatAssistant maps an assistant message: reasoning, content, then the
// tool calls.
func (r *reader) chatAssistant(fields map[string]json.RawMessage) error {
	m := &compact.Message{Role: compact.RoleAssistant}
	known := []string{"role", "content", "tool_calls", "function_call"}
	for _, k := range [...]string{"reasoning_content", "reasoning"} {
		var s string
		if err := str(fields, k, &s); err != nil {
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
	if raw, ok := fields["tool_calls"]; ok && !isNull(raw) {
		var calls []map[string]json.RawMessage
		if err := json.Unmarshal(raw, &calls); err != nil {
			return fmt.Errorf(".tool_calls: not an array of objects")
		}
		for j, c := range calls {
			part, err := r.chatCall(c)
			if err != nil {
				return fmt.Errorf(".tool_calls[%d]%w", j, err)
			}
			m.Content = append(m.Content, part)
		}
	}
	if raw, ok := fields["function_call"]; ok && !isNull(raw) {
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
	m.Extra = extras(fields, known...)
	r.add(m)
	return nil
}

// chatCall maps one element of tool_calls: {id, type, function{name,
// arguments}}, or a custom tool's {id, type:"custom", custom{name,
// input}}.
func (r *reader) chatCall(c map[string]json.RawMessage) (compact.Part, error) {
	var id, typ string
	if err := str(c, "id", &id); err != nil {
		return compact.Part{}, err
	}
	if err := str(c, "type", &typ); err != nil {
		return compact.Part{}, err
	}
	var name string
	var args json.RawMessage
	extra := extras(c, "id", "type", "function", "custom")
	if typ != "" && typ != "function" {
		extra = setRaw(extra, "type", c["type"])
	}
	switch {
	case c["function"] != nil:
		var fn map[string]json.RawMessage
		if err := json.Unmarshal(c["function"], &fn); err != nil {
			return compact.Part{}, fmt.Errorf(".function: not an object")
		}
		if err := str(fn, "name", &name); err != nil {
			return compact.Part{}, fmt.Errorf(".function%w", err)
		}
		var s string
		if err := str(fn, "arguments", &s); err != nil {
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
		extra = setRaw(extra, "customInput", json.RawMessage("true"))
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
	t := strings.TrimSpace(s)
	if t == "" {
		return json.RawMessage("{}")
	}
	if strings.HasPrefix(t, "{") && json.Valid([]byte(t)) {
		return json.RawMessage(t)
	}
	r.t.Warnings = append(r.t.Warnings, fmt.Sprintf("%s: tool call %q: arguments are not a JSON object: kept as a string under _raw", r.name, id))
	out, _ := json.Marshal(map[string]string{"_raw": s})
	return out
}

// chatContent maps a Chat content: a string, null, or an array of parts.
func (r *reader) chatContent(raw json.RawMessage) ([]compact.Part, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || isNull(raw) {
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
		var parts []json.RawMessage
		if err := json.Unmarshal(raw, &parts); err != nil {
			return nil, fmt.Errorf(".content: %v", err)
		}
		out := make([]compact.Part, 0, len(parts))
		for j, p := range parts {
			part, err := r.chatPart(p)
			if err != nil {
				return nil, fmt.Errorf(".content[%d]%w", j, err)
			}
			out = append(out, part)
		}
		return out, nil
	}
	return nil, fmt.Errorf(".content: neither a string nor an array")
}

// chatPart maps one content part.
func (r *reader) chatPart(raw json.RawMessage) (compact.Part, error) {
	var f map[string]json.RawMessage
	if err := json.Unmarshal(raw, &f); err != nil || f == nil {
		return compact.Part{}, fmt.Errorf(": not a JSON object")
	}
	var typ string
	if err := str(f, "type", &typ); err != nil {
		return compact.Part{}, err
	}
	switch typ {
	case "text":
		var s string
		if err := str(f, "text", &s); err != nil {
			return compact.Part{}, err
		}
		return compact.Part{Type: compact.PartText, Text: s, Extra: extras(f, "type", "text")}, nil
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
		if mime, data, ok := splitDataURL(img.URL); ok {
			extra := extras(f, "type", "image_url")
			if u != nil {
				for k, v := range extras(u, "url") {
					extra = setRaw(extra, k, v)
				}
			}
			return compact.Part{Type: compact.PartImage, MimeType: mime, Data: data, Extra: extra}, nil
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
	_ = str(f, "refusal", &s)
	return r.placeholder(typ, s, raw), nil
}

// splitDataURL splits "data:<mime>[;...];base64,<data>" into its media
// type and base64 data; ok is false for any other URL.
func splitDataURL(url string) (mime, data string, ok bool) {
	rest, found := strings.CutPrefix(url, "data:")
	if !found {
		return "", "", false
	}
	meta, data, found := strings.Cut(rest, ",")
	if !found {
		return "", "", false
	}
	params := strings.Split(meta, ";")
	if params[len(params)-1] != "base64" {
		return "", "", false
	}
	mime = params[0]
	if mime == "" {
		mime = "text/plain"
	}
	return mime, data, true
}

// str reads the string member key of f into dst; a missing or null member
// leaves dst empty, any other type is an error naming the member.
func str(f map[string]json.RawMessage, key string, dst *string) error {
	raw, ok := f[key]
	if !ok || isNull(raw) {
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf(".%s: not a string", key)
	}
	return nil
}

// extras returns the members of f other than known, nil when none.
func extras(f map[string]json.RawMessage, known ...string) map[string]json.RawMessage {
	var out map[string]json.RawMessage
outer:
	for k, v := range f {
		for _, kn := range known {
			if k == kn {
				continue outer
			}
		}
		out = setRaw(out, k, v)
	}
	return out
}

// setRaw sets m[k] = v, making m when nil.
func setRaw(m map[string]json.RawMessage, k string, v json.RawMessage) map[string]json.RawMessage {
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	m[k] = v
	return m
}

// isNull reports whether raw is the JSON null.
func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }
