package proxy

import (
	"encoding/json"

	"github.com/compactkit/compact"
)

// responsesCodec reads and writes OpenAI's Responses API (Codex).
type responsesCodec struct{}

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

func (responsesCodec) parse(body []byte) (*Parsed, error) {
	p, _, err := readList(Responses, body, "input")
	if err != nil {
		return nil, err
	}
	items := make([]responsesItem, len(p.Items))
	for i, raw := range p.Items {
		if err := json.Unmarshal(raw, &items[i]); err != nil {
			return nil, err
		}
		if items[i].Type == "compaction" || items[i].Type == "compaction_summary" {
			p.StandDown = "the conversation carries a compaction item"
		}
	}
	i := 0
	for i < len(items) && items[i].kind() == "message" && (items[i].Role == "system" || items[i].Role == "developer") {
		i++
	}
	p.Head = i
	for i < len(items) {
		start := i
		var msgs []*compact.Message
		switch items[i].kind() {
		case "call":
			// One unit for the model's whole turn: reasoning, text and
			// parallel tool calls stay together.
			m := &compact.Message{Role: compact.RoleAssistant}
			for i < len(items) && items[i].kind() == "call" {
				m.Content = append(m.Content, responsesParts(&items[i], p.Items[i])...)
				i++
			}
			msgs = []*compact.Message{m}
		case "output":
			it := &items[i]
			msgs = []*compact.Message{{Role: compact.RoleToolResult, ToolCallID: it.CallID,
				Content: []compact.Part{{Type: compact.PartText, Text: textOf(it.Output)}}}}
			i++
		case "message":
			msgs = []*compact.Message{{Role: compact.RoleUser, Content: []compact.Part{{Type: compact.PartText, Text: textOf(items[i].Content)}}}}
			i++
		default:
			msgs = []*compact.Message{{Role: compact.RoleUser, Content: []compact.Part{{Type: compact.PartText, Text: rawText(p.Items[i])}}}}
			i++
		}
		p.Units = append(p.Units, Unit{Start: start, End: i, Messages: msgs, Digest: digestItems(p.Items[start:i])})
	}
	return p, nil
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
