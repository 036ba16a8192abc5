package fakeupstream

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Check returns what a real provider would object to in a recorded
// request, one line each, nil when nothing: a body over the window, tool
// results and tool calls that do not pair up (see Pairing), and a refusal
// by the thinking rules (see Request.ThinkingRejected).
func (f *Fake) Check(r Request) []string {
	var problems []string
	if r.ThinkingRejected {
		problems = append(problems, fmt.Sprintf("request %d: %s", r.Seq, r.Error))
	}
	if f.cfg.Window > 0 && r.Tokens > f.cfg.Window {
		problems = append(problems, fmt.Sprintf("request %d: %d tokens > window %d", r.Seq, r.Tokens, f.cfg.Window))
	}
	for _, p := range Pairing(r.API, r.Items) {
		problems = append(problems, fmt.Sprintf("request %d: %s", r.Seq, p))
	}
	return problems
}

// Pairing checks the tool calls and tool results of a message list the
// way the providers do, and returns one line per problem:
//   - Anthropic: every tool_result block answers a tool_use of the message
//     just before it, and every tool_use is answered in the next message
//     (when there is one).
//   - Chat: every tool message answers a tool_calls id of the assistant
//     message before the run of tool messages it is in, and every id is
//     answered before the next non-tool message or the end of the list.
//   - Responses: every *_call_output item has an earlier call item with
//     its call_id, and every call item has an output.
func Pairing(api API, items []json.RawMessage) []string {
	switch api {
	case Anthropic:
		return anthropicPairing(items)
	case Chat:
		return chatPairing(items)
	case Responses:
		return responsesPairing(items)
	}
	return nil
}

// anthropicBlocks returns the ids of the tool_use and tool_result blocks
// of one message.
func anthropicBlocks(raw json.RawMessage) (uses, results []string) {
	var m struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return nil, nil
	}
	var blocks []struct {
		Type      string `json:"type"`
		ID        string `json:"id"`
		ToolUseID string `json:"tool_use_id"`
	}
	if json.Unmarshal(m.Content, &blocks) != nil {
		return nil, nil
	}
	for _, b := range blocks {
		switch b.Type {
		case "tool_use", "server_tool_use":
			uses = append(uses, b.ID)
		case "tool_result":
			results = append(results, b.ToolUseID)
		}
	}
	return uses, results
}

func anthropicPairing(items []json.RawMessage) []string {
	var problems []string
	var prevUses []string
	for i, raw := range items {
		uses, results := anthropicBlocks(raw)
		for _, id := range results {
			if !contains(prevUses, id) {
				problems = append(problems, fmt.Sprintf("messages[%d]: tool_result %s has no tool_use in the previous message", i, id))
			}
		}
		for _, id := range prevUses {
			if !contains(results, id) {
				problems = append(problems, fmt.Sprintf("messages[%d]: tool_use %s is not answered by a tool_result", i-1, id))
			}
		}
		prevUses = uses
	}
	return problems
}

func chatPairing(items []json.RawMessage) []string {
	var problems []string
	var pending []string // ids of the last assistant tool_calls not yet answered
	var open []string    // ids the current run of tool messages may answer
	flush := func(at int) {
		for _, id := range pending {
			problems = append(problems, fmt.Sprintf("messages[%d]: tool_call %s is not answered by a tool message", at, id))
		}
		pending = nil
	}
	for i, raw := range items {
		var m struct {
			Role       string `json:"role"`
			ToolCallID string `json:"tool_call_id"`
			ToolCalls  []struct {
				ID string `json:"id"`
			} `json:"tool_calls"`
		}
		if json.Unmarshal(raw, &m) != nil {
			continue
		}
		if m.Role == "tool" {
			if !contains(open, m.ToolCallID) {
				problems = append(problems, fmt.Sprintf("messages[%d]: tool message %s does not answer a preceding tool_calls", i, m.ToolCallID))
			}
			pending = remove(pending, m.ToolCallID)
			continue
		}
		flush(i)
		open = nil
		for _, c := range m.ToolCalls {
			pending = append(pending, c.ID)
			open = append(open, c.ID)
		}
	}
	flush(len(items))
	return problems
}

func responsesPairing(items []json.RawMessage) []string {
	var problems []string
	called := map[string]bool{}
	answered := map[string]bool{}
	var order []string
	for i, raw := range items {
		var it struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
		}
		if json.Unmarshal(raw, &it) != nil || it.CallID == "" {
			continue
		}
		switch {
		case strings.HasSuffix(it.Type, "_call_output"):
			if !called[it.CallID] {
				problems = append(problems, fmt.Sprintf("input[%d]: %s %s has no earlier call with that call_id", i, it.Type, it.CallID))
			}
			answered[it.CallID] = true
		case strings.HasSuffix(it.Type, "_call"):
			called[it.CallID] = true
			order = append(order, it.CallID)
		}
	}
	for _, id := range order {
		if !answered[id] {
			problems = append(problems, fmt.Sprintf("input: no tool output found for call %s", id))
		}
	}
	return problems
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func remove(list []string, s string) []string {
	for i, x := range list {
		if x == s {
			return append(list[:i:i], list[i+1:]...)
		}
	}
	return list
}
