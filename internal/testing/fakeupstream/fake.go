// Package fakeupstream is a scripted model provider for tests: an
// http.Handler that speaks the Anthropic Messages, OpenAI Chat Completions
// and OpenAI Responses APIs, streamed (SSE framed as the providers frame
// it) and not, with a context window it enforces with each provider's real
// overflow error.
//
// It drives a coding agent through a fixed shell task. When a request
// offers a shell tool (Claude Code's Bash, Codex's exec_command, opencode's
// bash, ...) the fake answers with a call to it whose command prints
// "STEP-n" and a few KB of numbers. It reads n back from the last tool
// result in the next request (never by counting results: a compacting
// proxy may have summarized the older ones) and asks for step n+1 until
// Config.Steps steps are done, then answers "DONE after N steps".
// Requests without tools (titles, summaries) get a short plain answer.
//
// Every request is recorded (path, headers without credentials, body,
// counted tokens, list items, what was answered) for assertions.
//
// Where it matters to a proxy it behaves like the providers, by default:
// Anthropic thinking blocks are signed and bound to their prefix, and a
// request that breaks the thinking rules gets the API's 400 (thinking.go);
// prompt caching is billed by prefix with the providers' lifetimes
// (cache.go); Anthropic on-demand compaction and OpenAI
// /v1/responses/compact are served and their blobs checked
// (compaction.go); answers can take a model's time (Config.TurnLatency,
// Config.SummaryLatency). Config has a switch for each where a test needs
// the lenient behaviour.
package fakeupstream

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Fake is the scripted provider. It is safe for concurrent use.
type Fake struct {
	cfg Config
	// key signs thinking blocks and seals compaction blobs.
	key   [32]byte
	cache promptCache

	ids atomic.Int64 // numbers the ids in responses

	mu   sync.Mutex
	reqs []Request
	// diags are the cache-diagnostics fingerprints by response id (see
	// diagnose).
	diags map[string]diagPrint
}

// nextID returns a new id suffix for a response ("0001", "0002", ...).
func (f *Fake) nextID() string {
	return fmt.Sprintf("%04d", f.ids.Add(1))
}

// New returns a Fake following cfg (see Config for the defaults).
func New(cfg Config) *Fake {
	return &Fake{cfg: cfg.withDefaults(), key: newKey(), cache: promptCache{entries: map[cacheKey]*cacheEntry{}}}
}

