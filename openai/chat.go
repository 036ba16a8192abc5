package openai

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
)

// ChatMessage is what one element of a Chat Completions request's
// "messages" maps to (see ReadChatMessage).
type ChatMessage struct {
	// Role is the message's role as sent: system, developer, user,
	// assistant, tool, the legacy function, or any other a server uses.
	Role string
	// Message is the compact message. Every role has one: assistant
	// messages are RoleAssistant, tool and function messages
	// RoleToolResult, and every other role (system and developer
	// included) RoleUser holding the content, which is what a model
	// reads of it. A caller that keeps instructions apart (the request
	// body reader keeps them as custom entries) looks at Role first.
	Message *compact.Message
	// Unknown names, in order, the type of each content part kept as a
	// placeholder text part (see ChatPart), for the caller's counts.
	Unknown []string
	// Warnings holds one line per oddity read past: a call whose
	// arguments are not a JSON object.
	Warnings []string

	// answer is set by ReadChatAnswer.
	answer bool
}

// Extra keys set by the Chat and Responses mappings, beside the members
// of a message, part or item that a compact message does not model
// (which are kept under their own names).
const (
	// ExtraPart holds a content part kept as a placeholder, as sent.
	ExtraPart = "requestPart"
	// ExtraCallType holds the type of a Chat tool call other than
	// "function" ("custom").
	ExtraCallType = "callType"
	// ExtraCustomInput is true on a call to a custom tool, whose free-form
	// input became the arguments {"input": ...}.
	ExtraCustomInput = "customInput"
	// ExtraLegacyCall is true on a call read from a Chat assistant
	// message's legacy function_call, which has no id (Calls numbers it).
	ExtraLegacyCall = "legacyFunctionCall"
	// ExtraLegacyResult is true on the result a legacy "function"
	// message holds.
	ExtraLegacyResult = "legacyFunctionResult"
	// ExtraLocalShell is true on a call read from a Responses
	// local_shell_call.
	ExtraLocalShell = "localShell"
	// ExtraToolSearch is true on a call read from a Responses
	// tool_search_call.
	ExtraToolSearch = "toolSearch"
)

// ReadChatMessage maps one element of a Chat Completions request's
// "messages" onto a compact message. It is the only mapping of that
// format: the proxy measures and summarizes with it, and the request body
// reader (agents/requestbody) imports with it.
//
// The mapping:
//   - content is absent or null (no parts), a string (one text part) or
//     an array of parts, each mapped by ChatPart;
//   - an assistant message's reasoning ("reasoning_content", as DeepSeek
//     and vLLM send it, or "reasoning", as OpenRouter does) comes first as
//     a thinking part, then the content without the empty text many
//     clients send beside tool calls, then a message-level "refusal" as a
//     text part, then the tool calls as tool-call parts: a function's
//     arguments string goes through Arguments; arguments sent as an object
//     are kept; a custom tool's free-form input becomes {"input": ...}
//     with ExtraCustomInput; the legacy function_call becomes a call with
//     no id, marked ExtraLegacyCall, for Calls to number;
//   - a tool message is a tool result with its tool_call_id, and its
//     "name" as ToolName when given; a legacy function message is a tool
//     result with no id, marked ExtraLegacyResult;
//   - the members the message does not model stay in Extra.
//
// Errors name the path inside the message (".content[2].type: missing")
// and never hold more of the message than a short excerpt.
func ReadChatMessage(raw []byte) (*ChatMessage, error) {
	return readChat(raw, &ChatMessage{})
}

// ReadChatAnswer maps the message of a Chat Completions answer
// (choices[i].message) onto an assistant message, as ReadChatMessage maps
// one of a request, but for what answers from some local servers lack: a
// message without a role is an assistant's (any other role is an error),
// and a tool call without an
// id is read with an empty ToolCall.ID, for the caller to give it one
// before the call goes back in a request.
func ReadChatAnswer(raw []byte) (*ChatMessage, error) {
	return readChat(raw, &ChatMessage{answer: true})
}

