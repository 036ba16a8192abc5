package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/compactkit/compact"
)

// ChatMessages maps compact messages onto the "messages" of a Chat
// Completions request, one element per message, after a system message
// holding system (left out when system is empty). It is the inverse of
// ReadChatMessage: every message that mapping makes reads back from
// ChatMessages' output as it was, but for the cases listed last. Pass
// the messages a model is to see (compact.ForModel or
// compact.Context.ModelMessages).
//
// The mapping:
//   - an assistant message sends its text, image and placeholder parts as
//     "content" ("" when it has none), a last text part marked as a
//     refusal (see ReadChatMessage) as "refusal", and its tool calls as
//     "tool_calls" {id, type:"function", function:{name, arguments}}: the
//     arguments string is the object the call holds, except that
//     arguments Arguments wrapped as {"_raw": s} go back out as s, the
//     text the model wrote, and a JSON string (as some writers stored a
//     model's broken output) goes out as the text it holds; a custom
//     tool's call ({"input": s} marked ExtraCustomInput) goes out as
//     {id, type:"custom", custom:{name, input:s}}, and the first legacy
//     call (ExtraLegacyCall) as the message's "function_call";
//   - a tool result is a "tool" message with its tool_call_id (the
//     tool's name is the call's, found again by Calls when read back); a
//     legacy result (ExtraLegacyResult) is a "function" message with the
//     name;
//   - every other message (user, and the roles ForModel turns into user
//     messages) is a "user" message;
//   - content is a string when it is one text part with nothing in
//     Extra, else an array: text parts {type:"text", text}, image parts
//     {type:"image_url", image_url:{url}} with a data: URL made of the
//     image's media type and data (Extra's "detail" inside image_url),
//     an image by link as it was read, and a placeholder as the part it
//     stands for (Extra[ExtraPart]);
//   - the members in a message's, part's or call's Extra are sent back
//     beside those above, which win a clash; the marks this package
//     sets in Extra (ExtraCallType and the like) are not sent as such.
//     Extra is taken to hold Chat members, as ReadChatMessage and
//     ReadChatAnswer leave there: a message read from another format
//     (a pi session's "api", an Anthropic signature) should have those
//     cleared before it is sent to a Chat server.
//
// What does not go out: thinking parts (a Chat server does not take
// reasoning back); a message's usage, stop reason, model, time, IsError
// and Meta; an image part with neither data nor an image_url link, which
// goes out as the text "[image]"; a user or tool message without parts,
// which goes out with the content "" (the servers want one); a custom
// call read without its type, which goes out with type "custom".
//
// The error, for a nil message or an Extra value that is not JSON, names
// the message and the member.
func ChatMessages(system string, msgs []*compact.Message) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, 0, len(msgs)+1)
	if system != "" {
		raw, err := json.Marshal(object{{"role", "system"}, {"content", system}})
		if err != nil {
			return nil, fmt.Errorf("openai: system message: %w", err)
		}
		out = append(out, raw)
	}
	for i, m := range msgs {
		raw, err := chatMessage(m)
		if err != nil {
			return nil, fmt.Errorf("openai: message %d: %w", i, err)
		}
		out = append(out, raw)
	}
	return out, nil
}

// member is one member of an object written in order.
type member struct {
	key string
	val any
}

// object is a JSON object whose members are written in the order given,
// which keeps requests readable ("role" first) and deterministic.
type object []member

func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(m.val)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// has reports whether o has a member named key.
func (o object) has(key string) bool {
	return slices.ContainsFunc(o, func(m member) bool { return m.key == key })
}

