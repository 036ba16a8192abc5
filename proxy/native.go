package proxy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/anthropic"
	"github.com/compactkit/compact/internal/apihttp"
	"github.com/compactkit/compact/internal/redact"
	"github.com/compactkit/compact/openai"
	"github.com/compactkit/compact/proxy/store"
)

// Provider compaction as a summarizer (SummarizerNative).
//
// Anthropic on-demand compaction (beta compact-2026-09-04; PROXY.md §1.7,
// §8; docs pages compaction-on-demand, compaction-background): the request
// is the conversation as the proxy sends it upstream, up to our cut, with
// top-level "compaction": {"type": "summarize"}; the answer is one
// message holding a signed compaction block (content: the readable
// summary, encrypted_content: sent back verbatim) and stop_reason
// "compaction". The block goes first in messages in place of exactly the
// messages sent, the beta header on every request carrying it, and the
// kept messages follow unchanged, the first of the other role: the
// thinking after it stays valid. It cannot be combined with
// context_management.
//
// OpenAI POST /v1/responses/compact (PROXY.md §1.8, §3.3; codex
// endpoint/compact.rs: model, input, instructions): the answer's output is
// the window to send in place of the input it was given. Its items are
// encrypted for the credential that made them.

// nativeWindow is what a provider compaction returned for one span: the
// list element(s) that replace the units before end.
type nativeWindow struct {
	end  int
	item []byte
	// kind is store.Checkpoint.Native; cred its Credential.
	kind, cred string
}

// Why a provider compaction is not used for a summary request, which the
// upstream summarizer then writes.
var (
	errNativeUnsuited = errors.New("proxy: the provider's compaction does not fit this summary")
	errNativeEmpty    = errors.New("proxy: the provider's compaction returned no window")
)

// native is the summarizer of one compaction with SummarizerNative: the
// provider compacts the history itself; what its compaction cannot do (a
// split turn's prefix, a conversation that uses context_management, a
// model it refuses) the upstream summarizer does.
type native struct {
	s        *Server
	v        *view
	upstream compact.Summarizer
	call     apihttp.Call // the endpoint, the client's credential headers
	betas    []string     // the client's anthropic-beta header
	lim      *callLimit
	run      *summaryRun
	secrets  []string
	cred     string // credentialTag of the client's credential
}

// nativeKey names an API's model in Server.nativeOff.
func nativeKey(api API, model string) string { return string(api) + " " + model }

// newNative returns the SummarizerNative summarizer of one compaction of
// v with the client's headers h, or upstream itself where the API has no
// provider compaction or the provider refused it for the model.
func (s *Server) newNative(api API, h http.Header, v *view, upstream compact.Summarizer, lim *callLimit, run *summaryRun) compact.Summarizer {
	if api == Chat {
		return upstream
	}
	if _, off := s.nativeOff.Load(nativeKey(api, v.p.Model)); off {
		return upstream
	}
	path, provider := "/v1/responses/compact", "openai"
	if api == Anthropic {
		path, provider = "/v1/messages", "anthropic"
	}
	header := http.Header{}
	for _, name := range credentialHeaders {
		for _, val := range h.Values(name) {
			header.Add(name, val)
		}
	}
	call, _, err := apihttp.NewCall(apihttp.Setup{
		Provider: provider, BaseURL: trimV1(s.upstreamFor(api)), Path: path,
		Timeout: s.summaryTTL, HTTPClient: s.client, DefaultUserAgent: "compactkit-compact/proxy",
		Header: header, MaxErrorBody: 64 << 10, MaxBody: 32 << 20,
	})
	if err != nil {
		return upstream
	}
	return &native{s: s, v: v, upstream: upstream, call: call, betas: h.Values("Anthropic-Beta"),
		lim: lim, run: run, secrets: secretsOf(h), cred: credentialTag(h)}
}

// credentialTag identifies the credential of h for
// store.Checkpoint.Credential: a hash, never the credential.
func credentialTag(h http.Header) string {
	sum := sha256.Sum256([]byte("compact-proxy-credential-v1\x00" + credential(h)))
	return hex.EncodeToString(sum[:12])
}

