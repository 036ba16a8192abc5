package requestbody

import (
	"fmt"

	"github.com/compactkit/compact/internal/jsonrec"
	"github.com/compactkit/compact/openai"
)

// chatMessage maps the i-th message of a Chat Completions body with
// openai.ReadChatMessage, the mapping the proxy measures with. System and
// developer messages, and roles the reader does not know, are kept as
// custom entries. Errors start with the path inside the message
// (".content: ...").
func (r *reader) chatMessage(i int, rec jsonrec.Element) error {
	_, role, err := roleOf(rec.Raw)
	if err != nil {
		return err
	}
	switch role {
	case "system", "developer":
		r.custom("system", rec.Raw)
		return nil
	case "user", "assistant", "tool", "function":
	default:
		r.unknownRole(role, rec.Raw)
		return nil
	}
	cm, err := openai.ReadChatMessage(rec.Raw)
	if err != nil {
		return err
	}
	for _, typ := range cm.Unknown {
		r.t.Unknown[typ+" block"]++
	}
	for _, w := range cm.Warnings {
		r.t.Warnings = append(r.t.Warnings, r.name+": "+w)
	}
	m := cm.Message
	switch role {
	case "user":
		r.addUser(m)
	case "assistant":
		r.pairs.Add(m)
		for _, tc := range m.ToolCalls() {
			r.call(tc)
		}
		m.StopReason = stopReason(m)
		r.add(m)
	default:
		r.pairs.Add(m)
		key := "tool_call_id"
		if role == "function" {
			// The legacy function role answers the latest function_call,
			// which had no id: openai.Calls paired it with the number given
			// to that call.
			key = "function_call"
		}
		r.result(m, fmt.Sprintf("%d: messages[%d]", jsonrec.Line(r.data, rec.Off), i), key)
	}
	return nil
}
