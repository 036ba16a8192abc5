// Package clienttest holds what the tests of the two API clients
// (anthropic, openai) share: a test server that records every request
// (Server), canned handlers (Reply, Blocking), and the checks each client
// must pass whatever its wire format (WithoutSending, Cancelled, Timeout,
// ErrorsCarryNoKey, RedirectNamed, FromEnv) and the table runners of each
// client's own cases (Answers, EmptyAnswers, ProviderErrors, Rejects): a
// request that cannot be sent is refused before anything is, a cancelled
// or timed-out call abandons its request, a server that quotes the
// request's headers gets no key into the error, a redirect is not
// followed, the environment gives a key and a base URL and nothing else.
package clienttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/redact"
	"github.com/compactkit/compact/summarize"
)

// Received is what the test server saw of one request.
type Received struct {
	Method string
	Path   string
	Header http.Header
	// Body is the request's JSON body, decoded (nil when it is not a
	// JSON object).
	Body map[string]any
}

// Server is an httptest server that records every request and answers
// with the handler under test. Hits counts the requests.
type Server struct {
	*httptest.Server
	Hits atomic.Int32
	mu   sync.Mutex
	reqs []Received
}

// NewServer starts a Server answering with h, closed when the test ends.
func NewServer(t testing.TB, h http.HandlerFunc) *Server {
	t.Helper()
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Hits.Add(1)
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		s.mu.Lock()
		s.reqs = append(s.reqs, Received{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
		s.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// Last returns the latest request the server received; the test fails
// when there was none.
func (s *Server) Last(t testing.TB) Received {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.reqs) == 0 {
		t.Fatal("server received no request")
	}
	return s.reqs[len(s.reqs)-1]
}

// Reply answers with a status, headers (name, value, name, value, ...)
// and a body; the Content-Type is application/json unless a header
// gives another.
func Reply(status int, body string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// Blocking never answers: when partial is not "", it sends a 200 and
// partial (the start of a body) first; then it closes started and waits
// for the request's context to end, and closes exited when it returns,
// so that a test can see that the handler was released.
func Blocking(started, exited chan<- struct{}, partial string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		defer close(exited)
		if partial != "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(200)
			_, _ = io.WriteString(w, partial)
			w.(http.Flusher).Flush()
		}
		close(started)
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}
}

// WaitExit fails the test when a Blocking handler has not returned
// within 5 seconds: the client did not abandon its request.
func WaitExit(t testing.TB, exited <-chan struct{}) {
	t.Helper()
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Fatal("handler still running: the request was not abandoned")
	}
}

// CanaryKey is an API key in no known shape: only knowing it as the
// configured key can take it out of an error.
const CanaryKey = "canary-7QpXz<Lm29>&vK"

// GatewayToken is a secret sent in an extra header of a client's
// configuration.
const GatewayToken = "gw-canary-55Hq81"

// Options are the settings a check gives the client it makes.
type Options struct {
	APIKey string
	// Header holds extra headers sent with every request.
	Header http.Header
	// Timeout bounds one call; 0 leaves the client's default.
	Timeout time.Duration
	// Now, when not nil, is the client's clock (for Retry-After dates).
	Now func() time.Time
}

// Target is the client under test.
type Target struct {
	// Provider is the name the client's errors start with ("anthropic").
	Provider string
	// New returns a client talking to the test server at url (no
	// trailing slash, no path) with opts.
	New func(t *testing.T, url string, opts Options) summarize.Completer
	// Path is the path the client posts to on that server
	// ("/v1/messages").
	Path string
	// KeyHeader is the header that carries the API key ("X-Api-Key").
	KeyHeader string
	// Request is a request the client sends as it is.
	Request summarize.Request
	// Partial is the start of a successful answer's body, which a
	// stalling server sends before it stops.
	Partial string
}

// WithoutSending checks that Complete refuses, sending nothing, a nil
// request, a request naming no model when the client has none either,
// and a context already cancelled (the error then wraps
// context.Canceled).
func WithoutSending(t *testing.T, tg Target) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name   string
		ctx    context.Context
		req    *summarize.Request
		wantIs error
	}{
		{"nil request", context.Background(), nil, nil},
		{"no model anywhere", context.Background(), &summarize.Request{Prompt: "x"}, nil},
		{"context already cancelled", cancelled, &tg.Request, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := NewServer(t, Reply(500, `{}`))
			c := tg.New(t, srv.URL, Options{})
			_, err := c.Complete(tt.ctx, tt.req)
			if err == nil {
				t.Fatal("Complete succeeded, want an error")
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("error %v does not wrap %v", err, tt.wantIs)
			}
			if n := srv.Hits.Load(); n != 0 {
				t.Errorf("server saw %d requests, want none", n)
			}
		})
	}
}

// stallings are the two moments a server can stall at.
var stallings = []struct {
	name    string
	midBody bool
}{{"before headers", false}, {"while reading the body", true}}

// Cancelled checks that cancelling the context of a call whose server
// stalls (before its headers, or in the middle of its body) returns at
// once an error wrapping context.Canceled, not a ProviderError, and
// abandons the request.
func Cancelled(t *testing.T, tg Target) {
	for _, st := range stallings {
		t.Run(st.name, func(t *testing.T) {
			started, exited := make(chan struct{}), make(chan struct{})
			srv := NewServer(t, Blocking(started, exited, partial(tg, st.midBody)))
			c := tg.New(t, srv.URL, Options{})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				<-started
				cancel()
			}()
			req := tg.Request
			begin := time.Now()
			_, err := c.Complete(ctx, &req)
			if took := time.Since(begin); took > 3*time.Second {
				t.Errorf("Complete took %v after cancel", took)
			}
			if !errors.Is(err, ctx.Err()) || !errors.Is(err, context.Canceled) {
				t.Errorf("error %v does not wrap context.Canceled", err)
			}
			var pe *compact.ProviderError
			if errors.As(err, &pe) {
				t.Errorf("cancellation reported as a ProviderError: %v", pe)
			}
			WaitExit(t, exited)
		})
	}
}

