package openai

import (
	"strconv"

	"github.com/compactkit/compact"
)

// Calls pairs the tool results of one conversation with the calls before
// them. Feed it every message in order with Add. The zero value is ready
// to use.
//
// It is the part of the mapping that needs more than one message: a
// result names the tool of its call (Chat tool messages may carry the
// name, Responses outputs never do, and summaries print it), and Chat's
// legacy function_call, which has no id, gets "function_call_N" (N
// counting such calls from 1), which the "function" message after it
// answers.
type Calls struct {
	names  map[string]string
	legacy int
}

// Add reads m in its place in the conversation: it records the calls of
// an assistant message, giving legacy calls their ids, and gives a tool
// result the id of the latest legacy call (when it answers one) and the
// name of its call (when it has none). It reports whether m is a tool
// result whose call came before it; false for every other message.
//
// Add changes m's own fields and replaces, never modifies, the parts it
// numbers, so m may be a shallow copy of a message shared with others.
func (c *Calls) Add(m *compact.Message) (paired bool) {
	if c.names == nil {
		c.names = map[string]string{}
	}
	switch m.Role {
	case compact.RoleAssistant:
		copied := false
		for i := range m.Content {
			p := &m.Content[i]
			if p.Type != compact.PartToolCall || p.ToolCall == nil {
				continue
			}
			if p.ToolCall.ID == "" && p.Extra[ExtraLegacyCall] != nil {
				if !copied {
					m.Content = append([]compact.Part(nil), m.Content...)
					p, copied = &m.Content[i], true
				}
				c.legacy++
				tc := *p.ToolCall
				tc.ID = legacyID(c.legacy)
				p.ToolCall = &tc
			}
			c.names[p.ToolCall.ID] = p.ToolCall.Name
		}
	case compact.RoleToolResult:
		if m.ToolCallID == "" && m.Extra[ExtraLegacyResult] != nil {
			m.ToolCallID = legacyID(c.legacy)
		}
		name, ok := c.names[m.ToolCallID]
		if ok && m.ToolName == "" {
			m.ToolName = name
		}
		return ok
	}
	return false
}

// legacyID is the id given to the n-th legacy function call.
func legacyID(n int) string { return "function_call_" + strconv.Itoa(n) }
