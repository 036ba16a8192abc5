package fakeupstream

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// API names the wire format of a request the fake served.
type API string

// The wire formats the fake speaks.
const (
	// Anthropic is the Messages API, POST /v1/messages.
	Anthropic API = "anthropic"
	// Chat is OpenAI Chat Completions, POST /v1/chat/completions.
	Chat API = "chat"
	// Responses is OpenAI Responses, POST /v1/responses.
	Responses API = "responses"
)

// body is what the fake reads of a request body. Items keep the list
// elements' bytes exactly as sent, so that tests can compare them.
type body struct {
	model        string
	stream       bool
	includeUsage bool
	items        []json.RawMessage
	tools        []tool
	// rawTools are the tools entries as sent.
	rawTools []json.RawMessage
	// system is Anthropic's top-level system (a string or a block list),
	// instructions the Responses field of that name; nil when absent.
	system       json.RawMessage
	instructions json.RawMessage
	// thinking is Anthropic's thinking object, nil when absent.
	thinking *thinkingConfig
	// compaction and contextManagement are Anthropic's top-level fields
	// of those names; cacheControl is the top-level automatic cache_control.
	compaction        json.RawMessage
	contextManagement json.RawMessage
	cacheControl      json.RawMessage
	// diagnostics is Anthropic's cache-diagnostics opt-in object, nil
	// when absent (see diagnose).
	diagnostics json.RawMessage
	// cred is the request's credential (see credential).
	cred string
}

// tool is one entry of a request's tools list: its name and the names and
// types of its parameters.
type tool struct {
	name  string
	props map[string]string // property name -> JSON schema "type" ("" when none)
}

