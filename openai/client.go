package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/compactkit/compact/internal/apihttp"
	"github.com/compactkit/compact/summarize"
)

// Defaults used when the matching Config field is left empty.
const (
	// DefaultBaseURL is the root of OpenAI's API.
	DefaultBaseURL = "https://api.openai.com/v1"
	// DefaultTimeout bounds one request, from sending it to reading the
	// last byte of the answer.
	DefaultTimeout = 10 * time.Minute
	// DefaultUserAgent is the User-Agent header sent.
	DefaultUserAgent = "compactkit-compact/openai"
)

// MaxErrorBody is the number of bytes of an error response that are read
// and kept in compact.ProviderError.Body; the rest is discarded.
const MaxErrorBody = 64 << 10

// maxResponseBody bounds a successful response. A summary is a few tens of
// kilobytes at most; anything near this size is not a chat completion.
const maxResponseBody = 32 << 20

// providerName is the ProviderError.Provider of every error this package
// returns, whichever compatible server answered.
const providerName = "openai"

// ErrEmptySummary is wrapped by the error Complete returns when the model
// finished normally but produced no text.
var ErrEmptySummary = errors.New("empty summary")

// TokenField names the request field that carries the output limit.
type TokenField string

// The two names servers accept for the output limit.
const (
	// MaxCompletionTokens is OpenAI's current field, required by its
	// reasoning models.
	MaxCompletionTokens TokenField = "max_completion_tokens"
	// MaxTokens is the older field that most compatible servers expect.
	MaxTokens TokenField = "max_tokens"
)

// Config configures a Client. The zero value talks to OpenAI without a
// key; ConfigFromEnv fills in the key and base URL from the environment.
type Config struct {
	// BaseURL is the API root that "/chat/completions" is appended to,
	// usually ending in "/v1". Empty means DefaultBaseURL.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <APIKey>". Empty sends no
	// Authorization header, which is what local servers expect.
	APIKey string
	// Model is used when a Request leaves Model empty. With both empty,
	// Complete fails without sending anything.
	Model string
	// TokenField names the field that carries Request.MaxTokens. Empty
	// means MaxCompletionTokens when the base URL's host is
	// api.openai.com and MaxTokens for every other host. The field is
	// left out when Request.MaxTokens is 0.
	TokenField TokenField
	// Temperature is sent when not nil. Leave it nil for OpenAI's
	// reasoning models, which reject it.
	Temperature *float64
	// Timeout bounds one Complete call, connecting and reading the whole
	// answer included. Zero means DefaultTimeout; a negative value
	// leaves the call bounded by its context alone.
	Timeout time.Duration
	// HTTPClient sends the requests. Nil means a client made for this
	// Client with the dial, TLS and idle-connection timeouts of
	// net/http's default transport, proxies taken from the environment,
	// no header timeout (a non-streaming answer only starts when it is
	// complete) and redirects not followed (a redirect is returned as an
	// error wrapping a ProviderError and naming the Location, rather than
	// re-sent as a second call).
	HTTPClient *http.Client
	// UserAgent is the User-Agent header. Empty means DefaultUserAgent.
	UserAgent string
	// Header holds extra headers sent with every request, such as
	// OpenRouter's HTTP-Referer and X-Title, or the api-key header of a
	// gateway that does not take bearer tokens. Content-Type, Accept and
	// User-Agent are always the client's own; an Authorization entry is
	// replaced when APIKey is set.
	Header http.Header
}

// Client calls the Chat Completions API. It implements
// summarize.Completer and is safe for concurrent use.
type Client struct {
	call        apihttp.Call // endpoint, HTTP client, timeout, headers, clock (tests replace call.Now)
	apiKey      string
	model       string
	tokenField  TokenField
	temperature *float64
}

var _ summarize.Completer = (*Client)(nil)

// New checks cfg, applies the defaults and returns a Client. It fails on a
// base URL that is not an absolute http or https URL and on an unknown
// TokenField.
func New(cfg Config) (*Client, error) {
	c, u, err := configure(cfg, "/chat/completions")
	if err != nil {
		return nil, err
	}
	field := cfg.TokenField
	switch field {
	case MaxCompletionTokens, MaxTokens:
	case "":
		field = MaxTokens
		if strings.EqualFold(u.Hostname(), "api.openai.com") {
			field = MaxCompletionTokens
		}
	default:
		return nil, fmt.Errorf("openai: unknown token field %q", field)
	}
	c.tokenField = field
	return c, nil
}