// Start serves a new Fake on a loopback httptest server that is closed
// when the test ends, and returns the Fake and the server's base URL
// (http://127.0.0.1:PORT, no trailing slash and no /v1).
func Start(t testing.TB, cfg Config) (*Fake, string) {
	t.Helper()
	f := New(cfg)
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

// Request is one request the fake received, and what it did with it.
type Request struct {
	// Seq numbers the requests from 1 in arrival order.
	Seq int
	// Method and Path are the request line's; Path keeps the query.
	Method, Path string
	// API is the wire format, "" for paths outside the three APIs.
	API API
	// Header is the request's headers with credentials
	// (Authorization, X-Api-Key, Api-Key, Cookie) replaced by "[redacted]".
	Header http.Header
	// Body is the request body as received.
	Body []byte
	// Tokens is CountTokens(Body).
	Tokens int
	// Model and Stream are the body's fields of that name.
	Model  string
	Stream bool
	// Items are the elements of the message list (messages, or the input
	// array of Responses) exactly as sent.
	Items []json.RawMessage
	// Tools is the number of entries in the body's tools list.
	Tools int
	// Status is the HTTP status the fake answered.
	Status int
	// Rejected is true when the request was refused: Overflow, a pairing
	// problem, or a body that could not be read.
	Rejected bool
	// Overflow is true when it was refused because it exceeded the window
	// (also in OverflowInStream mode, where the status is 200).
	Overflow bool
	// Problems are the pairing problems found (see Pairing).
	Problems []string
	// Step is the step number of the shell call the fake answered with,
	// 0 when it answered with text.
	Step int
	// Text is the text the fake answered with, "" for a tool call; for a
	// compaction, the summary.
	Text string
	// Error is the message of the error the fake answered with.
	Error string

	// Credential names the key the request carried (see credential): a
	// hash, never the key.
	Credential string

	// Thinking is the request's thinking.type ("enabled", "adaptive",
	// "disabled"; "" without a thinking object).
	Thinking string
	// ThinkingVerified is how many thinking and redacted_thinking blocks
	// the request carried whose signature and prefix held.
	ThinkingVerified int
	// ThinkingDropped is how many were dropped because their prefix
	// changed (thinking.block_binding.prefix_mismatch_behavior
	// "drop_block").
	ThinkingDropped int
	// ThinkingRejected is true when the request was refused by the
	// thinking rules: a forged or altered signature, a prefix that
	// changed without drop_block, block_binding without its beta, or a
	// tool loop whose final assistant message does not start with
	// thinking.
	ThinkingRejected bool

	// CacheRead and CacheWrite are the prompt-cache tokens billed: read
	// from the cache, written to it (CacheWrite1h of them with a 1-hour
	// TTL). The rest of Tokens is uncached input.
	CacheRead, CacheWrite, CacheWrite1h int
	// Output is the output tokens billed (the usage's output_tokens,
	// completion_tokens or output_tokens), 0 for a request refused.
	Output int

	// Summary is true for a summary request (see Config.SummaryLatency).
	Summary bool
	// Compaction is true for a provider compaction the fake answered
	// (Anthropic on-demand compaction, /v1/responses/compact).
	Compaction bool
}

// ThinkingRefusals returns the requests refused by the thinking rules.
func (f *Fake) ThinkingRefusals() []Request {
	return f.where(func(r Request) bool { return r.ThinkingRejected })
}

// Summaries returns the summary requests (see Request.Summary) that were
// answered.
func (f *Fake) Summaries() []Request {
	return f.where(func(r Request) bool { return r.Summary && !r.Rejected })
}

// Requests returns a copy of every request recorded so far, in order.
func (f *Fake) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.reqs...)
}

// Overflows returns the requests refused for exceeding the window.
func (f *Fake) Overflows() []Request {
	return f.where(func(r Request) bool { return r.Overflow })
}

// where returns the recorded requests for which keep is true.
func (f *Fake) where(keep func(Request) bool) []Request {
	var out []Request
	for _, r := range f.Requests() {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// ToolCalls is the number of shell calls the fake has answered with.
func (f *Fake) ToolCalls() int {
	n := 0
	for _, r := range f.Requests() {
		if r.Step > 0 {
			n++
		}
	}
	return n
}

// MaxTokens is the largest token count of a request to one of the three
// APIs (0 when none).
func (f *Fake) MaxTokens() int {
	best := 0
	for _, r := range f.Requests() {
		if r.API != "" && r.Tokens > best {
			best = r.Tokens
		}
	}
	return best
}

// Window is the window the fake enforces, 0 for none.
func (f *Fake) Window() int { return f.cfg.Window }

// record appends a copy of r, numbering it.
func (f *Fake) record(r *Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r.Seq = len(f.reqs) + 1
	f.reqs = append(f.reqs, *r)
}

// recordingWriter runs commit once, just before the response's status or
// first bytes are written (or when the handler returns without writing).
type recordingWriter struct {
	http.ResponseWriter
	commit    func()
	committed bool
}

func (w *recordingWriter) done() {
	if !w.committed {
		w.committed = true
		w.commit()
	}
}

// WriteHeader commits the record, then sends the status.
func (w *recordingWriter) WriteHeader(status int) {
	w.done()
	w.ResponseWriter.WriteHeader(status)
}

// Write commits the record, then sends p.
func (w *recordingWriter) Write(p []byte) (int, error) {
	w.done()
	return w.ResponseWriter.Write(p)
}

// Flush passes a flush on to the underlying writer.
func (w *recordingWriter) Flush() {
	if fl, ok := w.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
}

// redact returns a copy of h with credentials replaced.
func redact(h http.Header) http.Header {
	out := h.Clone()
	for _, k := range []string{"Authorization", "X-Api-Key", "Api-Key", "Cookie", "Proxy-Authorization"} {
		if out.Get(k) != "" {
			out.Set(k, "[redacted]")
		}
	}
	return out
}

// ServeHTTP routes a request to the API its path names.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	rec := &Request{Method: r.Method, Path: r.URL.RequestURI(), Header: redact(r.Header), Body: raw, Tokens: CountTokens(raw)}
	// The request is recorded before the first byte of the answer goes
	// out, so a client that has its answer finds the request in Requests.
	rw := &recordingWriter{ResponseWriter: w, commit: func() { f.record(rec) }}
	defer rw.done()
	w = rw
	if err != nil {
		rec.Rejected, rec.Status = true, http.StatusBadRequest
		http.Error(w, "reading body: "+err.Error(), rec.Status)
		return
	}
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(path, "/v1/models"):
		f.models(w, r, rec)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/v1/messages/count_tokens"):
		rec.Status = http.StatusOK
		writeJSON(w, rec.Status, ordered{{"input_tokens", rec.Tokens}})
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/v1/messages"):
		f.serve(w, r, Anthropic, rec)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/v1/chat/completions"):
		f.serve(w, r, Chat, rec)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/v1/responses"):
		f.serve(w, r, Responses, rec)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/v1/responses/compact"):
		f.compact(w, r, rec)
	default:
		rec.Status = http.StatusNotFound
		writeJSON(w, rec.Status, ordered{{"error", ordered{{"message", "fakeupstream: no route for " + r.Method + " " + r.URL.Path}, {"type", "not_found_error"}}}})
	}
}