func readChat(raw []byte, out *ChatMessage) (*ChatMessage, error) {
	fields, err := jsonrec.Fields(raw)
	if err != nil {
		return nil, err
	}
	if err := jsonrec.String(fields, "role", &out.Role); err != nil {
		return nil, err
	}
	if out.answer && out.Role == "" {
		out.Role = "assistant"
	}
	if out.answer && out.Role != "assistant" {
		return nil, fmt.Errorf(".role: %q, want assistant", out.Role)
	}
	switch out.Role {
	case "":
		return nil, fmt.Errorf(".role: missing")
	case "assistant":
		out.Message, err = out.assistant(fields)
		return out, err
	}
	parts, err := out.content(fields["content"])
	if err != nil {
		return nil, err
	}
	if out.Role != "tool" && out.Role != "function" {
		out.Message = &compact.Message{Role: compact.RoleUser, Content: parts, Extra: jsonrec.Extras(fields, "role", "content")}
		return out, nil
	}
	m := &compact.Message{Role: compact.RoleToolResult, Content: parts}
	if err := jsonrec.String(fields, "name", &m.ToolName); err != nil {
		return nil, err
	}
	if out.Role == "function" {
		m.Extra = jsonrec.Set(jsonrec.Extras(fields, "role", "content", "name"), ExtraLegacyResult, json.RawMessage("true"))
	} else {
		if err := jsonrec.String(fields, "tool_call_id", &m.ToolCallID); err != nil {
			return nil, err
		}
		m.Extra = jsonrec.Extras(fields, "role", "content", "tool_call_id", "name")
	}
	out.Message = m
	return out, nil
}

// content maps a Chat content value, counting its placeholders.
func (c *ChatMessage) content(raw json.RawMessage) ([]compact.Part, error) {
	parts, err := jsonrec.Content(raw, "an array", ChatPart)
	for _, p := range parts {
		if p.Extra[ExtraPart] != nil {
			c.Unknown = append(c.Unknown, partType(p.Extra[ExtraPart]))
		}
	}
	return parts, err
}

// assistant maps an assistant message: reasoning, content, refusal, then
// the tool calls.
func (c *ChatMessage) assistant(fields map[string]json.RawMessage) (*compact.Message, error) {
	m := &compact.Message{Role: compact.RoleAssistant}
	known := []string{"role", "content", "tool_calls", "function_call"}
	for _, k := range [...]string{"reasoning_content", "reasoning"} {
		var s string
		if err := jsonrec.String(fields, k, &s); err != nil {
			// reasoning is an object on some servers: kept in Extra.
			continue
		}
		known = append(known, k)
		if s != "" {
			m.Content = append(m.Content, compact.Part{Type: compact.PartThinking, Thinking: s})
		}
	}
	parts, err := c.content(fields["content"])
	if err != nil {
		return nil, err
	}
	for _, p := range parts {
		if p.Type == compact.PartText && p.Text == "" && p.Extra == nil {
			continue // the empty string many clients send beside tool calls
		}
		m.Content = append(m.Content, p)
	}
	var refusal string
	if err := jsonrec.String(fields, "refusal", &refusal); err != nil {
		return nil, err
	}
	if refusal != "" {
		known = append(known, "refusal")
		m.Content = append(m.Content, compact.Part{Type: compact.PartText, Text: refusal,
			Extra: map[string]json.RawMessage{"refusal": json.RawMessage("true")}})
	}
	if err := jsonrec.EachObject(fields, "tool_calls", func(f map[string]json.RawMessage) error {
		part, err := c.call(f)
		m.Content = append(m.Content, part)
		return err
	}); err != nil {
		return nil, err
	}
	if raw, ok := fields["function_call"]; ok && !jsonrec.IsNull(raw) {
		var fc map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fc); err != nil || fc == nil {
			return nil, fmt.Errorf(".function_call: not an object")
		}
		name, args, err := c.function(fc, "")
		if err != nil {
			return nil, fmt.Errorf(".function_call%w", err)
		}
		m.Content = append(m.Content, compact.Part{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{Name: name, Arguments: args},
			Extra: map[string]json.RawMessage{ExtraLegacyCall: json.RawMessage("true")}})
	}
	m.Extra = jsonrec.Extras(fields, known...)
	return m, nil
}

