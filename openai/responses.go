package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
)

// ItemKind sorts the items of a Responses input by who wrote them.
type ItemKind int

// The kinds of items.
const (
	// ItemOther is an item the mapping does not model (item_reference,
	// compaction and types it does not know).
	ItemOther ItemKind = iota
	// ItemInput is a message of the user, developer or system.
	ItemInput
	// ItemModel is what the model produced: reasoning, its messages and
	// its tool calls, those the client runs and those the provider ran
	// itself. The model items between two other items are one response:
	// a caller joins their parts into one assistant message.
	ItemModel
	// ItemOutput is a tool's answer to a call the client ran.
	ItemOutput
)

// ResponsesItem is what one item of a Responses request's "input" (or
// of a Codex rollout's response_item) maps to (see ReadResponsesItem).
type ResponsesItem struct {
	// Type is the item's type as sent, "message" when absent.
	Type string
	// Role is a message's role, "" for other items.
	Role string
	// Kind says who wrote the item.
	Kind ItemKind
	// Message is the compact message: for ItemModel an assistant message
	// holding the item's parts (a caller joins the parts of one
	// response), for ItemOutput a tool result, for ItemInput a user
	// message of any role, for ItemOther a user message holding the item
	// as JSON text (what a model is sent of it).
	Message *compact.Message
	// Compaction is true for an item that holds a provider's compaction
	// of the history (type "compaction" or "compaction_summary").
	Compaction bool
	// Unknown names, in order, the type of each content part kept as a
	// placeholder text part, for the caller's counts.
	Unknown []string
	// Warnings holds one line per oddity read past: a call whose
	// arguments are not a JSON object.
	Warnings []string
}

// maxRawText bounds the JSON text that stands for an item or value the
// mapping does not model.
const maxRawText = 4000

// ReadResponsesItem maps one item of a Responses request's input onto a
// compact message. It is the only mapping of that format: the proxy
// measures and summarizes with it, and the Codex rollout reader
// (agents/codex) imports with it.
//
// The mapping, by type:
//   - message: content is a string (one text part) or content items:
//     input_text, output_text and text are text parts, input_image an
//     image part (Image nil when it is given by URL or file id, which stay
//     in Extra, as ChatPart does), refusal a placeholder holding the
//     refusal's text,
//     anything else (input_file, ...) a placeholder "[TYPE]" (placeholders
//     are text parts whose Extra[ExtraPart] holds the item as sent). A
//     user, developer or system message is ItemInput; an assistant
//     message ItemModel.
//   - reasoning: one thinking part holding the summary texts joined by a
//     blank line, or, when there is no summary, the content texts (models
//     served elsewhere send readable reasoning that way). Encrypted
//     reasoning with no summary is an empty thinking part: the next model
//     reads it, nobody else can, and its encrypted_content stays in Extra.
//   - function_call: a tool-call part; arguments go through Arguments.
//     custom_tool_call: its input becomes {"input": ...} (CustomInput),
//     marked ExtraCustomInput. local_shell_call: a call named
//     "local_shell" whose arguments are the action object (call_id, or id
//     when there is none), marked ExtraLocalShell.
//   - the calls the provider runs itself (web_search_call,
//     file_search_call, image_generation_call, code_interpreter_call,
//     mcp_call, computer_call and the like): ItemModel with one text part
//     holding the item as JSON, cut after 4,000 bytes: there is no output
//     to pair, and that text is about what the model is sent of it.
//   - tool_search_call with a call_id (a search the client runs): a call
//     named "tool_search" (or its name) whose arguments are the
//     arguments object, marked ExtraToolSearch; without one it is run by
//     the provider (below). Its tool_search_output is a tool result
//     holding the tools found as JSON text.
//   - function_call_output, custom_tool_call_output,
//     local_shell_call_output, computer_call_output: a tool result for
//     call_id. The output is a string, content items (as a message's) or
//     an object: {content, success} or {content_items, success} as older
//     Codex versions wrote (success false sets IsError; the object stays
//     in Extra["output"]), or a single content item such as a computer
//     screenshot.
//   - compaction and compaction_summary set Compaction; they and every
//     other item are ItemOther.
//
// The members an item's message or part does not model stay in Extra
// (on the part for ItemModel, on the message otherwise), the item's "id"
// as "itemId" so that it is never taken for a call's id. Errors name the
// path inside the item (".content[1].text: ...").
func ReadResponsesItem(raw []byte) (*ResponsesItem, error) {
	f, err := jsonrec.Fields(raw)
	if err != nil {
		return nil, err
	}
	return ReadResponsesFields(raw, f)
}

