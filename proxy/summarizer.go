package proxy

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/anthropic"
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
// (none when nil) and are recorded in calls (not when nil).
//
// With the conversation's own model, a summary is asked on the
// conversation itself when its prefix fits the model's window (see
// rider): the request the proxy sends upstream, cut after the summarized
// messages, plus one closing instruction, so that the provider reads the
// history from its prompt cache. Otherwise, and with another model, the
// history is quoted as a transcript.
func (s *Server) summarizerFor(api API, h http.Header, v *view, lim *callLimit, calls *summaryRun) compact.Summarizer {
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
		comp, err = openai.NewResponses(openai.Config{BaseURL: withV1(base), Model: model, Header: header, HTTPClient: s.client, Timeout: s.summaryTTL})
	}
	if err != nil {
		return failing{err}
	}
	opts := summarize.Options{Completer: lim.wrap(recordingCompleter{comp, calls}), Model: model, Info: info, MaxTries: 2}
	if snd, ok := comp.(sender); ok && model == v.p.Model {
		opts.Conversation = (&rider{s: s, v: v, info: info, send: snd, lim: lim, calls: calls, secrets: secretsOf(h), betas: h.Values("Anthropic-Beta")}).ask
	}
	sum, err := summarize.New(opts)
	if err != nil {
		return failing{err}
	}
	// A time of its own for the whole summary, so that when it runs out
	// the engine's fallback still has the caller's time to write the
	// offline summary.
	up := summarize.WithDeadline(sum, s.summaryTTL)
	if s.cfg.Summarizer == SummarizerNative {
		return s.newNative(api, h, v, up, lim, calls)
	}
	return up
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