// withExtra appends the members of extra (in key order) that o does not
// have, leaving out skip; where names the object in the error for a value
// that is not JSON.
func (o object) withExtra(extra map[string]json.RawMessage, where string, skip ...string) (object, error) {
	keys := make([]string, 0, len(extra))
	for k := range extra {
		if !o.has(k) && !slices.Contains(skip, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !json.Valid(extra[k]) {
			return nil, fmt.Errorf("%s.%s: extra member is not JSON", where, k)
		}
		o = append(o, member{k, extra[k]})
	}
	return o, nil
}

// chatMessage maps one message (see ChatMessages).
func chatMessage(m *compact.Message) (json.RawMessage, error) {
	if m == nil {
		return nil, fmt.Errorf("nil message")
	}
	var o object
	var err error
	switch {
	case m.Role == compact.RoleAssistant:
		o, err = assistantOut(m)
	case m.Role == compact.RoleToolResult && m.Extra[ExtraLegacyResult] != nil:
		o, err = contentOut(object{{"role", "function"}, {"name", m.ToolName}}, m.Content)
	case m.Role == compact.RoleToolResult:
		// No "name": the Chat API's tool message has role, content and
		// tool_call_id only, and strict servers refuse other members.
		o, err = contentOut(object{{"role", "tool"}, {"tool_call_id", m.ToolCallID}}, m.Content)
	default:
		o, err = contentOut(object{{"role", "user"}}, m.Content)
	}
	if err != nil {
		return nil, err
	}
	if o, err = o.withExtra(m.Extra, "", ExtraLegacyResult); err != nil {
		return nil, err
	}
	return json.Marshal(o)
}

// contentOut adds the content of a user or tool message.
func contentOut(o object, parts []compact.Part) (object, error) {
	content, err := chatContent(parts)
	if err != nil {
		return nil, err
	}
	return append(o, member{"content", content}), nil
}

// chatContent is a content value: "" for no parts, a string for one plain
// text part, else an array of parts. Thinking parts and tool calls are
// not content and must be left out by the caller.
func chatContent(parts []compact.Part) (any, error) {
	switch {
	case len(parts) == 0:
		return "", nil
	case len(parts) == 1 && parts[0].Type == compact.PartText && parts[0].Extra == nil:
		return parts[0].Text, nil
	}
	out := make([]any, 0, len(parts))
	for i, p := range parts {
		raw, err := chatPartOut(p, fmt.Sprintf(".content[%d]", i))
		if err != nil {
			return nil, err
		}
		out = append(out, raw)
	}
	return out, nil
}

// chatPartOut maps one content part (see ChatMessages).
func chatPartOut(p compact.Part, where string) (any, error) {
	if raw := p.Extra[ExtraPart]; raw != nil {
		if !json.Valid(raw) {
			return nil, fmt.Errorf("%s.%s: extra member is not JSON", where, ExtraPart)
		}
		return raw, nil
	}
	switch {
	case p.Type == compact.PartImage && p.Image != nil:
		img := object{{"url", "data:" + p.Image.MimeType + ";base64," + p.Image.Data}}
		if d := p.Extra["detail"]; d != nil {
			if !json.Valid(d) {
				return nil, fmt.Errorf("%s.detail: extra member is not JSON", where)
			}
			img = append(img, member{"detail", d})
		}
		return object{{"type", "image_url"}, {"image_url", img}}.withExtra(p.Extra, where, "detail")
	case p.Type == compact.PartImage && p.Extra["image_url"] != nil:
		return object{{"type", "image_url"}}.withExtra(p.Extra, where)
	case p.Type == compact.PartImage:
		return object{{"type", "text"}, {"text", "[image]"}}, nil
	}
	return object{{"type", "text"}, {"text", p.Text}}.withExtra(p.Extra, where)
}

// assistantOut maps an assistant message: content, refusal, tool calls,
// legacy function call.
func assistantOut(m *compact.Message) (object, error) {
	var content, calls []compact.Part
	for _, p := range m.Content {
		switch p.Type {
		case compact.PartThinking:
		case compact.PartToolCall:
			if p.ToolCall != nil {
				calls = append(calls, p)
			}
		default:
			content = append(content, p)
		}
	}
	o := object{{"role", "assistant"}}
	var refusal *compact.Part
	if n := len(content); n > 0 && isRefusal(content[n-1]) && m.Extra["refusal"] == nil {
		refusal, content = &content[n-1], content[:n-1]
	}
	c, err := chatContent(content)
	if err != nil {
		return nil, err
	}
	o = append(o, member{"content", c})
	if refusal != nil {
		o = append(o, member{"refusal", refusal.Text})
	}
	var toolCalls []any
	legacy := false
	for i, p := range calls {
		tc := p.ToolCall
		if !legacy && p.Extra[ExtraLegacyCall] != nil {
			legacy = true
			o = append(o, member{"function_call", object{{"name", tc.Name}, {"arguments", ArgumentsText(tc.Arguments)}}})
			continue
		}
		call, err := callOut(p, fmt.Sprintf(".tool_calls[%d]", i))
		if err != nil {
			return nil, err
		}
		toolCalls = append(toolCalls, call)
	}
	if toolCalls != nil {
		o = append(o, member{"tool_calls", toolCalls})
	}
	return o, nil
}

// isRefusal reports whether p is the text part ReadChatMessage makes of
// an assistant message's "refusal".
func isRefusal(p compact.Part) bool {
	return p.Type == compact.PartText && p.Text != "" && len(p.Extra) == 1 && string(p.Extra["refusal"]) == "true"
}

// callOut maps one tool call of an assistant message.
func callOut(p compact.Part, where string) (object, error) {
	tc := p.ToolCall
	o := object{{"id", tc.ID}}
	input, custom := customInput(p)
	switch {
	case custom:
		typ := json.RawMessage(`"custom"`)
		if t := p.Extra[ExtraCallType]; t != nil {
			typ = t
		}
		o = append(o, member{"type", typ}, member{"custom", object{{"name", tc.Name}, {"input", input}}})
		return o.withExtra(p.Extra, where, ExtraCallType, ExtraCustomInput, ExtraLegacyCall)
	default:
		typ := json.RawMessage(`"function"`)
		if t := p.Extra[ExtraCallType]; t != nil {
			typ = t
		}
		o = append(o, member{"type", typ}, member{"function", object{{"name", tc.Name}, {"arguments", ArgumentsText(tc.Arguments)}}})
		return o.withExtra(p.Extra, where, ExtraCallType, ExtraCustomInput, ExtraLegacyCall)
	}
}

// customInput returns the input of a custom tool's call: the s of
// arguments {"input": s} exactly as CustomInput writes them, on a part
// marked ExtraCustomInput.
func customInput(p compact.Part) (string, bool) {
	if p.Extra[ExtraCustomInput] == nil {
		return "", false
	}
	var in struct {
		Input *string `json:"input"`
	}
	if json.Unmarshal(p.ToolCall.Arguments, &in) != nil || in.Input == nil ||
		!bytes.Equal(CustomInput(*in.Input), p.ToolCall.Arguments) {
		return "", false
	}
	return *in.Input, true
}

// ArgumentsText is the arguments string a Chat or Responses call sends
// for the arguments a tool-call part holds, the inverse of Arguments:
// the object as stored, but {"_raw": s} exactly as Arguments wraps a
// string that is not an object goes back out as s, the text the model
// wrote. A JSON string, the form some writers stored such text in, goes
// out as the text it holds; nothing stored (nil) as "{}".
func ArgumentsText(args json.RawMessage) string {
	t := bytes.TrimSpace(args)
	switch {
	case len(t) == 0:
		return "{}"
	case t[0] == '"':
		var s string
		if json.Unmarshal(t, &s) == nil {
			return s
		}
	}
	if s, ok := WrappedArguments(t); ok {
		return s
	}
	return string(t)
}

// WrappedArguments reports whether args are what Arguments makes of a
// string that is not a JSON object, {"_raw": s} exactly as it writes
// them, and returns s. A tool runner asks it before reading the
// arguments, so that it tells the model its arguments were not an object
// rather than run the tool without any.
func WrappedArguments(args json.RawMessage) (s string, ok bool) {
	t := bytes.TrimSpace(args)
	if !bytes.HasPrefix(t, []byte("{")) || !bytes.Contains(t, []byte(`"_raw"`)) {
		return "", false
	}
	var w map[string]string
	if json.Unmarshal(t, &w) != nil || len(w) != 1 {
		return "", false
	}
	s, found := w["_raw"]
	if again, valid := Arguments(s); !found || valid || !bytes.Equal(again, t) {
		return "", false
	}
	return s, true
}