// ReadResponsesFields is ReadResponsesItem for a caller that has already
// decoded the item: f must be raw's members as json.Unmarshal gives them
// (a reader that decodes each line's envelope and payload anyway, as
// agents/codex does, saves decoding every item twice). f is read, never
// changed, and no map of the result shares it.
func ReadResponsesFields(raw []byte, f map[string]json.RawMessage) (*ResponsesItem, error) {
	var err error
	it := &ResponsesItem{}
	if it.Type, err = jsonrec.OptString(f, "type"); err != nil {
		return nil, jsonrec.Below(err)
	}
	if it.Type == "" {
		it.Type = "message"
	}
	switch it.Type {
	case "message":
		return it, it.message(f)
	case "reasoning":
		part, err := reasoningPart(f)
		if err != nil {
			return nil, err
		}
		it.model(part)
	case "function_call", "custom_tool_call", "local_shell_call":
		part, err := it.call(f)
		if err != nil {
			return nil, err
		}
		it.model(part)
	case "function_call_output", "custom_tool_call_output", "local_shell_call_output", "computer_call_output":
		return it, it.output(f)
	case "tool_search_call":
		// A search the client runs has a call_id and an output to pair;
		// one the provider ran has neither.
		if id, _ := jsonrec.OptString(f, "call_id"); id == "" {
			it.model(rawPart(raw))
			break
		}
		part, err := it.call(f)
		if err != nil {
			return nil, err
		}
		it.model(part)
	case "tool_search_output":
		if id, _ := jsonrec.OptString(f, "call_id"); id == "" {
			it.other(raw)
			break
		}
		// The tools found, as the JSON the model is given.
		text, _ := json.Marshal(string(orNull(f["tools"])))
		f = jsonrec.Set(jsonrec.Extras(f, "output", "tools"), "output", text)
		return it, it.output(f)
	case "web_search_call", "file_search_call", "image_generation_call", "code_interpreter_call", "mcp_call",
		"mcp_list_tools", "mcp_approval_request", "computer_call":
		it.model(rawPart(raw))
	default:
		it.other(raw)
	}
	return it, nil
}

// other makes the item an ItemOther.
func (it *ResponsesItem) other(raw []byte) {
	it.Kind = ItemOther
	it.Compaction = it.Type == "compaction" || it.Type == "compaction_summary"
	it.Message = &compact.Message{Role: compact.RoleUser, Content: []compact.Part{rawPart(raw)}}
}

// model makes the item an ItemModel holding part.
func (it *ResponsesItem) model(part compact.Part) {
	it.Kind = ItemModel
	it.Message = &compact.Message{Role: compact.RoleAssistant, Content: []compact.Part{part}}
}

// message maps a message item.
func (it *ResponsesItem) message(f map[string]json.RawMessage) error {
	var err error
	if it.Role, err = jsonrec.OptString(f, "role"); err != nil {
		return jsonrec.Below(err)
	}
	parts, unknown, err := ResponsesContent(f["content"])
	if err != nil {
		return fmt.Errorf(".content%w", err)
	}
	it.Unknown = unknown
	extra := itemExtra(f, "type", "role", "content")
	if it.Role == "assistant" {
		for i := range parts {
			for k, v := range extra {
				parts[i].Extra = jsonrec.Set(parts[i].Extra, k, v)
			}
		}
		it.Kind = ItemModel
		it.Message = &compact.Message{Role: compact.RoleAssistant, Content: parts}
		return nil
	}
	it.Kind = ItemInput
	it.Message = &compact.Message{Role: compact.RoleUser, Content: parts, Extra: extra}
	return nil
}