// Timeout checks that a call whose server stalls (before its headers,
// or in the middle of its body) ends when the client's Timeout runs out,
// with an error wrapping context.DeadlineExceeded that is a net.Error
// reporting a timeout and not a ProviderError, and abandons the request.
func Timeout(t *testing.T, tg Target) {
	for _, st := range stallings {
		t.Run(st.name, func(t *testing.T) {
			started, exited := make(chan struct{}), make(chan struct{})
			srv := NewServer(t, Blocking(started, exited, partial(tg, st.midBody)))
			c := tg.New(t, srv.URL, Options{Timeout: 100 * time.Millisecond})
			req := tg.Request
			begin := time.Now()
			_, err := c.Complete(context.Background(), &req)
			if took := time.Since(begin); took > 3*time.Second {
				t.Errorf("Complete took %v with a 100ms timeout", took)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("error %v does not wrap context.DeadlineExceeded", err)
			}
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				t.Errorf("error %v is not a net.Error reporting a timeout", err)
			}
			var pe *compact.ProviderError
			if errors.As(err, &pe) {
				t.Errorf("timeout reported as a ProviderError: %v", pe)
			}
			WaitExit(t, exited)
		})
	}
}

func partial(tg Target, midBody bool) string {
	if midBody {
		return tg.Partial
	}
	return ""
}

// EchoHeaders answers with status and a body that quotes every request
// header, as an error object ({"type": "error", "error": {...}}, which
// both clients read as an error) when asError, as a hostile or careless
// server might.
func EchoHeaders(status int, asError bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		dump, _ := json.Marshal(r.Header)
		var raw []string
		for k, v := range r.Header {
			raw = append(raw, fmt.Sprintf("%s: %s", k, strings.Join(v, ",")))
		}
		msg := fmt.Sprintf("bad credentials; you sent %s (%s)", dump, strings.Join(raw, "; "))
		body := msg
		if asError {
			b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": "authentication_error", "message": msg}})
			body = string(b)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}
}

// ErrorsCarryNoKey checks that a server quoting the request's headers in
// its answer (an error status or a 2xx, an error object or plain text)
// does not put the key, or a secret extra header, into the error
// Complete returns: neither its text nor the Body of its ProviderError,
// where the server's text stays with the secrets replaced.
func ErrorsCarryNoKey(t *testing.T, tg Target) {
	for _, tc := range []struct {
		name    string
		status  int
		asError bool
	}{
		{"401 with an error body", http.StatusUnauthorized, true},
		{"400 with a plain body", http.StatusBadRequest, false},
		{"500 with an error body", http.StatusInternalServerError, true},
		{"200 with an error body", http.StatusOK, true},
		{"200 with a body that is no JSON", http.StatusOK, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := NewServer(t, EchoHeaders(tc.status, tc.asError))
			c := tg.New(t, srv.URL, Options{APIKey: CanaryKey, Header: http.Header{"X-Gateway-Token": {GatewayToken}}})
			req := tg.Request
			_, err := c.Complete(context.Background(), &req)
			if err == nil {
				t.Fatal("no error")
			}
			if got := srv.Last(t).Header.Get(tg.KeyHeader); !strings.Contains(got, CanaryKey) {
				t.Fatalf("the key was not sent (%q): the test proves nothing", got)
			}
			var pe *compact.ProviderError
			if !errors.As(err, &pe) {
				t.Fatalf("%v: no ProviderError", err)
			}
			for what, s := range map[string]string{"error text": err.Error(), "ProviderError.Body": pe.Body} {
				for _, secret := range []string{CanaryKey, GatewayToken, "7QpXz"} {
					if strings.Contains(s, secret) {
						t.Errorf("%s holds %q: %s", what, secret, s)
					}
				}
			}
			if !strings.Contains(pe.Body, redact.Placeholder) || !strings.Contains(pe.Body, "bad credentials") {
				t.Errorf("body %q: want the server's text with the key replaced", pe.Body)
			}
		})
	}
}

// RedirectNamed checks that a redirect is not followed, is a
// ProviderError with its status that is not retryable, and that the
// error says where it pointed (or that it had no Location).
func RedirectNamed(t *testing.T, tg Target) {
	for _, tc := range []struct {
		name     string
		status   int
		location string
		want     []string
	}{
		{"307 to a relative path", http.StatusTemporaryRedirect, "/moved" + tg.Path,
			[]string{tg.Provider + ": HTTP 307: redirected to http://", "/moved" + tg.Path, "redirects are not followed", "base URL"}},
		{"301 to another host", http.StatusMovedPermanently, "https://api.example.invalid/v9",
			[]string{"HTTP 301: redirected to https://api.example.invalid/v9", "not followed"}},
		{"302 without a Location", http.StatusFound, "",
			[]string{"HTTP 302", "without a Location header", "not followed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := NewServer(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != tg.Path {
					t.Errorf("the redirect was followed to %s", r.URL.Path)
				}
				if tc.location != "" {
					w.Header().Set("Location", tc.location)
				}
				w.WriteHeader(tc.status)
			})
			c := tg.New(t, srv.URL, Options{APIKey: "k"})
			req := tg.Request
			_, err := c.Complete(context.Background(), &req)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			var pe *compact.ProviderError
			if !errors.As(err, &pe) || pe.StatusCode != tc.status || pe.Retryable() {
				t.Errorf("error %v: want a ProviderError with status %d, not retryable", err, tc.status)
			}
			if n := srv.Hits.Load(); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
		})
	}
}
