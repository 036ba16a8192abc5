package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/compactkit/compact/internal/testing/clienttest"
	"github.com/compactkit/compact/summarize"
)

// target is this package's client for the checks of clienttest.
func target() clienttest.Target {
	return clienttest.Target{
		Provider: providerName,
		New: func(t *testing.T, url string, o clienttest.Options) summarize.Completer {
			c := newClient(t, Config{BaseURL: url + "/v1", APIKey: o.APIKey, Header: o.Header, Timeout: o.Timeout})
			if o.Now != nil {
				c.call.Now = o.Now
			}
			return c
		},
		Path: "/v1/chat/completions", KeyHeader: "Authorization", Request: baseReq, Partial: `{"choices":[`,
	}
}

// TestErrorsCarryNoKey checks that a server quoting the request's
// headers in its answer does not put the key, or a secret extra header,
// into the error Complete returns.
func TestErrorsCarryNoKey(t *testing.T) { clienttest.ErrorsCarryNoKey(t, target()) }

// TestRedirectNamed checks that a redirect is not followed and that the
// error says where it pointed.
func TestRedirectNamed(t *testing.T) { clienttest.RedirectNamed(t, target()) }

// TestNoChoicesCarriesNoKey checks the one error that quotes a 2xx body
// without a ProviderError: an answer without choices.
func TestNoChoicesCarriesNoKey(t *testing.T) {
	fs := clienttest.NewServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := json.Marshal(map[string]any{"echo": r.Header})
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	})
	c := newClient(t, Config{BaseURL: fs.URL + "/v1", APIKey: clienttest.CanaryKey})
	req := baseReq
	_, err := c.Complete(context.Background(), &req)
	if err == nil || !strings.Contains(err.Error(), "no choices") {
		t.Fatalf("error %v, want one about the missing choices", err)
	}
	if strings.Contains(err.Error(), "7QpXz") {
		t.Errorf("the error shows the key: %v", err)
	}
}