// reasoningPart maps a reasoning item.
func reasoningPart(f map[string]json.RawMessage) (compact.Part, error) {
	part := compact.Part{Type: compact.PartThinking, Extra: itemExtra(f, "type", "summary")}
	if raw, ok := f["summary"]; ok && !jsonrec.IsNull(raw) {
		texts, err := texts(raw)
		if err != nil {
			return compact.Part{}, fmt.Errorf(".summary%w", err)
		}
		part.Thinking = strings.Join(texts, "\n\n")
		if len(texts) != 1 {
			part.Extra = jsonrec.Set(part.Extra, "summary", raw)
		}
	}
	if raw, ok := f["content"]; ok && !jsonrec.IsNull(raw) && part.Thinking == "" {
		texts, err := texts(raw)
		if err != nil {
			return compact.Part{}, fmt.Errorf(".content%w", err)
		}
		part.Thinking = strings.Join(texts, "\n\n")
	}
	return part, nil
}

// texts returns the text of each element of a summary or content list.
func texts(raw json.RawMessage) ([]string, error) {
	var items []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf(": want an array, have %s", jsonrec.Abbrev(raw))
	}
	var out []string
	for i, it := range items {
		s, err := jsonrec.OptString(it, "text")
		if err != nil {
			return nil, fmt.Errorf("[%d]%w", i, jsonrec.Below(err))
		}
		out = append(out, s)
	}
	return out, nil
}

// call maps a function, custom tool or local shell call.
func (it *ResponsesItem) call(f map[string]json.RawMessage) (compact.Part, error) {
	id, err := jsonrec.OptString(f, "call_id")
	if err != nil {
		return compact.Part{}, jsonrec.Below(err)
	}
	name, err := jsonrec.OptString(f, "name")
	if err != nil {
		return compact.Part{}, jsonrec.Below(err)
	}
	var args json.RawMessage
	var extra map[string]json.RawMessage
	switch it.Type {
	case "function_call":
		s, err := jsonrec.OptString(f, "arguments")
		if err != nil {
			return compact.Part{}, jsonrec.Below(err)
		}
		var ok bool
		args, ok = Arguments(s)
		keep := "arguments"
		if !bytes.Equal(args, []byte(s)) {
			keep = "" // the string as sent stays in Extra
		}
		if !ok {
			it.Warnings = append(it.Warnings, jsonrec.ArgumentsWarning("", id))
		}
		extra = itemExtra(f, "type", "name", keep, "call_id")
	case "custom_tool_call":
		in, err := jsonrec.OptString(f, "input")
		if err != nil {
			return compact.Part{}, jsonrec.Below(err)
		}
		args = CustomInput(in)
		extra = jsonrec.Set(itemExtra(f, "type", "name", "input", "call_id"), ExtraCustomInput, json.RawMessage("true"))
	case "local_shell_call":
		if id == "" {
			id, _ = jsonrec.OptString(f, "id")
		}
		if name == "" {
			name = "local_shell"
		}
		args = objectOr(f, "action")
		extra = jsonrec.Set(itemExtra(f, "type", "name", "action", "call_id"), ExtraLocalShell, json.RawMessage("true"))
	case "tool_search_call":
		if name == "" {
			name = "tool_search"
		}
		args = objectOr(f, "arguments")
		extra = jsonrec.Set(itemExtra(f, "type", "arguments", "call_id"), ExtraToolSearch, json.RawMessage("true"))
	}
	if id == "" {
		return compact.Part{}, fmt.Errorf(".call_id: missing")
	}
	return compact.Part{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: id, Name: name, Arguments: args}, Extra: extra}, nil
}

