package requestbody

import (
	"fmt"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/anthropic"
	"github.com/compactkit/compact/internal/jsonrec"
)

// anthropicMessage maps the i-th message of a Messages API body with the
// one mapping of that API (anthropic.Content): tool_result blocks become
// tool result messages, the runs of other blocks messages of the role, in
// order; the message's other members go to the first of those (or to an
// empty user message after the results). Errors start with the path
// inside the message.
func (r *reader) anthropicMessage(i int, rec jsonrec.Element) error {
	fields, role, err := roleOf(rec.Raw)
	if err != nil {
		return err
	}
	var crole compact.Role
	switch role {
	case "user":
		crole = compact.RoleUser
	case "assistant":
		crole = compact.RoleAssistant
	default:
		r.unknownRole(role, rec.Raw)
		return nil
	}
	if _, ok := fields["content"]; !ok {
		return fmt.Errorf(".content: missing")
	}
	msgs, err := anthropic.Content(crole, fields["content"])
	if err != nil {
		return err
	}
	where := fmt.Sprintf("%d: messages[%d]", jsonrec.Line(r.data, rec.Off), i)
	extra := jsonrec.Extras(fields, "role", "content")
	for _, m := range msgs {
		r.countUnmodelled(m)
		if m.Role == compact.RoleToolResult {
			r.result(m, where, "tool_use_id")
			continue
		}
		m.Extra, extra = extra, nil
		if m.Role == compact.RoleAssistant {
			for _, c := range m.ToolCalls() {
				r.call(c)
			}
			m.StopReason = stopReason(m)
			r.add(m)
		} else {
			r.addUser(m)
		}
	}
	if extra != nil {
		r.addUser(&compact.Message{Role: compact.RoleUser, Extra: extra})
	}
	return nil
}

// countUnmodelled counts the parts of m that stand for a block the
// mapping does not model (anthropic.BlockExtra) in Transcript.Unknown, as
// "<type> block".
func (r *reader) countUnmodelled(m *compact.Message) {
	for _, p := range m.Content {
		if typ := anthropic.UnmodelledType(p); typ != "" {
			r.t.Unknown[typ+" block"]++
		}
	}
}