// Summarize has the provider compact the history of req, or hands req to
// the upstream summarizer where that cannot be done.
func (n *native) Summarize(ctx context.Context, req *compact.SummaryRequest) (*compact.Summary, error) {
	if req == nil || !n.fromStart(req) {
		return n.upstream.Summarize(ctx, req)
	}
	sum, err := n.compact(ctx, req)
	switch {
	case err == nil:
		return sum, nil
	case ctx.Err() != nil, errors.Is(err, errWorkBound):
		return nil, err
	case refusesNative(err):
		// Once per model: its later compactions go to the upstream
		// summarizer at once.
		if _, known := n.s.nativeOff.LoadOrStore(nativeKey(n.v.api, n.v.p.Model), true); !known {
			n.s.log.Warn("the provider refused its own compaction for this model; the upstream summarizer writes its summaries",
				"api", n.v.api, "model", n.v.p.Model, "err", redact.String(err.Error(), n.secrets...))
		}
	case errors.Is(err, errNativeUnsuited), errors.Is(err, errNativeEmpty), compact.IsContextOverflow(err):
		n.s.log.Info("provider compaction not used for this summary; the upstream summarizer writes it",
			"conversation", n.v.id.short, "err", redact.String(err.Error(), n.secrets...))
	default:
		return nil, err
	}
	return n.upstream.Summarize(ctx, req)
}

// fromStart reports whether req's span starts where the request's
// unsummarized history does (its first unit, or the first after the
// applied compaction): the provider compacts everything before the end of
// the span, so a span starting later (the prefix of a turn whose earlier
// history a summary of its own covers) is not its to write. A turn
// prefix that opens the history is, although the engine asks for it as a
// turn's part.
func (n *native) fromStart(req *compact.SummaryRequest) bool {
	if len(req.Messages) == 0 {
		return false
	}
	start := 0
	if n.v.cp != nil {
		start = n.v.cp.Covered
	}
	i, ok := unitOf(n.v.p.Units, req.Messages[0])
	return ok && i == start
}

// refusesNative reports whether err is the provider saying it has no
// compaction for this model or platform: a 404, or a 400 that names
// compaction (and is not an overflow).
func refusesNative(err error) bool {
	var pe *compact.ProviderError
	if !errors.As(err, &pe) || compact.IsContextOverflow(err) {
		return false
	}
	return pe.StatusCode == http.StatusNotFound ||
		(pe.StatusCode == http.StatusBadRequest && strings.Contains(strings.ToLower(pe.Body), "compact"))
}

// compact makes the provider compaction of req's span.
func (n *native) compact(ctx context.Context, req *compact.SummaryRequest) (*compact.Summary, error) {
	v := n.v
	end, items, envelope, err := sentPrefix(v, req.Messages)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNativeUnsuited, err)
	}
	if v.api == Anthropic {
		if end < len(v.p.Units) && v.p.Units[end].Messages[0].Role != compact.RoleAssistant {
			// The block (in a user message) must be followed by the
			// assistant's: a cut before a user message is compact's to
			// summarize (see finishCheckpoint).
			return nil, fmt.Errorf("%w: the kept part does not open with the assistant's message", errNativeUnsuited)
		}
		return n.anthropic(ctx, end, items, envelope)
	}
	return n.responses(ctx, req, end, items)
}

// post sends body to the provider's compaction endpoint, counted against
// the compaction's calls, and returns the 2xx answer.
func (n *native) post(ctx context.Context, body []byte, set http.Header) ([]byte, error) {
	if err := n.lim.take(); err != nil {
		return nil, err
	}
	return apihttp.PostBody(ctx, n.call, set, body, func(b []byte) ([]byte, error) { return b, nil })
}

// anthropic asks for an on-demand compaction of the messages before end.
func (n *native) anthropic(ctx context.Context, end int, items [][]byte, envelope func([]byte) []byte) (*compact.Summary, error) {
	p := n.v.p
	if topLevel(p.Body, "context_management") != nil {
		return nil, fmt.Errorf("%w: the request uses context_management, which the API does not combine with compaction", errNativeUnsuited)
	}
	body, err := editMembers(forkList(p, p.Body, items, nil), []member{{"compaction", []byte(`{"type":"summarize"}`)}}, "stream")
	if err != nil {
		return nil, err
	}
	if envelope != nil {
		body = envelope(body)
	}
	set := http.Header{"Anthropic-Version": {anthropic.APIVersion}}
	if len(n.betas) > 0 {
		set["Anthropic-Beta"] = append([]string(nil), n.betas...)
	}
	addBetas(set, anthropicBetas(body))
	raw, err := n.post(ctx, body, set)
	if err != nil {
		return nil, err
	}
	var resp struct {
		Content    []json.RawMessage `json:"content"`
		StopReason string            `json:"stop_reason"`
		Usage      *anthropic.Usage  `json:"usage"`
	}
	usage, err := readAnswer(n.run, raw, &resp, func() *anthropic.Usage { return resp.Usage })
	if err != nil {
		return nil, err
	}
	for _, blk := range resp.Content {
		var b struct {
			Type    string  `json:"type"`
			Content *string `json:"content"`
		}
		if json.Unmarshal(blk, &b) != nil || b.Type != "compaction" {
			continue
		}
		if b.Content == nil || strings.TrimSpace(*b.Content) == "" {
			// A failed compaction: the API would ignore the block.
			return nil, fmt.Errorf("%w: the compaction block has no summary (stop_reason %q)", errNativeEmpty, resp.StopReason)
		}
		// The block opens the list in a user message, followed by the
		// kept messages from the assistant's on (see finishCheckpoint).
		item := append(append([]byte(`{"role":"user","content":[`), bytes.TrimSpace(blk)...), "]}"...)
		n.run.setNative(&nativeWindow{end: end, item: item, kind: "anthropic", cred: n.cred})
		return &compact.Summary{Text: strings.TrimSpace(*b.Content), Summarizer: p.Model, Usage: &usage}, nil
	}
	return nil, fmt.Errorf("%w: no compaction block (stop_reason %q)", errNativeEmpty, resp.StopReason)
}

