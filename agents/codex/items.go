package codex

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
	"github.com/compactkit/compact/openai"
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

// item converts a response item. What the item means is package openai's
// (openai.ReadResponsesItem, the mapping the proxy measures with); this
// reader adds what only a rollout has: responses joined across lines and
// closed by inputs, Codex's own items and injected context, the line's
// timestamp and envelope members, and orphan outputs.
func (b *builder) item(r *record) error {
	switch r.ptype {
	case "ghost_snapshot", "compaction", "compaction_summary", "context_compaction", "compaction_trigger",
		"agent_message", "additional_tools":
		b.custom(r, r.ptype)
		return nil
	}
	raw := r.Fields["payload"]
	if raw == nil {
		raw = r.Raw // an early rollout's bare line: the item is the line
	}
	// r.payload is raw decoded already (decodeRecord), except for a null
	// payload, which the mapping reports.
	var it *openai.ResponsesItem
	var err error
	if jsonrec.IsNull(raw) {
		it, err = openai.ReadResponsesItem(raw)
	} else {
		it, err = openai.ReadResponsesFields(raw, r.payload)
	}
	if err != nil {
		return fmt.Errorf("field payload%w", err)
	}
	env := envelope(r)
	m := it.Message
	switch it.Kind {
	case openai.ItemModel:
		resp := b.open(r)
		for _, p := range m.Content {
			p.Extra = merge(p.Extra, env)
			if p.Type == compact.PartToolCall {
				b.calls[p.ToolCall.ID] = p.ToolCall.Name
			}
			resp.Content = append(resp.Content, p)
		}
		return nil
	case openai.ItemOutput:
		if r.ptype == "tool_search_output" && b.calls[m.ToolCallID] == "" {
			b.custom(r, r.ptype)
			return nil
		}
		b.close()
		return b.output(r, m, env)
	case openai.ItemInput:
		b.close()
		b.input(r, it.Role, m, env)
		return nil
	}
	if r.ptype == "tool_search_output" {
		// A search the provider ran: nothing to pair.
		b.custom(r, r.ptype)
		return nil
	}
	kind := "response_item." + r.ptype
	b.unknown(kind)
	b.custom(r, kind)
	return nil
}

// input adds a user, developer or system message: a user's prompt, or,
// for the other roles and the context Codex injects as user text, a
// harness note.
func (b *builder) input(r *record, role string, m *compact.Message, env map[string]json.RawMessage) {
	m.Timestamp = jsonrec.Millis(r.timestamp)
	m.Extra = merge(m.Extra, env)
	if role != "user" {
		m.Extra = setExtra(m.Extra, "codexRole", quote(role))
	}
	tag := injected(m.Content)
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
}

// output adds a tool output m, named after its call; one whose call is
// missing becomes a harness note.
func (b *builder) output(r *record, m *compact.Message, env map[string]json.RawMessage) error {
	m.Timestamp = jsonrec.Millis(r.timestamp)
	m.Extra = merge(m.Extra, env)
	id := m.ToolCallID
	name, ok := b.calls[id]
	if !ok {
		b.t.Warnings = append(b.t.Warnings, fmt.Sprintf("%s:%d: %s %q has no call before it; kept as a harness note", b.name, r.Line, r.ptype, id))
		m.Extra = setExtra(m.Extra, "call_id", quote(id))
		m = compact.OrphanResult(Format, m)
	} else {
		m.ToolName = name
	}
	b.add(&compact.Entry{Kind: compact.KindMessage, Message: m}, r)
	return nil
}

// envelope returns the line's own members beside timestamp, type and
// payload (an ordinal), as "codex.<name>"; none for an early rollout's
// bare line.
func envelope(r *record) map[string]json.RawMessage {
	var out map[string]json.RawMessage
	if _, enveloped := r.Fields["payload"]; enveloped {
		for k, v := range jsonrec.Extras(r.Fields, "timestamp", "type", "payload") {
			out = setExtra(out, "codex."+k, v)
		}
	}
	return out
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

func quote(s string) json.RawMessage {
	out, _ := json.Marshal(s)
	return out
}