// call maps one element of tool_calls: {id, type, function{name,
// arguments}}, or a custom tool's {id, type:"custom", custom{name,
// input}}.
func (c *ChatMessage) call(f map[string]json.RawMessage) (compact.Part, error) {
	var id, typ, name string
	if err := jsonrec.String(f, "id", &id); err != nil {
		return compact.Part{}, err
	}
	if err := jsonrec.String(f, "type", &typ); err != nil {
		return compact.Part{}, err
	}
	var args json.RawMessage
	extra := jsonrec.Extras(f, "id", "type", "function", "custom")
	if typ != "" && typ != "function" {
		extra = jsonrec.Set(extra, ExtraCallType, f["type"])
	}
	switch {
	case f["function"] != nil:
		var fn map[string]json.RawMessage
		if err := json.Unmarshal(f["function"], &fn); err != nil || fn == nil {
			return compact.Part{}, fmt.Errorf(".function: not an object")
		}
		var err error
		if name, args, err = c.function(fn, id); err != nil {
			return compact.Part{}, fmt.Errorf(".function%w", err)
		}
	case f["custom"] != nil:
		var cu struct {
			Name  string `json:"name"`
			Input string `json:"input"`
		}
		if err := json.Unmarshal(f["custom"], &cu); err != nil {
			return compact.Part{}, fmt.Errorf(".custom: %v", err)
		}
		name = cu.Name
		args = CustomInput(cu.Input)
		extra = jsonrec.Set(extra, ExtraCustomInput, json.RawMessage("true"))
	default:
		return compact.Part{}, fmt.Errorf(".function: missing")
	}
	if id == "" && !c.answer {
		return compact.Part{}, fmt.Errorf(".id: missing")
	}
	return compact.Part{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: id, Name: name, Arguments: args}, Extra: extra}, nil
}

// function reads {name, arguments}. Arguments are a string (see
// Arguments) or, from some servers, an object kept as sent.
func (c *ChatMessage) function(fn map[string]json.RawMessage, id string) (string, json.RawMessage, error) {
	var name, s string
	if err := jsonrec.String(fn, "name", &name); err != nil {
		return "", nil, err
	}
	if err := jsonrec.String(fn, "arguments", &s); err != nil {
		if raw := bytes.TrimSpace(fn["arguments"]); bytes.HasPrefix(raw, []byte("{")) {
			return name, raw, nil
		}
		return "", nil, err
	}
	args, ok := Arguments(s)
	if !ok {
		c.Warnings = append(c.Warnings, jsonrec.ArgumentsWarning("", id))
	}
	return name, args, nil
}

// ChatPart maps one element of a Chat content array:
//   - {type:"text", text} is a text part;
//   - {type:"image_url", image_url:{url}} (or the early form with the URL
//     itself as image_url) is an image part: with a data: URL, Image
//     holds its media type and base64 data; with any other URL, Image is
//     nil and image_url stays in Extra. Either way it is measured as an
//     image (the provider fetches and bills it) and summarized as
//     "[image]", as the Anthropic mapping does for an image by URL;
//   - {type:"refusal", refusal} is a placeholder holding the refusal's
//     text, which the model wrote and a summary should quote;
//   - any other type (input_audio, file, ...) is a placeholder "[TYPE]".
//
// A placeholder is a text part whose Extra[ExtraPart] holds the part as
// sent. A part that is not an object, or has no type, is an error.
func ChatPart(raw json.RawMessage) (compact.Part, error) {
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
			for k, v := range jsonrec.Extras(u, "url") {
				extra = jsonrec.Set(extra, k, v)
			}
			return compact.Part{Type: compact.PartImage, Extra: extra, Image: &compact.Image{MimeType: mime, Data: data}}, nil
		}
		// A link or a file id: an image all the same, whose bytes are
		// not in the conversation.
		return compact.Part{Type: compact.PartImage, Extra: jsonrec.Extras(f, "type")}, nil
	case "":
		return compact.Part{}, fmt.Errorf(".type: missing")
	}
	var s string
	_ = jsonrec.String(f, "refusal", &s)
	return placeholder(typ, s, raw), nil
}

// placeholder is the text part standing for a part a compact message
// does not model; the part itself is kept in Extra[ExtraPart].
func placeholder(typ, text string, raw json.RawMessage) compact.Part {
	if text == "" {
		text = "[" + typ + "]"
	}
	return compact.Part{Type: compact.PartText, Text: text, Extra: map[string]json.RawMessage{ExtraPart: raw}}
}

// partType returns the "type" member of a part kept as a placeholder.
func partType(raw json.RawMessage) string {
	var p struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(raw, &p)
	return p.Type
}

// Arguments turns the arguments string of a function call (Chat's
// function.arguments, Responses' function_call.arguments) into the JSON
// object a tool-call part holds: "" is {}, a JSON object is kept as sent,
// and anything else (a model's broken output, a bare array) is wrapped as
// {"_raw": s} with ok false, so that the caller can warn. Summaries then
// show the text the model wrote, and no reader takes it for arguments.
func Arguments(s string) (args json.RawMessage, ok bool) {
	return jsonrec.Arguments(s)
}

// CustomInput is the arguments of a call to a custom tool (Chat's
// custom.input, Responses' custom_tool_call.input), whose input is free
// text such as a patch: {"input": s}.
func CustomInput(s string) json.RawMessage {
	out, _ := json.Marshal(map[string]string{"input": s})
	return out
}
