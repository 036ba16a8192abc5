package anthropic

import (
	"testing"

	"github.com/compactkit/compact/internal/testing/clienttest"
	"github.com/compactkit/compact/summarize"
)

// target is this package's client for the checks of clienttest.
func target() clienttest.Target {
	return clienttest.Target{
		Provider: providerName,
		New: func(t *testing.T, url string, o clienttest.Options) summarize.Completer {
			c := newClient(t, Config{BaseURL: url, APIKey: o.APIKey, Header: o.Header, Timeout: o.Timeout})
			if o.Now != nil {
				c.call.Now = o.Now
			}
			return c
		},
		Path: "/v1/messages", KeyHeader: "X-Api-Key", Request: baseReq, Partial: `{"type":"message","content":[`,
	}
}

// TestErrorsCarryNoKey checks that a server quoting the request's
// headers in its answer does not put the key, or a secret extra header,
// into the error Complete returns.
func TestErrorsCarryNoKey(t *testing.T) { clienttest.ErrorsCarryNoKey(t, target()) }

// TestRedirectNamed checks that a redirect is not followed and that the
// error says where it pointed.
func TestRedirectNamed(t *testing.T) { clienttest.RedirectNamed(t, target()) }
