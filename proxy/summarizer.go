package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/anthropic"
	"github.com/compactkit/compact/internal/apihttp"
	"github.com/compactkit/compact/openai"
	"github.com/compactkit/compact/summarize"
	"github.com/compactkit/compact/summarize/extractive"
)

// credentialHeaders are the request headers an upstream summary call
// carries over from the client's request: its credentials and the headers
// that select its account or API version. They live only in memory, for
// the one call.
var credentialHeaders = []string{
	"Authorization", "X-Api-Key", "Api-Key",
	"Anthropic-Beta",
	"Openai-Organization", "Openai-Project", "Chatgpt-Account-Id",
}

// extractive returns the offline summarizer, also the fallback of every
// model summary.
func (s *Server) extractive() compact.Summarizer { return extractive.New(extractive.Options{}) }

// summarizerFor returns the summarizer of one compaction: offline, or the
// conversation's model (or Config.SummaryModel) through the same upstream
// with the client's own credentials. Its model calls count against lim
// (none when nil).
func (s *Server) summarizerFor(api API, h http.Header, v *view, lim *callLimit) compact.Summarizer {
	if s.cfg.Summarizer == SummarizerExtractive {
		return s.extractive()
	}
	model := v.p.Model
	info := v.info
	if s.cfg.SummaryModel != "" {
		model = s.cfg.SummaryModel
		if m, ok := s.registry.Lookup(model); ok && m.ContextWindow > 0 {
			info = m
		} else {
			info = compact.ModelInfo{ID: model, ContextWindow: v.info.ContextWindow}
		}
	}
	info.ID = model
	header := http.Header{}
	for _, name := range credentialHeaders {
		for _, val := range h.Values(name) {
			header.Add(name, val)
		}
	}
	base := s.upstreamFor(api)
	var comp summarize.Completer
	var err error
	switch api {
	case Anthropic:
		comp, err = anthropic.New(anthropic.Config{BaseURL: trimV1(base), Model: model, Header: header, HTTPClient: s.client, Timeout: s.summaryTTL})
	case Chat:
		comp, err = openai.New(openai.Config{BaseURL: withV1(base), Model: model, Header: header, HTTPClient: s.client, Timeout: s.summaryTTL})
	default:
		comp = &responsesCompleter{client: s.client, url: withV1(base) + "/responses", header: header, model: model, secrets: secretsOf(h)}
	}
	if err != nil {
		return failing{err}
	}
	sum, err := summarize.New(summarize.Options{Completer: lim.wrap(comp), Model: model, Info: info, MaxTries: 2})
	if err != nil {
		return failing{err}
	}
	// A time of its own for the whole summary, so that when it runs out
	// the engine's fallback still has the caller's time to write the
	// offline summary.
	return summarize.WithDeadline(sum, s.summaryTTL)
}

// failing is a summarizer that always fails, so that the fallback writes
// the summary.
type failing struct{ err error }

// Summarize returns the error the summarizer could not be built with.
func (f failing) Summarize(context.Context, *compact.SummaryRequest) (*compact.Summary, error) {
	return nil, f.err
}

// trimV1 returns the upstream base without a trailing /v1.
func trimV1(u *url.URL) string {
	return strings.TrimSuffix(strings.TrimSuffix(u.String(), "/"), "/v1")
}

// withV1 returns the upstream base ending in /v1.
func withV1(u *url.URL) string { return trimV1(u) + "/v1" }

// responsesCompleter is a summarize.Completer for the Responses API: one
// non-streaming, tool-less request with the system prompt as instructions.
type responsesCompleter struct {
	client  *http.Client
	url     string
	header  http.Header
	model   string
	secrets []string
}

// Complete sends one request to /v1/responses.
func (c *responsesCompleter) Complete(ctx context.Context, req *summarize.Request) (*summarize.Response, error) {
	model := req.Model
	if model == "" {
		model = c.model
	}
	type content struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	type item struct {
		Type    string    `json:"type"`
		Role    string    `json:"role"`
		Content []content `json:"content"`
	}
	payload, err := json.Marshal(struct {
		Model           string `json:"model"`
		Instructions    string `json:"instructions,omitempty"`
		Input           []item `json:"input"`
		MaxOutputTokens int    `json:"max_output_tokens,omitempty"`
		Store           bool   `json:"store"`
		Stream          bool   `json:"stream"`
	}{model, req.System, []item{{"message", "user", []content{{"input_text", req.Prompt}}}}, req.MaxTokens, false, false})
	if err != nil {
		return nil, err
	}
	body, err := apihttp.Post(ctx, apihttp.Call{Provider: "openai", Client: c.client, URL: c.url, Header: c.header.Clone(),
		UserAgent: "compact-proxy", Body: payload, MaxErrorBody: 64 << 10, MaxBody: 16 << 20})
	if err != nil {
		return nil, apihttp.RedactError(err, c.secrets)
	}
	var out struct {
		Model  string `json:"model"`
		Status string `json:"status"`
		Output []struct {
			Type    string    `json:"type"`
			Content []content `json:"content"`
		} `json:"output"`
		IncompleteDetails *struct {
			Reason string `json:"reason"`
		} `json:"incomplete_details"`
		Usage struct {
			InputTokens        int `json:"input_tokens"`
			OutputTokens       int `json:"output_tokens"`
			InputTokensDetails struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"input_tokens_details"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("responses: decoding the answer: %w", err)
	}
	var text strings.Builder
	for _, o := range out.Output {
		if o.Type != "message" {
			continue
		}
		for _, c := range o.Content {
			if c.Type == "output_text" {
				text.WriteString(c.Text)
			}
		}
	}
	resp := &summarize.Response{
		Text:      text.String(),
		Truncated: out.IncompleteDetails != nil && out.IncompleteDetails.Reason == "max_output_tokens",
		Model:     out.Model,
		Usage: compact.Usage{
			Input:     out.Usage.InputTokens - out.Usage.InputTokensDetails.CachedTokens,
			CacheRead: out.Usage.InputTokensDetails.CachedTokens,
			Output:    out.Usage.OutputTokens,
		},
	}
	if resp.Text == "" && !resp.Truncated {
		return nil, errors.New("responses: the answer has no text")
	}
	return resp, nil
}