// responses asks POST /v1/responses/compact for the window of the items
// before end (the head stays apart, as in every rewrite). The window is
// encrypted, so the readable summary recorded with it is the offline one.
func (n *native) responses(ctx context.Context, req *compact.SummaryRequest, end int, items [][]byte) (*compact.Summary, error) {
	p := n.v.p
	var b bytes.Buffer
	b.WriteString(`{"model":`)
	b.Write(quote(p.Model))
	b.WriteString(`,"input":[`)
	b.Write(bytes.Join(items[p.Head:], []byte(",")))
	b.WriteByte(']')
	if ins := topLevel(p.Body, "instructions"); ins != nil {
		b.WriteString(`,"instructions":`)
		b.Write(ins)
	}
	b.WriteByte('}')
	raw, err := n.post(ctx, b.Bytes(), nil)
	if err != nil {
		return nil, err
	}
	var resp struct {
		Output []json.RawMessage      `json:"output"`
		Usage  *openai.ResponsesUsage `json:"usage"`
	}
	usage, err := readAnswer(n.run, raw, &resp, func() *openai.ResponsesUsage { return resp.Usage })
	if err != nil {
		return nil, err
	}
	if len(resp.Output) == 0 {
		return nil, fmt.Errorf("%w: empty output", errNativeEmpty)
	}
	out := make([][]byte, len(resp.Output))
	for i, it := range resp.Output {
		out[i] = bytes.TrimSpace(it)
	}
	text, err := n.s.extractive().Summarize(ctx, req)
	if err != nil {
		return nil, err
	}
	n.run.setNative(&nativeWindow{end: end, item: bytes.Join(out, []byte(",")), kind: "responses", cred: n.cred})
	return &compact.Summary{Text: text.Text, Summarizer: p.Model, Usage: &usage}, nil
}

// readAnswer decodes a compaction endpoint's answer into v and records
// the usage it reports (read by usage after decoding; nil when none) as
// one summary request.
func readAnswer[U interface{ Usage() compact.Usage }](run *summaryRun, raw []byte, v any, usage func() *U) (compact.Usage, error) {
	if err := json.Unmarshal(raw, v); err != nil {
		return compact.Usage{}, fmt.Errorf("%w: %v", errNativeEmpty, err)
	}
	var u compact.Usage
	if r := usage(); r != nil {
		u = (*r).Usage()
	}
	run.add(true, u)
	return u, nil
}

// finishCheckpoint completes a compaction's checkpoint with what its
// summarizer left: the usage of its requests, and a provider compaction's
// window as the item when it replaces exactly the covered units (a
// summary merged from parts, a cut moved by the planner, or an Anthropic
// block followed by anything but an assistant message keep compact's own
// summary item, written from the provider's readable summary). The
// Anthropic block goes in a user message, and the kept messages must
// follow it with the other role (PROXY.md §1.7).
func (s *Server) finishCheckpoint(v *view, cp *store.Checkpoint, run *summaryRun) {
	cp.SummaryCalls = run.list()
	w := run.window()
	if w == nil || w.end != cp.Covered || cp.Covered >= len(v.p.Units) {
		return
	}
	if first := v.p.Units[cp.Covered].Messages; v.api == Anthropic && (len(first) == 0 || first[0].Role != compact.RoleAssistant) {
		return
	}
	cp.Item, cp.Native, cp.Credential = w.item, w.kind, w.cred
	cp.TokensAfter = v.envelope + s.estimateBytes(v.p.Model, cp.Item) + s.estimateUnits(v.p.Model, v.p.Units[cp.Covered:])
}
