package compact

import (
	"encoding/json"
	"fmt"
	"strings"
)

// builder makes linear synthetic paths for tests.
type builder struct {
	entries []*Entry
	n       int
}

func (b *builder) add(e *Entry) *Entry {
	b.n++
	if e.ID == "" {
		e.ID = fmt.Sprintf("e%d", b.n)
	}
	if len(b.entries) > 0 {
		e.ParentID = b.entries[len(b.entries)-1].ID
	}
	b.entries = append(b.entries, e)
	return e
}

func (b *builder) msg(m *Message) *Entry { return b.add(&Entry{Kind: KindMessage, Message: m}) }

// user adds a user message of about tokens tokens.
func (b *builder) user(tokens int) *Entry {
	return b.msg(TextMessage(RoleUser, strings.Repeat("u", tokens*4)))
}

// assistant adds an assistant text message of about tokens tokens.
func (b *builder) assistant(tokens int) *Entry {
	m := TextMessage(RoleAssistant, strings.Repeat("a", tokens*4))
	m.StopReason = StopEnd
	return b.msg(m)
}

// call adds an assistant message with one tool call, and returns the call id.
func (b *builder) call(name, args string) string {
	id := fmt.Sprintf("call%d", b.n+1)
	m := &Message{Role: RoleAssistant, StopReason: StopToolUse, Content: []Part{{Type: PartToolCall,
		ToolCall: &ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}}}}
	b.msg(m)
	return id
}

// result adds a tool result of about tokens tokens.
func (b *builder) result(callID, name string, tokens int) *Entry {
	m := TextMessage(RoleToolResult, strings.Repeat("r", tokens*4))
	m.ToolCallID, m.ToolName = callID, name
	return b.msg(m)
}

func (b *builder) meta(kind EntryKind) *Entry {
	return b.add(&Entry{Kind: kind, Meta: &EntryMeta{ThinkingLevel: "high"}})
}

func (b *builder) compaction(summary, firstKept string) *Entry {
	return b.add(&Entry{Kind: KindCompaction, Compaction: &Compaction{Summary: summary, FirstKeptID: firstKept}})
}

func (b *builder) path() []*Entry { return b.entries }

func indexOf(path []*Entry, id string) int {
	for i, e := range path {
		if e.ID == id {
			return i
		}
	}
	return -1
}
