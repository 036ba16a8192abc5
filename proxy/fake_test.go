package proxy

import (
	"bytes"
	"crypto/sha256"
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

	"github.com/compactkit/compact/internal/testing/fakeupstream"
)

// seen is one request as the fake upstream received it.
type seen struct {
	Path   string
	Header http.Header
	// Body is the decoded body; Raw the bytes as they arrived.
	Body []byte
	Raw  []byte
}

// fakeUpstream answers the three APIs with a tool call (or plain text for
// tool-less requests such as summaries), reports usage as bytes/4 and
// rejects requests over window tokens with the provider's overflow error.
// It speaks the wire formats through fakeupstream (Fake.Answer,
// WriteOverflow); what it adds is its own script (the n-th request is
// answered with a call running "seq 1 n") and the switches the proxy's
// tests turn.
type fakeUpstream struct {
	t      *testing.T
	srv    *httptest.Server
	wire   *fakeupstream.Fake
	window int // 0: no limit
	// gate, when set, holds every tool-less (summary) request until it is
	// closed; summaries counts them.
	gate      chan struct{}
	summaries atomic.Int32
	// summaryDelay makes every tool-less (summary) request take that
	// long, as a model writing a long summary does (turns answer at once).
	summaryDelay time.Duration
	// hangSummaries makes tool-less (summary) requests wait until the
	// caller gives up.
	hangSummaries bool
	// reject400, when set, refuses the requests it matches with a 400
	// that is not an overflow.
	reject400 func(body []byte) bool
	// echoAuth makes tool-less (summary) requests fail with a 401 whose
	// body quotes the credential.
	echoAuth bool
	// summaryReply, when set, is the text of the answer to the n-th
	// tool-less (summary) request (from 1) instead of the hand-over.
	summaryReply func(n int) string

	mu   sync.Mutex
	reqs []seen
	// reject, when set, decides per request whether to answer with an
	// overflow error regardless of size.
	reject func(n int, body []byte) bool
}

func newFakeUpstream(t *testing.T) *fakeUpstream {
	f := &fakeUpstream{t: t, wire: fakeupstream.New(fakeupstream.Config{Model: "m"})}
	f.srv = httptest.NewServer(f)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeUpstream) requests() []seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seen(nil), f.reqs...)
}

// modelRequests are the requests that carried tools (the agent's own, not
// the summarizer's).
func (f *fakeUpstream) modelRequests() []seen {
	var out []seen
	for _, r := range f.requests() {
		if isAgentRequest(r.Path, r.Body) {
			out = append(out, r)
		}
	}
	return out
}

// isAgentRequest reports whether body is an agent's own turn: it offers
// tools and is not a summary request asked on the conversation itself
// (which carries the conversation's tools, not callable).
func isAgentRequest(path string, body []byte) bool {
	api, ok := fakeAPIs[path]
	if !ok {
		return bytes.Contains(body, []byte(`"tools"`))
	}
	return fakeupstream.IsAgentTurn(api, body)
}

func tokensOf(body []byte) int { return fakeupstream.CountTokens(body) }

// fakeAPIs maps the paths the fake answers to their wire formats.
var fakeAPIs = map[string]fakeupstream.API{
	"/v1/messages":         fakeupstream.Anthropic,
	"/v1/chat/completions": fakeupstream.Chat,
	"/v1/responses":        fakeupstream.Responses,
}

func (f *fakeUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	raw := body
	if enc := r.Header.Get("Content-Encoding"); enc != "" {
		dec, err := decodeAll(enc, body, 64<<20)
		if err != nil {
			f.t.Errorf("upstream got a body it cannot decode as %s: %v", enc, err)
		}
		body = dec
	}
	f.mu.Lock()
	n := len(f.reqs)
	f.reqs = append(f.reqs, seen{Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Raw: raw})
	reject := f.reject
	f.mu.Unlock()
	tokens := tokensOf(body)
	over := f.window > 0 && tokens > f.window
	if reject != nil && reject(n, body) {
		over = true
	}
	tools := isAgentRequest(r.URL.Path, body)
	if f.reject400 != nil && f.reject400(body) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(400)
		fmt.Fprint(w, `{"error":{"message":"Unrecognized request argument supplied: block_binding","type":"invalid_request_error","code":null}}`)
		return
	}
	if !tools {
		f.summaries.Add(1)
		if f.gate != nil {
			select {
			case <-f.gate:
			case <-r.Context().Done():
				return
			}
		}
	}
	if !tools && f.summaryDelay > 0 {
		select {
		case <-time.After(f.summaryDelay):
		case <-r.Context().Done():
			return
		}
	}
	if !tools && f.hangSummaries {
		<-r.Context().Done()
		return
	}
	if !tools && f.echoAuth {
		// A summary request refused with an error that quotes the
		// credential, as some gateways do.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(401)
		fmt.Fprintf(w, `{"error":{"message":"invalid key %s%s","type":"authentication_error"}}`, r.Header.Get("X-Api-Key"), r.Header.Get("Authorization"))
		return
	}
	api, ok := fakeAPIs[r.URL.Path]
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"path":%q,"method":%q}`, r.URL.Path, r.Method)
		return
	}
	if over {
		fakeupstream.WriteOverflow(w, api, tokens, f.window)
		return
	}
	reply := fakeupstream.Reply{Text: fakeupstream.Handover(fakeupstream.Prompt(api, body))}
	if !tools && f.summaryReply != nil {
		reply.Text = f.summaryReply(int(f.summaries.Load()))
	}
	if tools {
		// The shell tool each API's client in these tests offers.
		reply = fakeupstream.Reply{Tool: "Bash", Args: fmt.Sprintf(`{"command":"seq 1 %d"}`, n)}
		switch api {
		case fakeupstream.Chat:
			reply.Tool = "bash"
		case fakeupstream.Responses:
			reply.Tool, reply.Args = "exec_command", fmt.Sprintf(`{"cmd":"seq 1 %d"}`, n)
		}
	}
	f.wire.Answer(w, api, body, tokens, reply)
}

func sha(b []byte) string { s := sha256.Sum256(b); return fmt.Sprintf("%x", s[:8]) }

// listOf returns the raw elements of the body's message list.
func listOf(t *testing.T, api API, body []byte) []json.RawMessage {
	t.Helper()
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("upstream body is not JSON: %v", err)
	}
	key := "messages"
	if api == Responses {
		key = "input"
	}
	var list []json.RawMessage
	if err := json.Unmarshal(doc[key], &list); err != nil {
		t.Fatalf("upstream %s: %v", key, err)
	}
	return list
}

func isSummaryItem(raw []byte) bool {
	return bytes.Contains(raw, []byte("The earlier part of this conversation was condensed"))
}

// summaryOf returns the summary item of an upstream body, "" when none.
func summaryOf(t *testing.T, api API, body []byte) string {
	t.Helper()
	for _, it := range listOf(t, api, body) {
		if isSummaryItem(it) {
			return string(it)
		}
	}
	return ""
}

func toolOutput(step int) string {
	var b strings.Builder
	for i := 0; b.Len() < 6000; i++ {
		fmt.Fprintf(&b, "step %d line %d: some tool output that fills the window\n", step, i)
	}
	return b.String()
}
