package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/apihttp"
	"github.com/compactkit/compact/openai"
)

// providerName names the API in errors and in the recorded messages.
const providerName = "openai-compatible"

// Chat is a minimal client for the Chat Completions API
// (POST {BaseURL}/chat/completions) with tool calling. One Complete is one
// non-streaming request; Complete has the signature of compact.ModelCall.
// The messages are mapped by the openai package, both ways, as every
// other door of compact maps them: openai.ChatMessages writes the
// request's, openai.ReadChatAnswer reads the answer's.
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

type wireFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type wireTool struct {
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

// wireRequest is the body of POST /chat/completions; the messages are
// written by openai.ChatMessages.
type wireRequest struct {
	Model    string            `json:"model"`
	Messages []json.RawMessage `json:"messages"`
	Tools    []wireTool        `json:"tools,omitempty"`
	Stream   bool              `json:"stream"`
}

// Complete sends the messages (after the system prompt) with the tool
// definitions and returns the model's answer as an assistant message. An
// error answer is returned as a *compact.ProviderError carrying the status
// and the body, so that compact.IsContextOverflow can recognise an
// overflow.
func (c *Chat) Complete(ctx context.Context, msgs []*compact.Message) (*compact.Message, error) {
	req, err := c.request(msgs)
	if err != nil {
		return nil, err
	}
	client := c.HTTP
	if client == nil {
		client = apihttp.NewClient()
	}
	set := http.Header{}
	if c.APIKey != "" {
		set.Set("Authorization", "Bearer "+c.APIKey)
	}
	call := apihttp.Call{
		Provider:     providerName,
		Client:       client,
		URL:          strings.TrimRight(c.BaseURL, "/") + "/chat/completions",
		Timeout:      c.Timeout,
		MaxErrorBody: 64 << 10,
		MaxBody:      16 << 20,
	}
	// PostJSON also takes the key out of an error found in a 2xx body.
	return apihttp.PostJSON(ctx, call, set, req, func(body []byte) (*compact.Message, error) {
		return decodeAnswer(body, c.Model)
	})
}

// request builds the wire request for msgs.
func (c *Chat) request(msgs []*compact.Message) (*wireRequest, error) {
	wire, err := openai.ChatMessages(c.System, msgs)
	if err != nil {
		return nil, err
	}
	r := &wireRequest{Model: c.Model, Messages: wire}
	for _, t := range c.Tools {
		r.Tools = append(r.Tools, wireTool{Type: "function", Function: wireFunction(t)})
	}
	return r, nil
}

// decodeAnswer turns a 2xx body into an assistant message: the body as
// openai.ReadChatCompletion reads it (an error object inside it is a
// *compact.ProviderError), its message as openai.ReadChatAnswer does. A
// call the server sent without an id (some local servers do) gets one,
// since its result must name it, and is sent back as an ordinary tool
// call.
func decodeAnswer(body []byte, model string) (*compact.Message, error) {
	ch, err := openai.ReadChatCompletion(body)
	if err != nil {
		return nil, err
	}
	a, err := openai.ReadChatAnswer(ch.Message)
	if err != nil {
		return nil, fmt.Errorf("%s: choices[0].message%w", providerName, err)
	}
	m := a.Message
	m.Provider, m.Model, m.Timestamp = providerName, model, time.Now().UnixMilli()
	if ch.Model != "" {
		m.Model = ch.Model
	}
	calls := 0
	for i := range m.Content {
		p := &m.Content[i]
		if p.Type != compact.PartToolCall || p.ToolCall == nil {
			continue
		}
		if p.ToolCall.ID == "" {
			p.ToolCall.ID = "call_" + strconv.FormatInt(m.Timestamp, 36) + "_" + strconv.Itoa(calls)
			if delete(p.Extra, openai.ExtraLegacyCall); len(p.Extra) == 0 {
				p.Extra = nil
			}
		}
		calls++
	}
	switch {
	case calls > 0:
		m.StopReason = compact.StopToolUse
	case ch.FinishReason == "length":
		m.StopReason = compact.StopLength
	default:
		m.StopReason = compact.StopEnd
	}
	if ch.Usage != nil {
		u := ch.Usage.Usage()
		m.Usage = &u
	}
	return m, nil
}
