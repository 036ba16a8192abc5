package claudecode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
)

// apiMessage is the message member of user and assistant records.
func apiMessage(r *record) (map[string]json.RawMessage, error) {
	m, ok, err := jsonrec.OptObject(r.fields, "message")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("field message: missing")
	}
	return m, nil
}

// block is one content block as stored.
type block struct {
	typ    string
	fields map[string]json.RawMessage
}

// blocks decodes message.content: a string is one text block.
func blocks(msg map[string]json.RawMessage) (text string, list []block, isText bool, err error) {
	raw, ok := msg["content"]
	if !ok || jsonrec.IsNull(raw) {
		return "", nil, false, nil
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		if err := json.Unmarshal(raw, &text); err != nil {
			return "", nil, false, fmt.Errorf("field message.content: %w", err)
		}
		return text, nil, true, nil
	}
	var items []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return "", nil, false, fmt.Errorf("field message.content: want a string or an array of blocks, have %s", jsonrec.Abbrev(raw))
	}
	for i, f := range items {
		if f == nil {
			return "", nil, false, fmt.Errorf("field message.content[%d]: want an object", i)
		}
		t, err := jsonrec.OptString(f, "type")
		if err != nil {
			return "", nil, false, fmt.Errorf("field message.content[%d].%w", i, trimField(err))
		}
		list = append(list, block{typ: t, fields: f})
	}
	return "", list, false, nil
}

// trimField turns "field x: ..." into "x: ..." for nesting.
func trimField(err error) error {
	return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "field "))
}

// user converts a user record: a prompt, tool results, or a compaction
// summary.
func (b *builder) user(r *record) error {
	msg, err := apiMessage(r)
	if err != nil {
		return err
	}
	text, list, isText, err := blocks(msg)
	if err != nil {
		return err
	}
	summary, err := jsonrec.OptBool(r.fields, "isCompactSummary")
	if err != nil {
		return err
	}
	if summary {
		if !isText {
			var parts []string
			for _, bl := range list {
				if s, _ := jsonrec.OptString(bl.fields, "text"); s != "" {
					parts = append(parts, s)
				}
			}
			text = strings.Join(parts, "\n")
		}
		return b.compaction(r, text)
	}
	extra := recordExtra(r)
	if len(msg) > 2 {
		if rest := jsonrec.Extras(msg, "role", "content"); rest != nil {
			raw, _ := json.Marshal(rest)
			extra["apiMessage"] = raw
		}
	}
	isMeta, err := jsonrec.OptBool(r.fields, "isMeta")
	if err != nil {
		return err
	}
	// Tool results each become a message; the other blocks between them a
	// user message, or several when Claude Code's reminders are among them.
	first := true
	var pending []compact.Part
	onlyResults := !isText
	for _, bl := range list {
		if bl.typ != "tool_result" {
			onlyResults = false
		}
	}
	emit := func(m *compact.Message, resultOnly bool) {
		if first {
			m.Extra = extra
			first = false
		} else {
			m.Extra = map[string]json.RawMessage{"uuid": r.fields["uuid"]}
		}
		it := b.message(r, m)
		it.resultOnly = resultOnly
		b.add(it, r)
	}
	flush := func() {
		for _, run := range compact.SplitReminders(pending) {
			m := &compact.Message{Role: compact.RoleUser, Content: run.Parts}
			if run.Reminder {
				m.MarkHarnessNote(Format, "system_reminder")
			} else {
				markNote(m, isMeta)
			}
			emit(m, false)
		}
		pending = nil
	}
	if isText {
		pending = compact.TextMessage(compact.RoleUser, text).Content
		flush()
		return nil
	}
	for i, bl := range list {
		if bl.typ != "tool_result" {
			p, err := part(bl)
			if err != nil {
				return fmt.Errorf("field message.content[%d].%w", i, trimField(err))
			}
			pending = append(pending, p)
			continue
		}
		flush()
		m, err := b.toolResult(r, bl)
		if err != nil {
			return fmt.Errorf("field message.content[%d].%w", i, trimField(err))
		}
		emit(m, onlyResults && m.Role == compact.RoleToolResult)
	}
	flush()
	if first {
		// An empty content array: keep the record as an empty prompt.
		m := &compact.Message{Role: compact.RoleUser, Extra: extra}
		b.add(b.message(r, m), r)
	}
	return nil
}

// markNote turns a user message that holds Claude Code's own text rather
// than the user's words into a harness note (see compact.IsHarnessNote): a
// record marked isMeta (the caveat before a local command's output, an
// expanded command or skill prompt, a reminder), the <command-name>
// wrappers of a slash command and the <local-command-stdout> of its
// output, and the "[Request interrupted by user]" notices. Images or
// other parts beside such text keep the message the user's.
func markNote(m *compact.Message, isMeta bool) {
	kind := ""
	for _, p := range m.Content {
		if p.Type != compact.PartText {
			return
		}
		k := noteKind(p.Text)
		if k == "" && !isMeta {
			return
		}
		if kind == "" {
			kind = k
		}
	}
	switch {
	case len(m.Content) == 0:
		return
	case kind == "":
		kind = "meta"
	}
	m.MarkHarnessNote(Format, kind)
}

