package anthropic

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/summarize"
)

// message is one entry of the request's "messages".
type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// thinking is the request's "thinking" object.
type thinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

// messagesRequest is the body of POST /v1/messages.
type messagesRequest struct {
	Model       string    `json:"model"`
	MaxTokens   int       `json:"max_tokens"`
	System      string    `json:"system,omitempty"`
	Messages    []message `json:"messages"`
	Temperature *float64  `json:"temperature,omitempty"`
	Thinking    *thinking `json:"thinking,omitempty"`
}

func (c *Client) wireRequest(model string, req *summarize.Request) *messagesRequest {
	limit := req.MaxTokens
	if limit <= 0 {
		limit = c.maxTokens
	}
	r := &messagesRequest{
		Model:       model,
		MaxTokens:   limit,
		System:      req.System,
		Messages:    []message{{Role: "user", Content: req.Prompt}},
		Temperature: c.temperature,
	}
	if c.thinking > 0 {
		r.MaxTokens += c.thinking
		r.Thinking = &thinking{Type: "enabled", BudgetTokens: c.thinking}
	}
	return r
}

// apiError is the "error" object of an error body.
type apiError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// messagesResponse holds the fields of a Messages API answer this package
// reads; Type is "error" (with Error set) in error bodies.
type messagesResponse struct {
	Type    string `json:"type"`
	Model   string `json:"model"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StopReason string    `json:"stop_reason"`
	Usage      *Usage    `json:"usage"`
	Error      *apiError `json:"error"`
}

// errorStatus maps the error types Anthropic documents to their HTTP
// statuses, for errors that arrive inside a 2xx response.
var errorStatus = map[string]int{
	"invalid_request_error": 400,
	"authentication_error":  401,
	"billing_error":         402,
	"permission_error":      403,
	"not_found_error":       404,
	"request_too_large":     413,
	"rate_limit_error":      429,
	"api_error":             500,
	"timeout_error":         504,
	"overloaded_error":      529,
}

// decodeResponse turns a 2xx body into a Response or an error.
func decodeResponse(body []byte, model string) (*summarize.Response, error) {
	var r messagesResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("anthropic: undecodable response (%v): %w", err,
			&compact.ProviderError{Provider: providerName, Body: string(body)})
	}
	if r.Type == "error" || r.Error != nil {
		status := 0
		if r.Error != nil {
			status = errorStatus[r.Error.Type]
		}
		return nil, &compact.ProviderError{Provider: providerName, StatusCode: status, Body: string(body)}
	}
	var text strings.Builder
	for _, b := range r.Content {
		if b.Type == "text" {
			text.WriteString(b.Text)
		}
	}
	out := &summarize.Response{
		Text:      text.String(),
		Truncated: StopReason(r.StopReason) == compact.StopLength,
		Model:     r.Model,
	}
	if out.Model == "" {
		out.Model = model
	}
	if u := r.Usage; u != nil {
		out.Usage = u.Usage()
	}
	switch {
	case out.Truncated:
		return out, nil
	case r.StopReason == "refusal":
		return nil, fmt.Errorf("anthropic: the model declined to answer (stop_reason %q)", r.StopReason)
	case strings.TrimSpace(out.Text) == "":
		return nil, fmt.Errorf("anthropic: %w (stop_reason %q)", ErrEmptySummary, r.StopReason)
	}
	return out, nil
}
