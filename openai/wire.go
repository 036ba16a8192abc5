package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/summarize"
)

// chatRequest is the body of POST /chat/completions. Exactly one of the
// two limit fields is set (or neither, when the request has no limit).
type chatRequest struct {
	Model               string            `json:"model"`
	Messages            []json.RawMessage `json:"messages"`
	MaxTokens           int               `json:"max_tokens,omitempty"`
	MaxCompletionTokens int               `json:"max_completion_tokens,omitempty"`
	Temperature         *float64          `json:"temperature,omitempty"`
	Stream              bool              `json:"stream"`
}

// wireRequest is the request for req: its system prompt and its prompt
// as one user message, written by ChatMessages.
func (c *Client) wireRequest(model string, req *summarize.Request) (*chatRequest, error) {
	msgs, err := ChatMessages(req.System, []*compact.Message{compact.TextMessage(compact.RoleUser, req.Prompt)})
	if err != nil {
		return nil, err
	}
	r := &chatRequest{Model: model, Messages: msgs, Temperature: c.temperature}
	if req.MaxTokens > 0 {
		if c.tokenField == MaxCompletionTokens {
			r.MaxCompletionTokens = req.MaxTokens
		} else {
			r.MaxTokens = req.MaxTokens
		}
	}
	return r, nil
}

// chatResponse holds the fields of a chat completion this package reads,
// plus the error fields some compatible servers put in a 2xx body.
type chatResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message      json.RawMessage `json:"message"`
		FinishReason string          `json:"finish_reason"`
	} `json:"choices"`
	Usage *ChatUsage `json:"usage"`

	// Error is set by servers that report a failure inside a 2xx body.
	Error json.RawMessage `json:"error"`
	// Object is "error" in vLLM-style error bodies, whose code sits at
	// the top level.
	Object string          `json:"object"`
	Code   json.RawMessage `json:"code"`
}

// ChatCompletion is what the clients read of a Chat Completions answer
// (the 2xx body of a non-streaming request): its first choice and usage.
type ChatCompletion struct {
	// Model is the model the server says answered; "" when it does not
	// say.
	Model string
	// Message is choices[0].message as sent, for ReadChatAnswer (or, for
	// a caller that wants its text only, its "content").
	Message json.RawMessage
	// FinishReason is choices[0].finish_reason.
	FinishReason string
	// Usage is the answer's usage; nil when the server sent none.
	Usage *ChatUsage
}

// ReadChatCompletion reads a Chat Completions answer. The Chat client
// (Client) and the example agent both read answers with it, so that both
// see an error the same way: a body that is not JSON is an error wrapping
// a *compact.ProviderError that holds it; an error object inside the
// body, as some compatible servers send with status 200 ({"error": ...},
// or vLLM's {"object": "error", "code": ...}), is a *compact.ProviderError
// whose StatusCode is the code it gives when that is 400-599, else 0; an
// answer without choices is an error quoting the start of the body.
func ReadChatCompletion(body []byte) (*ChatCompletion, error) {
	var r chatResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("openai: undecodable response (%v): %w", err,
			&compact.ProviderError{Provider: providerName, Body: string(body)})
	}
	if isPresent(r.Error) {
		var e struct {
			Code json.RawMessage `json:"code"`
		}
		_ = json.Unmarshal(r.Error, &e) // the error may be a bare string
		return nil, &compact.ProviderError{Provider: providerName, StatusCode: embeddedStatus(e.Code), Body: string(body)}
	}
	if r.Object == "error" {
		return nil, &compact.ProviderError{Provider: providerName, StatusCode: embeddedStatus(r.Code), Body: string(body)}
	}
	if len(r.Choices) == 0 {
		return nil, fmt.Errorf("openai: response has no choices: %s", clip(body))
	}
	return &ChatCompletion{Model: r.Model, Message: r.Choices[0].Message, FinishReason: r.Choices[0].FinishReason, Usage: r.Usage}, nil
}

// decodeResponse turns a 2xx body into a Response or an error.
func decodeResponse(body []byte, model string) (*summarize.Response, error) {
	choice, err := ReadChatCompletion(body)
	if err != nil {
		return nil, err
	}
	var msg struct {
		// Content is usually a string or null; a few servers send an
		// array of typed parts instead.
		Content json.RawMessage `json:"content"`
	}
	if isPresent(choice.Message) {
		if err := json.Unmarshal(choice.Message, &msg); err != nil {
			return nil, fmt.Errorf("openai: message: %w", err)
		}
	}
	text, err := contentText(msg.Content)
	if err != nil {
		return nil, fmt.Errorf("openai: message content: %w", err)
	}
	out := &summarize.Response{
		Text:      text,
		Truncated: choice.FinishReason == "length",
		Model:     choice.Model,
	}
	if out.Model == "" {
		out.Model = model
	}
	if choice.Usage != nil {
		out.Usage = choice.Usage.Usage()
	}
	switch {
	case out.Truncated:
		return out, nil
	case choice.FinishReason == "content_filter":
		return nil, fmt.Errorf("openai: answer withheld by the content filter (finish_reason %q)", choice.FinishReason)
	case strings.TrimSpace(text) == "":
		return nil, fmt.Errorf("openai: %w (finish_reason %q)", ErrEmptySummary, choice.FinishReason)
	}
	return out, nil
}

// contentText reads message.content: a string, null, or an array of parts
// of which the "text" ones are joined.
func contentText(raw json.RawMessage) (string, error) {
	if !isPresent(raw) {
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
		return "", err
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}

// isPresent reports whether a raw JSON value was given and is not null.
func isPresent(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}

// embeddedStatus returns code when it is a whole number, or a string of
// digits, in the HTTP error range 400-599, else 0. Codes such as
// "context_length_exceeded" give 0.
func embeddedStatus(code json.RawMessage) int {
	var n int
	if err := json.Unmarshal(code, &n); err != nil {
		var s string
		if json.Unmarshal(code, &s) != nil {
			return 0
		}
		if n, err = strconv.Atoi(s); err != nil {
			return 0
		}
	}
	if n < 400 || n > 599 {
		return 0
	}
	return n
}

// clip shortens a body for an error message.
func clip(body []byte) string {
	const limit = 300
	if len(body) > limit {
		return string(body[:limit]) + "..."
	}
	return string(body)
}