// models answers GET /v1/models in Anthropic's shape when the request
// carries anthropic-version, in OpenAI's otherwise.
func (f *Fake) models(w http.ResponseWriter, r *http.Request, rec *Request) {
	rec.Status = http.StatusOK
	names := []string{f.cfg.Model, f.cfg.Model + "-mini"}
	if r.Header.Get("Anthropic-Version") != "" {
		var data []ordered
		for _, n := range names {
			data = append(data, ordered{{"type", "model"}, {"id", n}, {"display_name", n}, {"created_at", "2026-01-01T00:00:00Z"}})
		}
		writeJSON(w, rec.Status, ordered{{"data", data}, {"has_more", false}, {"first_id", names[0]}, {"last_id", names[len(names)-1]}})
		return
	}
	var data []ordered
	for _, n := range names {
		data = append(data, ordered{{"id", n}, {"object", "model"}, {"created", 1767225600}, {"owned_by", "fakeupstream"}})
	}
	writeJSON(w, rec.Status, ordered{{"object", "list"}, {"data", data}})
}

// answer is what the script says next: a shell call or a text.
type answer struct {
	text string
	tool string // tool name, "" for a text answer
	args string // the call's arguments as JSON
	step int
	// summary is true when the script answered a summary request.
	summary bool
	// compaction is true for an Anthropic compaction block: text is its
	// content, blob its encrypted_content.
	compaction bool
	blob       string
	// thinking and signature, when signature is set, make an Anthropic
	// answer open with a thinking block.
	thinking, signature string
	// pace is the pause between the deltas of a stream.
	pace time.Duration
}

// admit reads a model call's body and applies the checks every endpoint
// of api shares: a body that parses, tool pairing, and (Responses) the
// compaction items' credential. It records what it read; false means the
// request was refused.
func (f *Fake) admit(w http.ResponseWriter, r *http.Request, api API, rec *Request) (*body, bool) {
	rec.API = api
	rec.Credential = credential(r.Header)
	b, err := parseBody(api, rec.Body)
	if err != nil {
		f.refuse(w, api, rec, "", "fakeupstream: request body: "+err.Error())
		return nil, false
	}
	b.cred = rec.Credential
	rec.Model, rec.Stream, rec.Items, rec.Tools = b.model, b.stream, b.items, len(b.tools)
	if b.model == "" {
		b.model = f.cfg.Model
	}
	rec.Problems = Pairing(api, b.items)
	if len(rec.Problems) > 0 && !f.cfg.AllowUnpaired {
		f.refuse(w, api, rec, "", "fakeupstream: "+rec.Problems[0])
		return nil, false
	}
	if api == Responses {
		if msg := f.responsesCompaction(rec.Credential, b.items); msg != "" {
			f.refuse(w, api, rec, "invalid_encrypted_content", msg)
			return nil, false
		}
	}
	return b, true
}