// output maps a tool output.
func (it *ResponsesItem) output(f map[string]json.RawMessage) error {
	id, err := jsonrec.OptString(f, "call_id")
	if err != nil {
		return jsonrec.Below(err)
	}
	it.Kind = ItemOutput
	m := &compact.Message{Role: compact.RoleToolResult, ToolCallID: id, Extra: itemExtra(f, "type", "call_id", "output")}
	it.Message = m
	raw := bytes.TrimSpace(f["output"])
	switch {
	case len(raw) == 0 || jsonrec.IsNull(raw):
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf(".output: %w", err)
		}
		m.Content = []compact.Part{{Type: compact.PartText, Text: s}}
	case raw[0] == '[':
		if m.Content, it.Unknown, err = ResponsesContent(raw); err != nil {
			return fmt.Errorf(".output%w", err)
		}
	case raw[0] == '{':
		var o map[string]json.RawMessage
		if err := json.Unmarshal(raw, &o); err != nil {
			return fmt.Errorf(".output: %w", err)
		}
		if _, typed := o["type"]; typed {
			// One content item, such as a computer_screenshot.
			part, err := contentPart(o, raw)
			if err != nil {
				return fmt.Errorf(".output%w", err)
			}
			m.Content = []compact.Part{part}
			it.unknownPart(part)
			return nil
		}
		if items, ok := o["content_items"]; ok && !jsonrec.IsNull(items) {
			if m.Content, it.Unknown, err = ResponsesContent(items); err != nil {
				return fmt.Errorf(".output.content_items%w", err)
			}
		} else {
			s, err := jsonrec.OptString(o, "content")
			if err != nil {
				return fmt.Errorf(".output%w", jsonrec.Below(err))
			}
			m.Content = []compact.Part{{Type: compact.PartText, Text: s}}
		}
		if ok, err := jsonrec.OptBool(o, "success"); err == nil && !ok {
			if v, has := o["success"]; has && !jsonrec.IsNull(v) {
				m.IsError = true
			}
		}
		m.Extra = jsonrec.Set(m.Extra, "output", raw)
	default:
		return fmt.Errorf(".output: want a string, an array or an object, have %s", jsonrec.Abbrev(raw))
	}
	return nil
}

func (it *ResponsesItem) unknownPart(p compact.Part) {
	if p.Extra[ExtraPart] != nil {
		it.Unknown = append(it.Unknown, partType(p.Extra[ExtraPart]))
	}
}

// ResponsesContent maps a Responses content value: absent or null (no
// parts), a string (one text part) or an array of content items (see
// ReadResponsesItem), returning the type of each placeholder made. Errors
// are the rest of a path, starting with the index ("[2].text: ...") or
// ": ..." for the value itself.
func ResponsesContent(raw json.RawMessage) (parts []compact.Part, unknown []string, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || jsonrec.IsNull(raw) {
		return nil, nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, nil, fmt.Errorf(": %w", err)
		}
		return []compact.Part{{Type: compact.PartText, Text: s}}, nil, nil
	}
	if parts, ok, err := modelledContent(raw); ok {
		return parts, nil, err
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, nil, fmt.Errorf(": want an array of content items or a string, have %s", jsonrec.Abbrev(raw))
	}
	parts = make([]compact.Part, 0, len(items))
	for i, item := range items {
		var f map[string]json.RawMessage
		if json.Unmarshal(item, &f) != nil || f == nil {
			return nil, nil, fmt.Errorf("[%d]: want an object", i)
		}
		part, err := contentPart(f, item)
		if err != nil {
			return nil, nil, fmt.Errorf("[%d]%w", i, err)
		}
		if part.Extra[ExtraPart] != nil {
			unknown = append(unknown, partType(item))
		}
		parts = append(parts, part)
	}
	return parts, unknown, nil
}

