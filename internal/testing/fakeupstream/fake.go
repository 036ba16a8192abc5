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
)

// Fake is the scripted provider. It is safe for concurrent use.
type Fake struct {
	cfg Config

	ids atomic.Int64 // numbers the ids in responses

	mu   sync.Mutex
	reqs []Request
}

// nextID returns a new id suffix for a response ("0001", "0002", ...).
func (f *Fake) nextID() string {
	return fmt.Sprintf("%04d", f.ids.Add(1))
}

// New returns a Fake following cfg (see Config for the defaults).
func New(cfg Config) *Fake {
	return &Fake{cfg: cfg.withDefaults()}
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
	// Text is the text the fake answered with, "" for a tool call.
	Text string
}

// Requests returns a copy of every request recorded so far, in order.
func (f *Fake) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.reqs...)
}

// Overflows returns the requests refused for exceeding the window.
func (f *Fake) Overflows() []Request {
	var out []Request
	for _, r := range f.Requests() {
		if r.Overflow {
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
		f.serve(w, Anthropic, rec)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/v1/chat/completions"):
		f.serve(w, Chat, rec)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/v1/responses"):
		f.serve(w, Responses, rec)
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
}

// serve handles one model call in any of the three APIs.
func (f *Fake) serve(w http.ResponseWriter, api API, rec *Request) {
	rec.API = api
	b, err := parseBody(api, rec.Body)
	if err != nil {
		rec.Rejected, rec.Status = true, http.StatusBadRequest
		writeError(w, api, rec.Status, "invalid_request_error", "", "fakeupstream: request body: "+err.Error())
		return
	}
	rec.Model, rec.Stream, rec.Items, rec.Tools = b.model, b.stream, b.items, len(b.tools)
	if b.model == "" {
		b.model = f.cfg.Model
	}
	rec.Problems = Pairing(api, b.items)
	if len(rec.Problems) > 0 && !f.cfg.AllowUnpaired {
		rec.Rejected, rec.Status = true, http.StatusBadRequest
		writeError(w, api, rec.Status, "invalid_request_error", "", "fakeupstream: "+rec.Problems[0])
		return
	}
	if f.cfg.Window > 0 && rec.Tokens > f.cfg.Window {
		rec.Rejected, rec.Overflow = true, true
		if api == Responses && b.stream && f.cfg.OverflowInStream {
			rec.Status = http.StatusOK
			f.responsesFailed(w, b, rec)
			return
		}
		rec.Status = http.StatusBadRequest
		f.overflow(w, api, rec.Tokens)
		return
	}
	a := f.next(api, b)
	rec.Step, rec.Text, rec.Status = a.step, a.text, http.StatusOK
	f.write(w, api, b, a, rec.Tokens)
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
	f.write(w, api, b, answer{text: r.Text, tool: r.Tool, args: r.Args}, tokens)
}

// write sends a in api's wire format under a new id.
func (f *Fake) write(w http.ResponseWriter, api API, b *body, a answer, tokens int) {
	id := f.nextID()
	switch api {
	case Anthropic:
		f.anthropic(w, b, a, tokens, id)
	case Chat:
		f.chat(w, b, a, tokens, id)
	case Responses:
		f.responses(w, b, a, tokens, id)
	}
}

// next runs the script on a parsed request.
func (f *Fake) next(api API, b *body) answer {
	if text, ok := lastUserText(b.items); ok && IsSummaryPrompt(text) {
		return answer{text: Handover(text)}
	}
	if summaryRequested(api, b.items) {
		return answer{text: SummaryText}
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
