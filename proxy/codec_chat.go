package proxy

import (
	"bytes"
	"encoding/json"

	"github.com/compactkit/compact"
)

// chatCodec reads and writes OpenAI's Chat Completions API.
type chatCodec struct{ cache *itemCache }

func (chatCodec) api() API { return Chat }

// chatMessage is the part of a message the proxy reads.
type chatMessage struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	ReasoningContent string          `json:"reasoning_content"`
	ToolCallID       string          `json:"tool_call_id"`
	Name             string          `json:"name"`
	ToolCalls        []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

func (c chatCodec) parse(body []byte) (*Parsed, error) {
	p, _, err := readList(Chat, body, "messages")
	if err != nil {
		return nil, err
	}
	head := true
	for i, it := range p.Items {
		in, err := c.cache.read(Chat, it, decodeChatItem)
		if err != nil {
			return nil, err
		}
		if head && (in.role == "system" || in.role == "developer") {
			p.Head = i + 1
			continue
		}
		head = false
		p.Units = append(p.Units, Unit{Start: i, End: i + 1, Messages: in.messages(), Digest: in.digest})
	}
	return p, nil
}

// decodeChatItem reads one message.
func decodeChatItem(raw []byte) (*itemInfo, error) {
	var m chatMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return &itemInfo{role: m.Role, msgs: []*compact.Message{chatToMessage(&m)}}, nil
}

// chatToMessage maps a Chat message onto an engine message.
func chatToMessage(m *chatMessage) *compact.Message {
	switch m.Role {
	case "tool", "function":
		return &compact.Message{Role: compact.RoleToolResult, ToolCallID: m.ToolCallID, ToolName: m.Name,
			Content: []compact.Part{{Type: compact.PartText, Text: textOf(m.Content)}}}
	case "assistant":
		out := &compact.Message{Role: compact.RoleAssistant}
		if m.ReasoningContent != "" {
			out.Content = append(out.Content, compact.Part{Type: compact.PartThinking, Thinking: m.ReasoningContent})
		}
		if t := textOf(m.Content); t != "" {
			out.Content = append(out.Content, compact.Part{Type: compact.PartText, Text: t})
		}
		for _, tc := range m.ToolCalls {
			args := json.RawMessage(tc.Function.Arguments)
			if !json.Valid(args) {
				args, _ = json.Marshal(tc.Function.Arguments)
			}
			out.Content = append(out.Content, compact.Part{Type: compact.PartToolCall,
				ToolCall: &compact.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: args}})
		}
		return out
	}
	out := &compact.Message{Role: compact.RoleUser}
	c := bytes.TrimSpace(m.Content)
	if len(c) > 0 && c[0] == '[' {
		var parts []struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			ImageURL *struct {
				URL string `json:"url"`
			} `json:"image_url"`
		}
		if json.Unmarshal(c, &parts) == nil {
			for _, pt := range parts {
				switch {
				case pt.Type == "image_url" && pt.ImageURL != nil:
					out.Content = append(out.Content, compact.Part{Type: compact.PartImage, Image: &compact.Image{MimeType: "image/*", Data: pt.ImageURL.URL}})
				case pt.Text != "":
					out.Content = append(out.Content, compact.Part{Type: compact.PartText, Text: pt.Text})
				}
			}
			return out
		}
	}
	out.Content = []compact.Part{{Type: compact.PartText, Text: textOf(m.Content)}}
	return out
}

func (chatCodec) summaryItem(text string) []byte {
	return append(append([]byte(`{"role":"user","content":`), quote(text)...), '}')
}

// prepareKept keeps Chat messages as they are: nothing in them is bound to
// what precedes them.
func (chatCodec) prepareKept(p *Parsed, from int) ([][]byte, func([]byte) []byte) {
	return p.Items[from:], nil
}

func (chatCodec) newObserver(stream bool) observer { return newUsageObserver(Chat, stream) }