// modelledContent is ResponsesContent's fast path for the usual array,
// whose items are all objects of a type mapped to a text or an image part:
// it decodes the array once, with no copy of each item as sent, which
// only a placeholder needs. ok is false for any other array, which
// ResponsesContent then maps item by item (with the same result and
// errors).
func modelledContent(raw json.RawMessage) (parts []compact.Part, ok bool, err error) {
	var items []map[string]json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil, false, nil
	}
	for _, f := range items {
		if f == nil {
			return nil, false, nil
		}
		switch string(bytes.TrimSpace(f["type"])) {
		case `"input_text"`, `"output_text"`, `"text"`, `"input_image"`, `"computer_screenshot"`:
		default:
			return nil, false, nil
		}
	}
	parts = make([]compact.Part, 0, len(items))
	for i, f := range items {
		part, err := contentPart(f, nil)
		if err != nil {
			return nil, true, fmt.Errorf("[%d]%w", i, err)
		}
		parts = append(parts, part)
	}
	return parts, true, nil
}

// contentPart maps one content item; raw is the item as sent (needed
// only for a type mapped to a placeholder).
func contentPart(f map[string]json.RawMessage, raw json.RawMessage) (compact.Part, error) {
	typ, err := jsonrec.OptString(f, "type")
	if err != nil {
		return compact.Part{}, jsonrec.Below(err)
	}
	switch typ {
	case "input_text", "output_text", "text":
		s, err := jsonrec.OptString(f, "text")
		if err != nil {
			return compact.Part{}, jsonrec.Below(err)
		}
		extra := jsonrec.Extras(f, "type", "text")
		if typ != "input_text" {
			extra = jsonrec.Set(extra, "contentType", f["type"])
		}
		return compact.Part{Type: compact.PartText, Text: s, Extra: extra}, nil
	case "input_image", "computer_screenshot":
		url, err := jsonrec.OptString(f, "image_url")
		if err != nil {
			return compact.Part{}, jsonrec.Below(err)
		}
		if mime, data, ok := jsonrec.SplitDataURL(url); ok {
			extra := jsonrec.Extras(f, "type", "image_url")
			if typ != "input_image" {
				extra = jsonrec.Set(extra, "contentType", f["type"])
			}
			return compact.Part{Type: compact.PartImage, Extra: extra, Image: &compact.Image{MimeType: mime, Data: data}}, nil
		}
		// A link or a file id: an image all the same, whose bytes are
		// not in the conversation.
		extra := jsonrec.Extras(f, "type")
		if typ != "input_image" {
			extra = jsonrec.Set(extra, "contentType", f["type"])
		}
		return compact.Part{Type: compact.PartImage, Extra: extra}, nil
	case "":
		return compact.Part{}, fmt.Errorf(".type: missing")
	}
	s, _ := jsonrec.OptString(f, "refusal")
	return placeholder(typ, s, raw), nil
}

// rawPart is a text part holding an item the mapping does not model, as
// JSON cut after maxRawText bytes; a cut item is kept whole in
// Extra[ExtraPart].
func rawPart(raw []byte) compact.Part {
	if len(raw) <= maxRawText {
		return compact.Part{Type: compact.PartText, Text: string(raw)}
	}
	text := string(raw[:maxRawText]) + fmt.Sprintf("... (%d more bytes)", len(raw)-maxRawText)
	return compact.Part{Type: compact.PartText, Text: text, Extra: map[string]json.RawMessage{ExtraPart: raw}}
}

// itemExtra returns the members of f other than keys, the item's "id" as
// "itemId".
func itemExtra(f map[string]json.RawMessage, keys ...string) map[string]json.RawMessage {
	var out map[string]json.RawMessage
outer:
	for k, v := range f {
		for _, kn := range keys {
			if k == kn {
				continue outer
			}
		}
		if k == "id" {
			k = "itemId"
		}
		out = jsonrec.Set(out, k, v)
	}
	return out
}

// objectOr returns the member key of f when it is a JSON object, else
// {key: the member, or null when it is missing}.
func objectOr(f map[string]json.RawMessage, key string) json.RawMessage {
	v := bytes.TrimSpace(f[key])
	if len(v) > 0 && v[0] == '{' && json.Valid(v) {
		return v
	}
	out, _ := json.Marshal(map[string]json.RawMessage{key: orNull(f[key])})
	return out
}

// orNull returns raw, or the JSON null when it is missing.
func orNull(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("null")
	}
	return raw
}