// parseBody decodes the fields of a request body the fake acts on.
func parseBody(api API, raw []byte) (*body, error) {
	var top struct {
		Model         string            `json:"model"`
		Stream        bool              `json:"stream"`
		Messages      []json.RawMessage `json:"messages"`
		Input         json.RawMessage   `json:"input"`
		Tools         []json.RawMessage `json:"tools"`
		StreamOptions *struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		System            json.RawMessage `json:"system"`
		Instructions      json.RawMessage `json:"instructions"`
		Thinking          json.RawMessage `json:"thinking"`
		Compaction        json.RawMessage `json:"compaction"`
		ContextManagement json.RawMessage `json:"context_management"`
		CacheControl      json.RawMessage `json:"cache_control"`
		Diagnostics       json.RawMessage `json:"diagnostics"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, err
	}
	b := &body{model: top.Model, stream: top.Stream, rawTools: top.Tools, system: top.System,
		instructions: top.Instructions, compaction: top.Compaction,
		contextManagement: top.ContextManagement, cacheControl: top.CacheControl, diagnostics: top.Diagnostics}
	if api == Anthropic && len(top.Thinking) > 0 && top.Thinking[0] == '{' {
		b.thinking = new(thinkingConfig)
		if err := json.Unmarshal(top.Thinking, b.thinking); err != nil {
			return nil, fmt.Errorf("thinking: %w", err)
		}
	}
	if top.StreamOptions != nil {
		b.includeUsage = top.StreamOptions.IncludeUsage
	}
	switch api {
	case Responses:
		// input is a string or a list; a string has no items.
		if len(top.Input) > 0 && top.Input[0] == '[' {
			if err := json.Unmarshal(top.Input, &b.items); err != nil {
				return nil, err
			}
		}
	default:
		b.items = top.Messages
	}
	for _, t := range top.Tools {
		if tl, ok := parseTool(api, t); ok {
			b.tools = append(b.tools, tl)
		}
	}
	return b, nil
}

// parseTool reads one tools entry; ok is false for entries without a name.
func parseTool(api API, raw json.RawMessage) (tool, bool) {
	type schema struct {
		Properties map[string]struct {
			Type json.RawMessage `json:"type"`
		} `json:"properties"`
	}
	var t struct {
		Name        string  `json:"name"`
		InputSchema *schema `json:"input_schema"` // Anthropic
		Parameters  *schema `json:"parameters"`   // Responses
		Function    *struct {
			Name       string  `json:"name"`
			Parameters *schema `json:"parameters"`
		} `json:"function"` // Chat
	}
	if json.Unmarshal(raw, &t) != nil {
		return tool{}, false
	}
	var s *schema
	switch {
	case api == Chat && t.Function != nil:
		t.Name, s = t.Function.Name, t.Function.Parameters
	case api == Anthropic:
		s = t.InputSchema
	default:
		s = t.Parameters
	}
	if t.Name == "" {
		return tool{}, false
	}
	tl := tool{name: t.Name, props: map[string]string{}}
	if s != nil {
		for name, p := range s.Properties {
			var typ string
			_ = json.Unmarshal(p.Type, &typ) // a list of types reads as ""
			tl.props[name] = typ
		}
	}
	return tl, true
}

// pickTool returns the first tool of the request whose name is in names
// (case-insensitively), or nil.
func pickTool(tools []tool, names []string) *tool {
	for _, want := range names {
		for i := range tools {
			if strings.EqualFold(tools[i].name, want) {
				return &tools[i]
			}
		}
	}
	return nil
}

// shellArgs encodes the arguments of a call to t running cmd: the command
// goes in "command" (a string, or ["bash","-lc",cmd] when the schema wants
// an array) or else in "cmd"; a "description" is added when the tool has
// one (opencode requires it).
func shellArgs(t *tool, cmd string, step int) string {
	args := ordered{}
	switch typ, ok := t.props["command"]; {
	case ok && typ == "array":
		args = append(args, kv{"command", []string{"bash", "-lc", cmd}})
	case ok:
		args = append(args, kv{"command", cmd})
	default:
		args = append(args, kv{"cmd", cmd})
	}
	if _, ok := t.props["description"]; ok {
		args = append(args, kv{"description", "Print step " + strconv.Itoa(step)})
	}
	out, _ := json.Marshal(args)
	return string(out)
}

// lastToolResult returns the text of the last tool result in the list
// (Anthropic tool_result blocks of the last message holding any, the last
// Chat tool message, the last Responses *_call_output item); ok is false
// when the list holds none.
func lastToolResult(api API, items []json.RawMessage) (text string, ok bool) {
	for i := len(items) - 1; i >= 0; i-- {
		var m struct {
			Role    string          `json:"role"`
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
			Output  json.RawMessage `json:"output"`
		}
		if json.Unmarshal(items[i], &m) != nil {
			continue
		}
		switch api {
		case Anthropic:
			var blocks []struct {
				Type    string          `json:"type"`
				Content json.RawMessage `json:"content"`
			}
			if json.Unmarshal(m.Content, &blocks) != nil {
				continue
			}
			var parts []string
			for _, b := range blocks {
				if b.Type == "tool_result" {
					parts = append(parts, contentText(b.Content))
				}
			}
			if len(parts) > 0 {
				return strings.Join(parts, "\n"), true
			}
		case Chat:
			if m.Role == "tool" {
				return contentText(m.Content), true
			}
		case Responses:
			if strings.HasSuffix(m.Type, "_call_output") {
				return contentText(m.Output), true
			}
		}
	}
	return "", false
}

// summaryRequested reports whether the last list item carries an
// instruction (text outside tool results) that asks for a summary: an
// agent compacting its own history sends its tools along but wants text
// back (Claude Code: "Respond with TEXT ONLY").
func summaryRequested(api API, items []json.RawMessage) bool {
	text, ok := lastUserText(items)
	return ok && strings.Contains(strings.ToLower(text), "summar")
}

// lastUserText returns the text of the last list item when it is a user
// message: its string content, or its text parts joined by newlines.
func lastUserText(items []json.RawMessage) (string, bool) {
	if len(items) == 0 {
		return "", false
	}
	var m struct {
		Role    string          `json:"role"`
		Type    string          `json:"type"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(items[len(items)-1], &m) != nil || m.Role != "user" {
		return "", false
	}
	var text string
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(m.Content, &text) != nil {
		if json.Unmarshal(m.Content, &blocks) != nil {
			return "", false
		}
		for _, b := range blocks {
			if b.Type == "text" || b.Type == "input_text" {
				text += b.Text + "\n"
			}
		}
	}
	return text, true
}

// Prompt returns the text of the last message of a request body of api
// when it is a user message ("" otherwise): for a summary request of
// compact's, the whole prompt (see Handover).
func Prompt(api API, raw []byte) string {
	b, err := parseBody(api, raw)
	if err != nil {
		return ""
	}
	text, _ := lastUserText(b.items)
	return text
}

// contentText flattens a content value: a string, or a list of parts whose
// "text" fields are joined.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return string(raw)
	}
	var out []string
	for _, p := range parts {
		out = append(out, p.Text)
	}
	return strings.Join(out, "\n")
}

// highestStep returns the largest n of the "STEP-n" markers in text, and
// false when there is none.
func highestStep(text string) (int, bool) {
	const marker = "STEP-"
	best, found := 0, false
	for {
		i := strings.Index(text, marker)
		if i < 0 {
			return best, found
		}
		text = text[i+len(marker):]
		j := 0
		for j < len(text) && text[j] >= '0' && text[j] <= '9' {
			j++
		}
		if n, err := strconv.Atoi(text[:j]); err == nil && (!found || n > best) {
			best, found = n, true
		}
	}
}

// kv and ordered encode JSON objects with their keys in a fixed order, as
// the providers send them.
type kv struct {
	k string
	v any
}

type ordered []kv

// MarshalJSON writes the pairs in order.
func (o ordered) MarshalJSON() ([]byte, error) {
	buf := []byte{'{'}
	for i, p := range o {
		if i > 0 {
			buf = append(buf, ',')
		}
		k, _ := json.Marshal(p.k)
		buf = append(buf, k...)
		buf = append(buf, ':')
		v, err := json.Marshal(p.v)
		if err != nil {
			return nil, err
		}
		buf = append(buf, v...)
	}
	return append(buf, '}'), nil
}