// configure checks the fields of cfg both clients share, applies their
// defaults and returns a Client for the endpoint path under the base URL,
// with the parsed base URL.
func configure(cfg Config, path string) (*Client, *url.URL, error) {
	call, u, err := apihttp.NewCall(apihttp.Setup{
		Provider: providerName, BaseURL: cfg.BaseURL, DefaultBaseURL: DefaultBaseURL, Path: path,
		Timeout: cfg.Timeout, DefaultTimeout: DefaultTimeout, HTTPClient: cfg.HTTPClient,
		UserAgent: cfg.UserAgent, DefaultUserAgent: DefaultUserAgent, Header: cfg.Header,
		MaxErrorBody: MaxErrorBody, MaxBody: maxResponseBody,
	})
	if err != nil {
		return nil, nil, err
	}
	var temp *float64
	if cfg.Temperature != nil {
		t := *cfg.Temperature
		temp = &t
	}
	return &Client{
		call:        call,
		apiKey:      cfg.APIKey,
		model:       cfg.Model,
		temperature: temp,
	}, u, nil
}

// Complete sends req as one chat completion request and returns the
// answer. It makes exactly one HTTP call and never retries.
//
// Errors:
//   - a non-2xx status gives a *compact.ProviderError with the status, the
//     body (up to MaxErrorBody bytes) and RetryAfter from the
//     retry-after-ms or Retry-After header;
//   - a 2xx response whose body is an error object ({"error": {...}} or
//     {"object": "error", ...}) gives a *compact.ProviderError with the
//     body and, as StatusCode, the numeric error code in the body when it
//     is an HTTP error status (OpenRouter puts the upstream status there),
//     else 0;
//   - a 2xx body that is not JSON gives a *compact.ProviderError with
//     StatusCode 0 and the body;
//   - a redirect (3xx) is not followed: the error wraps a
//     *compact.ProviderError with the status, and its text names the
//     Location the server pointed to;
//   - no error text, and no ProviderError.Body, holds the key or the
//     value of another credential header: a server that echoes the
//     request's headers has them replaced by "REDACTED" (see
//     internal/redact);
//   - an answer with no text that was not truncated wraps ErrEmptySummary;
//   - when ctx ends first the error wraps ctx.Err();
//   - when Config.Timeout runs out first the error wraps
//     context.DeadlineExceeded (test with errors.Is); since that value
//     has a Timeout method, errors.As to a net.Error finds one whose
//     Timeout reports true as well. No ProviderError is involved.
func (c *Client) Complete(ctx context.Context, req *summarize.Request) (*summarize.Response, error) {
	model, err := c.modelFor(ctx, req)
	if err != nil {
		return nil, err
	}
	wire, err := c.wireRequest(model, req)
	if err != nil {
		return nil, err
	}
	return c.post(ctx, wire, func(body []byte) (*summarize.Response, error) {
		return decodeResponse(body, model)
	})
}

// modelFor checks a request before anything is sent and returns the
// model it asks for.
func (c *Client) modelFor(ctx context.Context, req *summarize.Request) (string, error) {
	if req == nil {
		return "", errors.New("openai: nil request")
	}
	return apihttp.Model(ctx, providerName, req.Model, c.model)
}

// post sends the JSON of wire to the endpoint with the key and returns
// decode's reading of the 2xx body (see apihttp.PostJSON).
func (c *Client) post(ctx context.Context, wire any, decode func(body []byte) (*summarize.Response, error)) (*summarize.Response, error) {
	set := http.Header{}
	if c.apiKey != "" {
		set.Set("Authorization", "Bearer "+c.apiKey)
	}
	return apihttp.PostJSON(ctx, c.call, set, wire, decode)
}

// Send sends body, a complete Chat Completions request the caller built
// (a conversation of its own, say), exactly as given: not re-encoded,
// with the client's headers and key. The answer is read as Complete
// reads it and the errors are Complete's. The body must ask for a
// non-streamed answer. header replaces the client's headers of the same
// names for this request.
func (c *Client) Send(ctx context.Context, body []byte, header http.Header) (*summarize.Response, error) {
	set := header.Clone()
	if set == nil {
		set = http.Header{}
	}
	if c.apiKey != "" {
		set.Set("Authorization", "Bearer "+c.apiKey)
	}
	return apihttp.PostBody(ctx, c.call, set, body, func(b []byte) (*summarize.Response, error) {
		return decodeResponse(b, c.model)
	})
}