// noteKind names the kind of Claude Code's own text that s is, "" when it
// may be the user's.
func noteKind(s string) string {
	s = strings.TrimSpace(s)
	switch {
	case strings.HasPrefix(s, "[Request interrupted by user") && strings.HasSuffix(s, "]") && !strings.Contains(s, "\n"):
		return "interrupted"
	case strings.HasPrefix(s, "<local-command-caveat>"):
		return "caveat"
	case strings.HasPrefix(s, "<command-name>"), strings.HasPrefix(s, "<command-message>"):
		return "command"
	case strings.HasPrefix(s, "<local-command-stdout>"), strings.HasPrefix(s, "<local-command-stderr>"):
		return "command-output"
	}
	return ""
}

// toolResult converts a tool_result block.
func (b *builder) toolResult(r *record, bl block) (*compact.Message, error) {
	id, err := jsonrec.OptString(bl.fields, "tool_use_id")
	if err != nil {
		return nil, err
	}
	isErr, err := jsonrec.OptBool(bl.fields, "is_error")
	if err != nil {
		return nil, err
	}
	var content []compact.Part
	if raw, ok := bl.fields["content"]; ok && !jsonrec.IsNull(raw) {
		raw = bytes.TrimSpace(raw)
		if len(raw) > 0 && raw[0] == '"' {
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, fmt.Errorf("field content: %w", err)
			}
			content = []compact.Part{{Type: compact.PartText, Text: s}}
		} else {
			_, inner, _, err := blocks(map[string]json.RawMessage{"content": raw})
			if err != nil {
				return nil, fmt.Errorf("field content: %w", trimField(err))
			}
			for _, ib := range inner {
				p, err := part(ib)
				if err != nil {
					return nil, fmt.Errorf("field content.%w", trimField(err))
				}
				content = append(content, p)
			}
		}
	}
	name, ok := b.calls[id]
	m := &compact.Message{Role: compact.RoleToolResult, ToolCallID: id, ToolName: name, IsError: isErr, Content: content}
	if !ok {
		b.t.Warnings = append(b.t.Warnings, fmt.Sprintf("%s:%d: tool_result %q has no tool_use before it; kept as a harness note", b.name, r.line, id))
		return compact.OrphanResult(Format, m), nil
	}
	return m, nil
}

// assistant converts an assistant record, joining it to the earlier lines
// of the same API response.
func (b *builder) assistant(r *record) error {
	msg, err := apiMessage(r)
	if err != nil {
		return err
	}
	text, list, isText, err := blocks(msg)
	if err != nil {
		return err
	}
	var parts []compact.Part
	if isText {
		parts = []compact.Part{{Type: compact.PartText, Text: text}}
	}
	for i, bl := range list {
		p, err := part(bl)
		if err != nil {
			return fmt.Errorf("field message.content[%d].%w", i, trimField(err))
		}
		if p.Type == compact.PartToolCall {
			b.calls[p.ToolCall.ID] = p.ToolCall.Name
		}
		parts = append(parts, p)
	}
	id, err := jsonrec.OptString(msg, "id")
	if err != nil {
		return fmt.Errorf("field message.%w", trimField(err))
	}
	it := b.responses[id]
	if id == "" || it == nil {
		m := &compact.Message{Role: compact.RoleAssistant, Provider: "anthropic", Extra: recordExtra(r)}
		it = b.message(r, m)
		b.add(it, r)
		if id != "" {
			b.responses[id] = it
		}
	} else {
		it.recs = append(it.recs, r)
		if r.uuid != "" {
			b.byUUID[r.uuid] = it
		}
		var lines []json.RawMessage
		if raw, ok := it.e.Message.Extra["lines"]; ok {
			_ = json.Unmarshal(raw, &lines)
		}
		line, _ := json.Marshal(jsonrec.Extras(r.fields, "type", "message", "isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch", "slug"))
		lines = append(lines, line)
		raw, _ := json.Marshal(lines)
		it.e.Message.Extra["lines"] = raw
	}
	m := it.e.Message
	m.Content = append(m.Content, parts...)
	return b.finish(r, m, msg)
}

