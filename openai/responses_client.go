package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/apihttp"
	"github.com/compactkit/compact/summarize"
)

// ResponsesClient calls the Responses API (POST {BaseURL}/responses), the
// API Codex speaks. It implements summarize.Completer and is safe for
// concurrent use.
//
// Complete sends one non-streaming, tool-less request that the provider
// does not store ("store": false): the system prompt as "instructions"
// (left out when empty), the prompt as one user message of input_text,
// Request.MaxTokens as "max_output_tokens" (left out when 0) and
// Config.Temperature when set. Config.TokenField does not apply. The
// answer is the output_text of the output's message items; reasoning and
// other items are ignored. An answer cut by max_output_tokens sets
// Response.Truncated; one withheld by the content filter, a failed
// response and an empty answer are errors (the last wrapping
// ErrEmptySummary). Usage maps with cached input split out:
//
//	Input     = input_tokens - input_tokens_details.cached_tokens
//	CacheRead = input_tokens_details.cached_tokens
//	Output    = output_tokens
//	Total     = total_tokens
//
// Errors are those of Client.Complete: a non-2xx status or an error
// object in a 2xx body is a *compact.ProviderError, redirects are not
// followed, and no error holds a credential.
type ResponsesClient struct{ c *Client }

var _ summarize.Completer = (*ResponsesClient)(nil)

// NewResponses checks cfg, applies the defaults and returns a client of
// the Responses API. It fails on a base URL that is not an absolute http
// or https URL.
func NewResponses(cfg Config) (*ResponsesClient, error) {
	c, _, err := configure(cfg, "/responses")
	if err != nil {
		return nil, err
	}
	return &ResponsesClient{c}, nil
}

// responsesText is a content item of a request or an answer.
type responsesText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// responsesInput is an input item of a request: one message.
type responsesInput struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content []responsesText `json:"content"`
}

// responsesRequest is the body of POST /responses.
type responsesRequest struct {
	Model           string           `json:"model"`
	Instructions    string           `json:"instructions,omitempty"`
	Input           []responsesInput `json:"input"`
	MaxOutputTokens int              `json:"max_output_tokens,omitempty"`
	Temperature     *float64         `json:"temperature,omitempty"`
	Store           bool             `json:"store"`
	Stream          bool             `json:"stream"`
}

// responsesAnswer holds the fields of a response this package reads.
type responsesAnswer struct {
	Model  string `json:"model"`
	Status string `json:"status"`
	Output []struct {
		Type    string          `json:"type"`
		Content []responsesText `json:"content"`
	} `json:"output"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Usage *ResponsesUsage `json:"usage"`
	// Error is set on a failed response, and by servers that report a
	// failure inside a 2xx body.
	Error json.RawMessage `json:"error"`
}

// Complete sends req as one Responses request and returns the answer. It
// makes exactly one HTTP call and never retries; see ResponsesClient for
// what it sends and returns.
func (r *ResponsesClient) Complete(ctx context.Context, req *summarize.Request) (*summarize.Response, error) {
	model, err := r.c.modelFor(ctx, req)
	if err != nil {
		return nil, err
	}
	wire := responsesRequest{Model: model, Instructions: req.System, MaxOutputTokens: req.MaxTokens,
		Temperature: r.c.temperature,
		Input:       []responsesInput{{Type: "message", Role: "user", Content: []responsesText{{Type: "input_text", Text: req.Prompt}}}}}
	return r.c.post(ctx, &wire, func(body []byte) (*summarize.Response, error) {
		return decodeResponsesAnswer(body, model)
	})
}

// decodeResponsesAnswer turns a 2xx body into a Response or an error.
func decodeResponsesAnswer(body []byte, model string) (*summarize.Response, error) {
	var a responsesAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, fmt.Errorf("openai: undecodable response (%v): %w", err,
			&compact.ProviderError{Provider: providerName, Body: string(body)})
	}
	if isPresent(a.Error) || a.Status == "failed" {
		var e struct {
			Code json.RawMessage `json:"code"`
		}
		_ = json.Unmarshal(a.Error, &e)
		return nil, &compact.ProviderError{Provider: providerName, StatusCode: embeddedStatus(e.Code), Body: string(body)}
	}
	var text strings.Builder
	for _, o := range a.Output {
		if o.Type != "message" {
			continue
		}
		for _, c := range o.Content {
			if c.Type == "output_text" {
				text.WriteString(c.Text)
			}
		}
	}
	reason := ""
	if a.IncompleteDetails != nil {
		reason = a.IncompleteDetails.Reason
	}
	out := &summarize.Response{Text: text.String(), Truncated: reason == "max_output_tokens", Model: a.Model}
	if out.Model == "" {
		out.Model = model
	}
	if a.Usage != nil {
		out.Usage = a.Usage.Usage()
	}
	switch {
	case out.Truncated:
		return out, nil
	case reason == "content_filter":
		return nil, fmt.Errorf("openai: answer withheld by the content filter (incomplete_details.reason %q)", reason)
	case strings.TrimSpace(out.Text) == "":
		return nil, fmt.Errorf("openai: %w (status %q)", ErrEmptySummary, a.Status)
	}
	return out, nil
}

// Send sends body, a complete Responses API request the caller built (a
// conversation of its own, say), exactly as given: not re-encoded, with
// the client's headers and key. The answer is read as Complete reads it
// and the errors are Complete's. The body must ask for a non-streamed
// answer. header replaces the client's headers of the same names for
// this request.
func (r *ResponsesClient) Send(ctx context.Context, body []byte, header http.Header) (*summarize.Response, error) {
	set := header.Clone()
	if set == nil {
		set = http.Header{}
	}
	if r.c.apiKey != "" {
		set.Set("Authorization", "Bearer "+r.c.apiKey)
	}
	return apihttp.PostBody(ctx, r.c.call, set, body, func(b []byte) (*summarize.Response, error) {
		return decodeResponsesAnswer(b, r.c.model)
	})
}
