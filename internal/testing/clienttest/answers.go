package clienttest

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/summarize"
)

// answer sends tg.Request once, with opts, to a server answering with h,
// and returns what Complete returned and the server.
func answer(t *testing.T, tg Target, opts Options, h http.HandlerFunc) (*summarize.Response, *Server, error) {
	t.Helper()
	srv := NewServer(t, h)
	req := tg.Request
	resp, err := tg.New(t, srv.URL, opts).Complete(context.Background(), &req)
	return resp, srv, err
}

// Answer is a successful answer's body and the Response it must give.
type Answer struct {
	Name string
	Body string
	Want summarize.Response
}

// Answers checks, for each case, that a 200 with the case's body gives
// exactly the case's Response for tg.Request.
func Answers(t *testing.T, tg Target, cases []Answer) {
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			got, _, err := answer(t, tg, Options{}, Reply(200, tt.Body))
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if *got != tt.Want {
				t.Errorf("response = %+v, want %+v", *got, tt.Want)
			}
		})
	}
}

// EmptyAnswer is a 200 body that carries no summary and the error it
// must give.
type EmptyAnswer struct {
	Name string
	Body string
	// WantIs is an error the result must wrap; nil requires only an
	// error.
	WantIs error
	// WantMsg is a text the error must contain.
	WantMsg string
}

// EmptyAnswers checks, for each case, that a 200 with the case's body is
// an error wrapping WantIs (when set) and mentioning WantMsg.
func EmptyAnswers(t *testing.T, tg Target, cases []EmptyAnswer) {
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			resp, _, err := answer(t, tg, Options{}, Reply(200, tt.Body))
			if err == nil {
				t.Fatalf("Complete returned %+v, want an error", resp)
			}
			if tt.WantIs != nil && !errors.Is(err, tt.WantIs) {
				t.Errorf("error %v does not wrap %v", err, tt.WantIs)
			}
			if !strings.Contains(err.Error(), tt.WantMsg) {
				t.Errorf("error %q does not mention %q", err, tt.WantMsg)
			}
		})
	}
}

// ProviderErrorCase is a server's answer and the *compact.ProviderError
// it must give.
type ProviderErrorCase struct {
	Name    string
	Status  int
	Headers []string // name, value, name, value, ...
	Body    string
	// WantStatus is ProviderError.StatusCode.
	WantStatus int
	// WantBody is ProviderError.Body; "" means the body as sent.
	WantBody      string
	WantRetry     time.Duration
	WantOverflow  bool
	WantRetryable bool
}

// proxyHTML is the page a proxy in front of any API answers with.
const proxyHTML = "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>"

// wireless are the answers that are a ProviderError whatever the
// client's wire format, for a client whose clock reads now: an HTML page
// from a proxy, with its error status or with a 200, and a 429 whose
// wait is given in each of the ways apihttp.RetryAfter reads (or cannot
// read).
func wireless(now time.Time) []ProviderErrorCase {
	rateLimited := func(name string, want time.Duration, headers ...string) ProviderErrorCase {
		return ProviderErrorCase{Name: name, Status: 429, Headers: headers, Body: `{}`,
			WantStatus: 429, WantRetry: want, WantRetryable: true}
	}
	return []ProviderErrorCase{
		{
			Name:          "502 HTML from a proxy",
			Status:        502,
			Headers:       []string{"Content-Type", "text/html"},
			Body:          proxyHTML,
			WantStatus:    502,
			WantRetryable: true,
		},
		{
			Name:       "200 that is not JSON",
			Status:     200,
			Headers:    []string{"Content-Type", "text/html"},
			Body:       proxyHTML,
			WantStatus: 0,
		},
		rateLimited("429 with Retry-After as an HTTP date", 90*time.Second,
			"Retry-After", now.Add(90*time.Second).Format(http.TimeFormat)),
		rateLimited("429 with a date already past", 0,
			"Retry-After", now.Add(-time.Minute).Format(http.TimeFormat)),
		rateLimited("429 with retry-after-ms preferred to Retry-After", 1500*time.Millisecond,
			"retry-after-ms", "1500", "Retry-After", "2"),
		rateLimited("429 with a garbled Retry-After", 0, "Retry-After", "soon"),
	}
}

// ProviderErrors checks, for each case and for the answers that are an
// error whatever the wire format (an HTML page from a proxy, the ways of
// giving Retry-After), that the
// answer makes Complete send exactly one request and return a
// *compact.ProviderError naming tg.Provider with the case's status,
// body, Retry-After, overflow and retryability. The client's clock reads
// now.
func ProviderErrors(t *testing.T, tg Target, now time.Time, cases []ProviderErrorCase) {
	for _, tt := range append(cases[:len(cases):len(cases)], wireless(now)...) {
		t.Run(tt.Name, func(t *testing.T) {
			resp, srv, err := answer(t, tg, Options{APIKey: "k", Now: func() time.Time { return now }},
				Reply(tt.Status, tt.Body, tt.Headers...))
			if err == nil {
				t.Fatalf("Complete returned %+v, want an error", resp)
			}
			if n := srv.Hits.Load(); n != 1 {
				t.Errorf("server saw %d requests, want exactly 1", n)
			}
			var pe *compact.ProviderError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T) is not a *compact.ProviderError", err, err)
			}
			wantBody := tt.WantBody
			if wantBody == "" {
				wantBody = tt.Body
			}
			if pe.Provider != tg.Provider || pe.StatusCode != tt.WantStatus || pe.Body != wantBody {
				t.Errorf("ProviderError{%q, %d, %.80q}, want {%s, %d, %.80q}",
					pe.Provider, pe.StatusCode, pe.Body, tg.Provider, tt.WantStatus, wantBody)
			}
			if pe.RetryAfter != tt.WantRetry {
				t.Errorf("RetryAfter = %v, want %v", pe.RetryAfter, tt.WantRetry)
			}
			if got := compact.IsContextOverflow(err); got != tt.WantOverflow {
				t.Errorf("IsContextOverflow = %v, want %v", got, tt.WantOverflow)
			}
			if got := pe.Retryable(); got != tt.WantRetryable {
				t.Errorf("Retryable = %v, want %v", got, tt.WantRetryable)
			}
		})
	}
}