// overWindow refuses a request over the window with the provider's
// overflow error (true), or returns false.
func (f *Fake) overWindow(w http.ResponseWriter, api API, b *body, rec *Request) bool {
	if f.cfg.Window <= 0 || rec.Tokens <= f.cfg.Window {
		return false
	}
	rec.Rejected, rec.Overflow = true, true
	if api == Responses && b.stream && f.cfg.OverflowInStream {
		rec.Status = http.StatusOK
		f.responsesFailed(w, b, rec)
		return true
	}
	rec.Status, rec.Error = http.StatusBadRequest, overflowMessage(api, rec.Tokens, f.cfg.Window)
	f.overflow(w, api, rec.Tokens)
	return true
}

// serve handles one model call in any of the three APIs.
func (f *Fake) serve(w http.ResponseWriter, r *http.Request, api API, rec *Request) {
	b, ok := f.admit(w, r, api, rec)
	if !ok {
		return
	}
	if b.thinking != nil {
		rec.Thinking = b.thinking.Type
	}
	var think thinkingCheck
	if api == Anthropic {
		if b.thinking != nil && b.thinking.BlockBinding != nil && !hasBeta(r.Header, BindingBeta) {
			rec.ThinkingRejected = true
			f.refuse(w, api, rec, "", fmt.Sprintf(errBindingBeta, b.thinking.Type))
			return
		}
		comp, msg := f.anthropicCompaction(r.Header, rec.Credential, b)
		if msg != "" {
			f.refuse(w, api, rec, "", msg)
			return
		}
		think = f.checkThinking(b, comp)
		rec.ThinkingVerified, rec.ThinkingDropped = think.verified, think.dropped
		if think.refusal != "" {
			rec.ThinkingRejected = true
			f.refuse(w, api, rec, "", think.refusal)
			return
		}
	}
	if f.overWindow(w, api, b, rec) {
		return
	}
	var a answer
	if api == Anthropic && compactionRequested(b) {
		a = answer{compaction: true, summary: true, text: Handover(transcript(api, b.items))}
		a.blob = f.seal("anthropic-compaction", rec.Credential, compactionBlob{
			State: think.state, Step: f.stepsIn(api, rec.Credential, b.items), Items: len(b.items)})
		rec.Compaction = true
	} else {
		a = f.next(api, b)
	}
	if api == Anthropic && b.thinking.on() && !a.compaction {
		a.thinking = thinkingText(a)
		if b.thinking.Display == "omitted" {
			a.thinking = ""
		}
		a.signature = f.sign(messagePrefix(think.state, "assistant", nil), think.sys, think.tools, a.thinking)
	}
	rec.Step, rec.Text, rec.Summary = a.step, a.text, a.summary
	f.account(api, b, rec)
	lat := f.cfg.TurnLatency
	if a.summary {
		lat = f.cfg.SummaryLatency
	}
	wait := lat.FirstByte
	if b.stream {
		a.pace = lat.Stream / time.Duration(deltas(a))
	} else {
		wait += lat.Stream
	}
	if !f.pause(r, wait) {
		return
	}
	rec.Status, rec.Output = http.StatusOK, outputTokens(a)
	f.write(w, api, b, a, usageOf(rec))
}

// refuse answers a request with api's 400 invalid_request_error carrying
// msg (and code, for the OpenAI APIs), and records it.
func (f *Fake) refuse(w http.ResponseWriter, api API, rec *Request, code, msg string) {
	rec.Rejected, rec.Status, rec.Error = true, http.StatusBadRequest, msg
	writeError(w, api, rec.Status, "invalid_request_error", code, msg)
}

