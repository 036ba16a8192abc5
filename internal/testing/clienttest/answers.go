package clienttest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/summarize"
)

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
			srv := NewServer(t, Reply(200, tt.Body))
			c := tg.New(t, srv.URL, Options{})
			req := tg.Request
			got, err := c.Complete(context.Background(), &req)
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
			srv := NewServer(t, Reply(200, tt.Body))
			c := tg.New(t, srv.URL, Options{})
			req := tg.Request
			resp, err := c.Complete(context.Background(), &req)
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
// client's wire format: an HTML page from a proxy, with its error status
// or with a 200.
var wireless = []ProviderErrorCase{
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
}

// ProviderErrors checks, for each case and for the answers that are an
// error whatever the wire format (an HTML page from a proxy), that the
// answer makes Complete send exactly one request and return a
// *compact.ProviderError naming tg.Provider with the case's status,
// body, Retry-After, overflow and retryability. The client's clock reads
// now.
func ProviderErrors(t *testing.T, tg Target, now time.Time, cases []ProviderErrorCase) {
	for _, tt := range append(cases[:len(cases):len(cases)], wireless...) {
		t.Run(tt.Name, func(t *testing.T) {
			srv := NewServer(t, Reply(tt.Status, tt.Body, tt.Headers...))
			c := tg.New(t, srv.URL, Options{APIKey: "k", Now: func() time.Time { return now }})
			req := tg.Request
			resp, err := c.Complete(context.Background(), &req)
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
