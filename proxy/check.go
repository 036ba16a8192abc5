package proxy

import (
	"encoding/json"
	"fmt"

	"github.com/compactkit/compact/internal/jsontext"
)

// validateBody checks a rewritten request against the rules the providers
// enforce on tool use, before it is sent: a request that breaks them would
// fail with a 400, so the proxy sends the client's original instead.
//
//   - Anthropic: the tool_use blocks of an assistant message are all
//     answered by tool_result blocks in the user message right after it,
//     and every tool_result answers a tool_use of the message right before.
//     With thinking on, an assistant message whose tool calls are being
//     answered by the request's last message starts with a thinking block
//     if it had one in the client's request (checked by prepareKept's
//     contract: the block is kept), so only pairing is checked here.
//   - Chat: the tool_calls of an assistant message are each answered by a
//     tool message before the next non-tool message, and every tool
//     message answers a call of the assistant message before it.
//   - Responses: every function_call_output (and custom or local shell
//     output) answers a call made earlier in the input, and every call is
//     answered later in the input.
func validateBody(api API, body []byte) error {
	switch api {
	case Anthropic, Chat, Responses:
	default:
		return fmt.Errorf("proxy: unknown API %q", api)
	}
	p, err := codecFor(api).parse(body)
	if err != nil {
		return err
	}
	switch api {
	case Anthropic:
		return checkAnthropic(p)
	case Chat:
		return checkChat(p)
	}
	return checkResponses(p)
}

func checkAnthropic(p *Parsed) error {
	var open map[string]bool // tool_use ids the previous assistant message left to answer
	for i, it := range p.Items {
		var m anthropicMessage
		if err := json.Unmarshal(it, &m); err != nil {
			return err
		}
		if m.Role == "system" {
			// Claude Code puts system notes between turns; they take no
			// part in tool pairing.
			continue
		}
		blocks := m.blocks()
		if m.Role == "assistant" {
			if len(open) > 0 {
				return fmt.Errorf("messages[%d]: tool_use without tool_result right after it", i-1)
			}
			open = map[string]bool{}
			for _, b := range blocks {
				if b.Type == "tool_use" {
					open[b.ID] = true
				}
			}
			continue
		}
		for _, b := range blocks {
			if b.Type != "tool_result" {
				continue
			}
			if !open[b.ToolUseID] {
				return fmt.Errorf("messages[%d]: tool_result %q does not answer a tool_use of the message before", i, b.ToolUseID)
			}
			delete(open, b.ToolUseID)
		}
		if len(open) > 0 {
			return fmt.Errorf("messages[%d]: tool_use without tool_result right after it", i-1)
		}
		open = nil
	}
	if len(open) > 0 {
		return fmt.Errorf("messages[%d]: tool_use without tool_result", len(p.Items)-1)
	}
	return checkThinkingTurn(p)
}

// checkThinkingTurn applies the rule for extended thinking (type
// "enabled"; with "adaptive" the model may skip it): when the request
// ends in a tool loop, the first assistant message of the turn in progress
// starts with a thinking or redacted_thinking block.
func checkThinkingTurn(p *Parsed) error {
	ms, err := jsontext.Object(p.Body)
	if err != nil {
		return err
	}
	t := jsontext.Find(ms, "thinking")
	if t == nil {
		return nil
	}
	var cfg struct{ Type string }
	if json.Unmarshal(p.Body[t.Value.Start:t.Value.End], &cfg) != nil || cfg.Type != "enabled" {
		return nil
	}
	first, active := currentTurn(p.Items)
	if !active || first < 0 {
		return nil
	}
	var m anthropicMessage
	if json.Unmarshal(p.Items[first], &m) != nil {
		return nil
	}
	bs := m.blocks()
	if len(bs) == 0 || (bs[0].Type != "thinking" && bs[0].Type != "redacted_thinking") {
		return fmt.Errorf("messages[%d]: with thinking enabled, the assistant message that opens the tool loop in progress must start with a thinking block", first)
	}
	return nil
}

// currentTurn finds the turn in progress of an Anthropic list: the index
// of its first assistant message (-1 when none) and whether the list ends
// in a tool loop (a last user message holding tool results). The turn
// starts after the last user message that is not made of tool results.
func currentTurn(items [][]byte) (first int, active bool) {
	first = -1
	last := true // no user or assistant message seen yet, from the end
	for i := len(items) - 1; i >= 0; i-- {
		var m anthropicMessage
		if json.Unmarshal(items[i], &m) != nil {
			return -1, false
		}
		switch m.Role {
		case "system":
			// A mid-conversation system message (Claude Code appends
			// one at times) neither ends nor opens a turn.
			continue
		case "assistant":
			last = false
			first = i
		case "user":
			results := false
			for _, b := range m.blocks() {
				if b.Type == "tool_result" {
					results = true
				}
			}
			if last {
				active = results
			}
			last = false
			if !results {
				return first, active
			}
		}
	}
	return first, active
}

func checkChat(p *Parsed) error {
	open := map[string]bool{}
	for i, it := range p.Items {
		var m struct {
			Role       string `json:"role"`
			ToolCallID string `json:"tool_call_id"`
			ToolCalls  []struct {
				ID string `json:"id"`
			} `json:"tool_calls"`
		}
		if err := json.Unmarshal(it, &m); err != nil {
			return err
		}
		if m.Role == "tool" {
			if !open[m.ToolCallID] {
				return fmt.Errorf("messages[%d]: tool message %q answers no preceding tool call", i, m.ToolCallID)
			}
			delete(open, m.ToolCallID)
			continue
		}
		if len(open) > 0 {
			return fmt.Errorf("messages[%d]: a tool call is left unanswered", i)
		}
		for _, tc := range m.ToolCalls {
			open[tc.ID] = true
		}
	}
	if len(open) > 0 {
		return fmt.Errorf("messages: a tool call is left unanswered")
	}
	return nil
}

func checkResponses(p *Parsed) error {
	answers := map[string]string{
		"function_call":    "function_call_output",
		"custom_tool_call": "custom_tool_call_output",
		"local_shell_call": "local_shell_call_output",
	}
	calls := map[string]string{} // call_id -> the output type it needs
	answered := map[string]bool{}
	for i, it := range p.Items {
		var m struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
		}
		if err := json.Unmarshal(it, &m); err != nil {
			return err
		}
		if out, ok := answers[m.Type]; ok {
			if m.CallID != "" {
				calls[m.CallID] = out
			}
			continue
		}
		switch m.Type {
		case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
			if calls[m.CallID] != m.Type {
				return fmt.Errorf("input[%d]: %s for call %q that is not in the input before it", i, m.Type, m.CallID)
			}
			answered[m.CallID] = true
		}
	}
	for id := range calls {
		if !answered[id] {
			return fmt.Errorf("input: call %q has no output", id)
		}
	}
	return nil
}
