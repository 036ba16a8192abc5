package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/redact"
)

// canaryKey is an API key in no known shape: only knowing it as the
// configured key can take it out of an error.
const canaryKey = "canary-7QpXz<Lm29>&vK"

// gatewayToken is a secret sent in an extra header of Config.Header.
const gatewayToken = "gw-canary-55Hq81"

// echoHeaders answers with status and a body that quotes every request
// header, in the provider's error format when asError, as a hostile or
// careless server might.
func echoHeaders(status int, asError bool) http.HandlerFunc {
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

// TestErrorsCarryNoKey checks that a server quoting the request's
// headers in its answer does not put the key, or a secret extra header,
// into the error Complete returns: neither its text nor the Body of its
// ProviderError.
func TestErrorsCarryNoKey(t *testing.T) {
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
			fs := newFakeServer(t, echoHeaders(tc.status, tc.asError))
			c := newClient(t, Config{BaseURL: fs.URL, APIKey: canaryKey,
				Header: http.Header{"X-Gateway-Token": {gatewayToken}}})
			req := baseReq
			_, err := c.Complete(context.Background(), &req)
			if err == nil {
				t.Fatal("no error")
			}
			if got := fs.last(t).Header.Get("X-Api-Key"); !strings.Contains(got, canaryKey) {
				t.Fatalf("the key was not sent (%q): the test proves nothing", got)
			}
			var pe *compact.ProviderError
			if !errors.As(err, &pe) {
				t.Fatalf("%v: no ProviderError", err)
			}
			for what, s := range map[string]string{"error text": err.Error(), "ProviderError.Body": pe.Body} {
				for _, secret := range []string{canaryKey, gatewayToken, "7QpXz"} {
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

// TestRedirectNamed checks that a redirect is not followed and that the
// error says where it pointed.
func TestRedirectNamed(t *testing.T) {
	for _, tc := range []struct {
		name     string
		status   int
		location string
		want     []string
	}{
		{"307 to a relative path", http.StatusTemporaryRedirect, "/moved" + "/v1/messages",
			[]string{"anthropic" + ": HTTP 307: redirected to http://", "/moved" + "/v1/messages", "redirects are not followed", "base URL"}},
		{"301 to another host", http.StatusMovedPermanently, "https://api.example.invalid/v9",
			[]string{"HTTP 301: redirected to https://api.example.invalid/v9", "not followed"}},
		{"302 without a Location", http.StatusFound, "",
			[]string{"HTTP 302", "without a Location header", "not followed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/v1/messages" {
					t.Errorf("the redirect was followed to %s", r.URL.Path)
				}
				if tc.location != "" {
					w.Header().Set("Location", tc.location)
				}
				w.WriteHeader(tc.status)
			})
			c := newClient(t, Config{BaseURL: fs.URL, APIKey: "k"})
			req := baseReq
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
			if n := fs.hits.Load(); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
		})
	}
}