// finish sets what the latest line of a response decides: model, usage,
// stop reason, error.
func (b *builder) finish(r *record, m *compact.Message, msg map[string]json.RawMessage) error {
	model, err := jsonrec.OptString(msg, "model")
	if err != nil {
		return fmt.Errorf("field message.%w", trimField(err))
	}
	if model != "" {
		m.Model = model
		if model != "<synthetic>" && b.t.Model == "" {
			b.t.Model, b.t.Provider = model, "anthropic"
		}
	}
	if rest := jsonrec.Extras(msg, "content"); rest != nil {
		raw, _ := json.Marshal(rest)
		m.Extra["apiMessage"] = raw
	}
	if u, ok, err := jsonrec.OptObject(msg, "usage"); err != nil {
		return fmt.Errorf("field message.%w", trimField(err))
	} else if ok {
		var usage compact.Usage
		for key, dst := range map[string]*int{
			"input_tokens": &usage.Input, "output_tokens": &usage.Output,
			"cache_read_input_tokens": &usage.CacheRead, "cache_creation_input_tokens": &usage.CacheWrite,
		} {
			v, err := jsonrec.OptInt(u, key)
			if err != nil {
				return fmt.Errorf("field message.usage.%w", trimField(err))
			}
			*dst = v
		}
		m.Usage = &usage
	}
	stop, err := jsonrec.OptString(msg, "stop_reason")
	if err != nil {
		return fmt.Errorf("field message.%w", trimField(err))
	}
	switch stop {
	case "max_tokens", "model_context_window_exceeded":
		m.StopReason = compact.StopLength
	case "tool_use":
		m.StopReason = compact.StopToolUse
	case "end_turn", "stop_sequence", "pause_turn", "refusal":
		m.StopReason = compact.StopEnd
	default:
		m.StopReason = compact.StopEnd
		if len(m.ToolCalls()) > 0 {
			m.StopReason = compact.StopToolUse
		}
	}
	if apiErr, _ := jsonrec.OptBool(r.fields, "isApiErrorMessage"); apiErr {
		m.StopReason = compact.StopError
		text := m.Text()
		if text == "" {
			text = "API error"
		}
		if m.Meta == nil {
			m.Meta = &compact.MessageMeta{}
		}
		m.Meta.ErrorMessage = text
	}
	return nil
}

// part converts a content block other than tool_result.
func part(bl block) (compact.Part, error) {
	f := bl.fields
	switch bl.typ {
	case "text":
		s, err := jsonrec.OptString(f, "text")
		if err != nil {
			return compact.Part{}, err
		}
		return compact.Part{Type: compact.PartText, Text: s, Extra: jsonrec.Extras(f, "type", "text")}, nil
	case "thinking":
		s, err := jsonrec.OptString(f, "thinking")
		if err != nil {
			return compact.Part{}, err
		}
		return compact.Part{Type: compact.PartThinking, Thinking: s, Extra: jsonrec.Extras(f, "type", "thinking")}, nil
	case "redacted_thinking":
		// No readable text; the encrypted data stays in Extra.
		return compact.Part{Type: compact.PartThinking, Extra: jsonrec.Extras(f)}, nil
	case "tool_use":
		id, err := jsonrec.OptString(f, "id")
		if err != nil {
			return compact.Part{}, err
		}
		name, err := jsonrec.OptString(f, "name")
		if err != nil {
			return compact.Part{}, err
		}
		args := bytes.TrimSpace(f["input"])
		if len(args) == 0 || jsonrec.IsNull(args) {
			args = []byte("{}")
		} else if args[0] != '{' {
			// Arguments are an object; another value is wrapped.
			wrapped, _ := json.Marshal(map[string]json.RawMessage{"input": args})
			args = wrapped
		}
		return compact.Part{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)},
			Extra: jsonrec.Extras(f, "type", "id", "name", "input")}, nil
	case "image":
		src, ok, err := jsonrec.OptObject(f, "source")
		if err != nil {
			return compact.Part{}, err
		}
		p := compact.Part{Type: compact.PartImage, Extra: jsonrec.Extras(f, "type", "source")}
		if st, _ := jsonrec.OptString(src, "type"); ok && st == "base64" {
			p.Image = &compact.Image{}
			if p.Image.MimeType, err = jsonrec.OptString(src, "media_type"); err != nil {
				return compact.Part{}, fmt.Errorf("field source.%w", trimField(err))
			}
			if p.Image.Data, err = jsonrec.OptString(src, "data"); err != nil {
				return compact.Part{}, fmt.Errorf("field source.%w", trimField(err))
			}
			return p, nil
		}
		if p.Extra == nil {
			p.Extra = make(map[string]json.RawMessage, 1)
		}
		if raw, present := f["source"]; present {
			p.Extra["source"] = raw
		}
		return p, nil
	}
	// Other blocks (documents, server tool blocks, ...) keep their type
	// and every member.
	typ := bl.typ
	if typ == "" {
		typ = "unknown"
	}
	return compact.Part{Type: compact.PartType(typ), Extra: jsonrec.Extras(f, "type")}, nil
}