// pause waits d, or until the client gives up on the request (false).
func (f *Fake) pause(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// deltas is how many delta events a streamed answer a has (at least 1).
func deltas(a answer) int {
	if a.compaction {
		return 1
	}
	n := len(chunks(a.text, 24))
	if a.tool != "" {
		n = len(chunks(a.args, 24))
	}
	if a.signature != "" {
		n++ // the signature_delta
		if a.thinking != "" {
			n += len(chunks(a.thinking, 24))
		}
	}
	return n
}

// Reply is an answer a test decides itself (see Fake.Answer): the text
// Text, or, when Tool is set, a call to the tool Tool whose arguments are
// the JSON object Args.
type Reply struct {
	Text string
	Tool string
	Args string
}

// Answer writes r as the answer to the model call of api whose body is
// raw, in that API's wire format, streamed when the body asks for a
// stream, exactly as the Fake answers the steps of its own script; tokens
// is reported as the input usage. A body that does not parse is answered
// as a non-streamed request. Answer records nothing and applies no window:
// it is for a test server that decides its answers (and refusals, see
// WriteOverflow) itself but speaks the providers' formats through the Fake.
func (f *Fake) Answer(w http.ResponseWriter, api API, raw []byte, tokens int, r Reply) {
	b, err := parseBody(api, raw)
	if err != nil {
		b = &body{}
	}
	if b.model == "" {
		b.model = f.cfg.Model
	}
	f.write(w, api, b, answer{text: r.Text, tool: r.Tool, args: r.Args}, usage{Total: tokens})
}

// write sends a in api's wire format under a new id, billing u.
func (f *Fake) write(w http.ResponseWriter, api API, b *body, a answer, u usage) {
	id := f.nextID()
	switch api {
	case Anthropic:
		f.anthropic(w, b, a, u, id)
	case Chat:
		f.chat(w, b, a, u, id)
	case Responses:
		f.responses(w, b, a, u, id)
	}
}

// next runs the script on a parsed request.
func (f *Fake) next(api API, b *body) answer {
	if text, ok := lastUserText(b.items); ok && (IsSummaryPrompt(text) || asksForHandover(text)) {
		if !strings.Contains(text, transcriptTag) {
			// A summary request that is the conversation itself plus
			// compact's closing instruction: the model reads the
			// conversation as the transcript.
			text = transcript(api, b.items[:len(b.items)-1]) + text
		}
		return answer{text: Handover(text), summary: true}
	}
	if summaryRequested(api, b.items) {
		return answer{text: SummaryText, summary: true}
	}
	if len(b.tools) == 0 {
		return answer{text: TitleText}
	}
	t := pickTool(b.tools, f.cfg.ToolNames)
	if t == nil {
		names := make([]string, len(b.tools))
		for i, tl := range b.tools {
			names[i] = tl.name
		}
		return answer{text: "fakeupstream: no shell tool among " + strings.Join(names, ", ")}
	}
	done := 0
	items := b.items
	if f.cfg.Task != "" {
		for i := len(items) - 1; i >= 0; i-- {
			if strings.Contains(string(items[i]), f.cfg.Task) {
				items = items[i+1:]
				break
			}
		}
	}
	if res, ok := lastToolResult(api, items); ok {
		n, found := highestStep(res)
		if !found {
			return answer{text: "STOPPED: the last tool result has no STEP marker"}
		}
		done = n
	} else {
		// A provider compaction replaced the results: its blob says how
		// far the script had come.
		done = f.stepsIn(api, b.cred, items)
	}
	if done >= f.cfg.Steps {
		return answer{text: fmt.Sprintf("DONE after %d steps", done)}
	}
	step := done + 1
	return answer{tool: t.name, args: shellArgs(t, f.cfg.Command(step), step), step: step}
}

// SummaryText is the answer to a request whose last message asks for a
// summary (see summaryRequested), TitleText the answer to any other
// request without tools (opencode's title request, say).
const (
	SummaryText = "## Goal\nRun the numbered shell steps.\n\n## Progress\nSeveral steps ran; each printed STEP-n and a list of numbers.\n\n## Next steps\nContinue with the next step."
	TitleText   = "Numbered shell steps"
)
