package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/apihttp"
)

// providerName names the API in errors and in the recorded messages.
const providerName = "openai-compatible"

// Chat is a minimal client for the Chat Completions API
// (POST {BaseURL}/chat/completions) with tool calling. One Complete is one
// non-streaming request; Complete has the signature of compact.ModelCall.
type Chat struct {
	// BaseURL is the API root, such as http://localhost:11434/v1.
	BaseURL string
	// Model is the model name sent in every request.
	Model string
	// APIKey, when set, is sent as a bearer token.
	APIKey string
	// System, when set, is sent as the first message of every request.
	// It is not stored in the session.
	System string
	// Tools are the tool definitions offered to the model.
	Tools []ToolSpec
	// HTTP sends the requests; nil means a client from apihttp.NewClient.
	HTTP *http.Client
	// Timeout bounds one request; 0 means none beyond the caller's
	// context.
	Timeout time.Duration
}

// ToolSpec describes one tool to the model: its name, what it does and
// the JSON schema of its arguments.
type ToolSpec struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// wireToolCall is a tool call as the Chat Completions API writes it: the
// arguments are a string holding JSON.
type wireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// wireMessage is one entry of the request's "messages".
type wireMessage struct {
	Role       string         `json:"role"`
	Content    string         `json:"content"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type wireFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type wireTool struct {
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireRequest struct {
	Model    string        `json:"model"`
	Messages []wireMessage `json:"messages"`
	Tools    []wireTool    `json:"tools,omitempty"`
	Stream   bool          `json:"stream"`
}

type wireResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content   json.RawMessage `json:"content"`
			ToolCalls []wireToolCall  `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// Complete sends the messages (after the system prompt) with the tool
// definitions and returns the model's answer as an assistant message. An
// error answer is returned as a *compact.ProviderError carrying the status
// and the body, so that compact.IsContextOverflow can recognise an
// overflow.
func (c *Chat) Complete(ctx context.Context, msgs []*compact.Message) (*compact.Message, error) {
	body, err := json.Marshal(c.request(msgs))
	if err != nil {
		return nil, fmt.Errorf("encode the request: %w", err)
	}
	client := c.HTTP
	if client == nil {
		client = apihttp.NewClient()
	}
	header := http.Header{"Content-Type": {"application/json"}}
	if c.APIKey != "" {
		header.Set("Authorization", "Bearer "+c.APIKey)
	}
	resp, err := apihttp.Post(ctx, apihttp.Call{
		Provider:     providerName,
		Client:       client,
		URL:          strings.TrimRight(c.BaseURL, "/") + "/chat/completions",
		Header:       header,
		Body:         body,
		Timeout:      c.Timeout,
		MaxErrorBody: 64 << 10,
		MaxBody:      16 << 20,
	})
	if err != nil {
		return nil, err
	}
	return decodeAnswer(resp, c.Model)
}

// request builds the wire request for msgs.
func (c *Chat) request(msgs []*compact.Message) *wireRequest {
	r := &wireRequest{Model: c.Model, Messages: make([]wireMessage, 0, len(msgs)+1)}
	if c.System != "" {
		r.Messages = append(r.Messages, wireMessage{Role: "system", Content: c.System})
	}
	r.Messages = append(r.Messages, toWire(msgs)...)
	for _, t := range c.Tools {
		r.Tools = append(r.Tools, wireTool{Type: "function", Function: wireFunction(t)})
	}
	return r
}

// toWire maps context messages (as compact.Context.ModelMessages returns
// them: user, assistant and tool results) to Chat Completions messages.
// Thinking and image parts are not sent; any other role is sent as a user
// message with its text.
func toWire(msgs []*compact.Message) []wireMessage {
	out := make([]wireMessage, 0, len(msgs))
	for _, m := range msgs {
		switch m.Role {
		case compact.RoleAssistant:
			w := wireMessage{Role: "assistant", Content: m.Text()}
			for _, tc := range m.ToolCalls() {
				var wc wireToolCall
				wc.ID, wc.Type = tc.ID, "function"
				wc.Function.Name = tc.Name
				wc.Function.Arguments = argumentsString(tc.Arguments)
				w.ToolCalls = append(w.ToolCalls, wc)
			}
			out = append(out, w)
		case compact.RoleToolResult:
			out = append(out, wireMessage{Role: "tool", ToolCallID: m.ToolCallID, Content: m.Text()})
		default:
			out = append(out, wireMessage{Role: "user", Content: m.Text()})
		}
	}
	return out
}

// argumentsString is the wire form of stored arguments: the JSON itself,
// or the original text when it was stored as a JSON string because it was
// not valid JSON (see parseArguments).
func argumentsString(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "{}"
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	return string(raw)
}

// parseArguments is the stored form of a wire arguments string: its bytes
// when they are valid JSON, "{}" when empty, and otherwise the text as a
// JSON string, so that nothing the model wrote is lost.
func parseArguments(s string) json.RawMessage {
	t := strings.TrimSpace(s)
	if t == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(t)) {
		return json.RawMessage(t)
	}
	q, _ := json.Marshal(s)
	return q
}

// decodeAnswer turns a 2xx body into an assistant message. An error
// object inside the body becomes a *compact.ProviderError with status 0.
func decodeAnswer(body []byte, model string) (*compact.Message, error) {
	var r wireResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("%s: decode the answer: %w", providerName, err)
	}
	if len(r.Error) > 0 && string(r.Error) != "null" {
		return nil, &compact.ProviderError{Provider: providerName, Body: string(body)}
	}
	if len(r.Choices) == 0 {
		return nil, fmt.Errorf("%s: the answer has no choices", providerName)
	}
	ch := r.Choices[0]
	text, err := contentText(ch.Message.Content)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", providerName, err)
	}
	m := &compact.Message{Role: compact.RoleAssistant, Provider: providerName, Model: model,
		Timestamp: time.Now().UnixMilli()}
	if r.Model != "" {
		m.Model = r.Model
	}
	if text != "" {
		m.Content = append(m.Content, compact.Part{Type: compact.PartText, Text: text})
	}
	for i, wc := range ch.Message.ToolCalls {
		id := wc.ID
		if id == "" {
			// Some local servers leave the id out; the result must still
			// name its call.
			id = "call_" + strconv.FormatInt(m.Timestamp, 36) + "_" + strconv.Itoa(i)
		}
		m.Content = append(m.Content, compact.Part{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{
			ID: id, Name: wc.Function.Name, Arguments: parseArguments(wc.Function.Arguments),
		}})
	}
	switch {
	case len(ch.Message.ToolCalls) > 0:
		m.StopReason = compact.StopToolUse
	case ch.FinishReason == "length":
		m.StopReason = compact.StopLength
	default:
		m.StopReason = compact.StopEnd
	}
	if r.Usage != nil {
		m.Usage = &compact.Usage{Input: r.Usage.PromptTokens, Output: r.Usage.CompletionTokens}
	}
	return m, nil
}

// contentText reads message.content: a string, null, or (from a few
// servers) an array of typed parts whose text parts are joined.
func contentText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("message content is neither text nor a list of parts: %w", err)
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}
