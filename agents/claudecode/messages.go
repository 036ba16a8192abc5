package claudecode

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/anthropic"
	"github.com/compactkit/compact/internal/jsonrec"
)

// apiMessage is the message member of user and assistant records.
func apiMessage(r *record) (map[string]json.RawMessage, error) {
	m, ok, err := jsonrec.OptObject(r.Fields, "message")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("field message: missing")
	}
	return m, nil
}

// user converts a user record: a prompt, tool results, or a compaction
// summary.
func (b *builder) user(r *record) error {
	msg, err := apiMessage(r)
	if err != nil {
		return err
	}
	summary, err := jsonrec.OptBool(r.Fields, "isCompactSummary")
	if err != nil {
		return err
	}
	if summary {
		list, err := anthropic.Blocks(msg["content"])
		if err != nil {
			return fmt.Errorf("field message.content%w", err)
		}
		var parts []string
		for _, bl := range list {
			if s, _ := jsonrec.OptString(bl.Fields, "text"); s != "" {
				parts = append(parts, s)
			}
		}
		return b.compaction(r, strings.Join(parts, "\n"))
	}
	msgs, err := anthropic.Content(compact.RoleUser, msg["content"])
	if err != nil {
		return fmt.Errorf("field message%w", err)
	}
	extra := recordExtra(r)
	if len(msg) > 2 {
		if rest := jsonrec.Extras(msg, "role", "content"); rest != nil {
			raw, _ := json.Marshal(rest)
			extra["apiMessage"] = raw
		}
	}
	isMeta, err := jsonrec.OptBool(r.Fields, "isMeta")
	if err != nil {
		return err
	}
	// Tool results each become a message; the other blocks between them a
	// user message, or several when Claude Code's reminders are among them.
	first := true
	onlyResults := true
	for _, m := range msgs {
		if m.Role != compact.RoleToolResult {
			onlyResults = false
		}
	}
	emit := func(m *compact.Message, resultOnly bool) {
		if first {
			m.Extra = jsonrec.Merge(m.Extra, extra)
			first = false
		} else {
			m.Extra = jsonrec.Merge(m.Extra, map[string]json.RawMessage{"uuid": r.Fields["uuid"]})
		}
		it := b.message(r, m)
		it.resultOnly = resultOnly
		b.add(it, r)
	}
	for _, m := range msgs {
		if m.Role == compact.RoleToolResult {
			m = b.toolResult(r, m)
			emit(m, onlyResults && m.Role == compact.RoleToolResult)
			continue
		}
		for _, run := range compact.SplitReminders(m.Content) {
			u := &compact.Message{Role: compact.RoleUser, Content: run.Parts}
			if run.Reminder {
				u.MarkHarnessNote(Format, "system_reminder")
			} else {
				markNote(u, isMeta)
			}
			emit(u, false)
		}
	}
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
	case compact.IsInterruptionNotice(s):
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

// toolResult names the tool result message of a tool_result block after
// its call, or, when no call came before it, turns it into a harness note
// (see compact.OrphanResult) with a warning.
func (b *builder) toolResult(r *record, m *compact.Message) *compact.Message {
	name, ok := b.calls[m.ToolCallID]
	m.ToolName = name
	if !ok {
		b.t.Warnings = append(b.t.Warnings, fmt.Sprintf("%s:%d: tool_result %q has no tool_use before it; kept as a harness note", b.name, r.Line, m.ToolCallID))
		return compact.OrphanResult(Format, m)
	}
	return m
}

// assistant converts an assistant record, joining it to the earlier lines
// of the same API response.
func (b *builder) assistant(r *record) error {
	msg, err := apiMessage(r)
	if err != nil {
		return err
	}
	msgs, err := anthropic.Content(compact.RoleAssistant, msg["content"])
	if err != nil {
		return fmt.Errorf("field message%w", err)
	}
	parts := msgs[0].Content // an assistant message maps onto one message
	for _, c := range msgs[0].ToolCalls() {
		b.calls[c.ID] = c.Name
	}
	id, err := jsonrec.OptString(msg, "id")
	if err != nil {
		return fmt.Errorf("field message%w", jsonrec.Below(err))
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
		line, _ := json.Marshal(jsonrec.Extras(r.Fields, "type", "message", "isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch", "slug"))
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
		return fmt.Errorf("field message%w", jsonrec.Below(err))
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
	if fields, ok, err := jsonrec.OptObject(msg, "usage"); err != nil {
		return fmt.Errorf("field message%w", jsonrec.Below(err))
	} else if ok {
		var u anthropic.Usage
		if err := json.Unmarshal(msg["usage"], &u); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) && te.Field != "" {
				return fmt.Errorf("field message.usage.%s: want an integer, have %s", te.Field, jsonrec.Abbrev(fields[te.Field]))
			}
			return fmt.Errorf("field message.usage: %w", err)
		}
		usage := u.Usage()
		m.Usage = &usage
	}
	stop, err := jsonrec.OptString(msg, "stop_reason")
	if err != nil {
		return fmt.Errorf("field message%w", jsonrec.Below(err))
	}
	if m.StopReason = anthropic.StopReason(stop); m.StopReason == "" {
		m.StopReason = compact.StopEnd
		if len(m.ToolCalls()) > 0 {
			m.StopReason = compact.StopToolUse
		}
	}
	if apiErr, _ := jsonrec.OptBool(r.Fields, "isApiErrorMessage"); apiErr {
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
