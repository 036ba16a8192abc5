package proxy

import (
	"encoding/json"

	"github.com/compactkit/compact"
)

// responsesCodec reads and writes OpenAI's Responses API (Codex).
type responsesCodec struct{ cache *itemCache }

func (responsesCodec) api() API { return Responses }

// responsesItem is the part of an input item the proxy reads.
type responsesItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"`
	Output    json.RawMessage `json:"output"`
	Action    json.RawMessage `json:"action"`
	Summary   []struct {
		Text string `json:"text"`
	} `json:"summary"`
}

// kind sorts an item: "message" (any role), "call" (what the model
// produced: reasoning, tool calls, its own messages), "output" (a tool's
// answer) or "other".
func (it *responsesItem) kind() string {
	switch it.Type {
	case "", "message":
		if it.Role == "assistant" {
			return "call"
		}
		return "message"
	case "reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call",
		"file_search_call", "computer_call", "code_interpreter_call", "image_generation_call", "mcp_call":
		return "call"
	case "function_call_output", "custom_tool_call_output", "local_shell_call_output", "computer_call_output":
		return "output"
	}
	return "other"
}

func (c responsesCodec) parse(body []byte) (*Parsed, error) {
	p, _, err := readList(Responses, body, "input")
	if err != nil {
		return nil, err
	}
	infos := make([]*itemInfo, len(p.Items))
	for i, raw := range p.Items {
		if infos[i], err = c.cache.read(Responses, raw, decodeResponsesItem); err != nil {
			return nil, err
		}
		if infos[i].compaction {
			p.StandDown = "the conversation carries a compaction item"
		}
	}
	i := 0
	for i < len(infos) && infos[i].kind == "message" && (infos[i].role == "system" || infos[i].role == "developer") {
		i++
	}
	p.Head = i
	for i < len(infos) {
		start := i
		var msgs []*compact.Message
		if infos[i].kind == "call" {
			// One unit for the model's whole turn: reasoning, text and
			// parallel tool calls stay together.
			m := &compact.Message{Role: compact.RoleAssistant}
			for i < len(infos) && infos[i].kind == "call" {
				m.Content = append(m.Content, infos[i].msgs[0].Content...)
				i++
			}
			msgs = []*compact.Message{m}
		} else {
			msgs = infos[i].messages()
			i++
		}
		p.Units = append(p.Units, Unit{Start: start, End: i, Messages: msgs, Digest: unitDigest(infos[start:i])})
	}
	return p, nil
}

// decodeResponsesItem reads one input item.
func decodeResponsesItem(raw []byte) (*itemInfo, error) {
	var it responsesItem
	if err := json.Unmarshal(raw, &it); err != nil {
		return nil, err
	}
	in := &itemInfo{role: it.Role, kind: it.kind(), compaction: it.Type == "compaction" || it.Type == "compaction_summary"}
	switch in.kind {
	case "call":
		in.msgs = []*compact.Message{{Role: compact.RoleAssistant, Content: responsesParts(&it, raw)}}
	case "output":
		in.msgs = []*compact.Message{{Role: compact.RoleToolResult, ToolCallID: it.CallID,
			Content: []compact.Part{{Type: compact.PartText, Text: textOf(it.Output)}}}}
	case "message":
		in.msgs = []*compact.Message{{Role: compact.RoleUser, Content: []compact.Part{{Type: compact.PartText, Text: textOf(it.Content)}}}}
	default:
		in.msgs = []*compact.Message{{Role: compact.RoleUser, Content: []compact.Part{{Type: compact.PartText, Text: rawText(raw)}}}}
	}
	return in, nil
}

// responsesParts maps one item of the model's turn onto engine parts.
func responsesParts(it *responsesItem, raw []byte) []compact.Part {
	switch it.Type {
	case "reasoning":
		var text string
		for _, s := range it.Summary {
			text += s.Text
		}
		return []compact.Part{{Type: compact.PartThinking, Thinking: text}}
	case "function_call", "custom_tool_call":
		args := json.RawMessage(it.Arguments)
		if it.Type == "custom_tool_call" || !json.Valid(args) {
			s := it.Arguments
			if it.Type == "custom_tool_call" {
				s = it.Input
			}
			args, _ = json.Marshal(map[string]string{"input": s})
		}
		return []compact.Part{{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: it.CallID, Name: it.Name, Arguments: args}}}
	case "local_shell_call":
		args := it.Action
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		return []compact.Part{{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: it.CallID, Name: "local_shell", Arguments: args}}}
	case "", "message":
		return []compact.Part{{Type: compact.PartText, Text: textOf(it.Content)}}
	}
	return []compact.Part{{Type: compact.PartText, Text: rawText(raw)}}
}

func (responsesCodec) summaryItem(text string) []byte {
	return append(append([]byte(`{"type":"message","role":"user","content":[{"type":"input_text","text":`), quote(text)...), `}]}`...)
}

// prepareKept keeps the items as they are: encrypted reasoning travels
// with the turn it belongs to and is never edited.
func (responsesCodec) prepareKept(p *Parsed, from int) ([][]byte, func([]byte) []byte) {
	return p.Items[from:], nil
}

func (responsesCodec) newObserver(stream bool) observer { return newUsageObserver(Responses, stream) }
