package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/compactkit/compact/internal/apihttp"
	"github.com/compactkit/compact/summarize"
)

// Defaults used when the matching Config field is left empty.
const (
	// DefaultBaseURL is the root of Anthropic's API; "/v1/messages" is
	// appended to it.
	DefaultBaseURL = "https://api.anthropic.com"
	// DefaultTimeout bounds one request, from sending it to reading the
	// last byte of the answer.
	DefaultTimeout = 10 * time.Minute
	// DefaultUserAgent is the User-Agent header sent.
	DefaultUserAgent = "compactkit-compact/anthropic"
	// DefaultMaxTokens is the output limit sent when neither the Request
	// nor Config.MaxTokens gives one; the API requires a limit.
	DefaultMaxTokens = 8192
)

// APIVersion is the value of the anthropic-version header.
const APIVersion = "2023-06-01"

// MinThinkingBudget is the smallest thinking budget the API accepts.
const MinThinkingBudget = 1024

// MaxErrorBody is the number of bytes of an error response that are read
// and kept in compact.ProviderError.Body; the rest is discarded.
const MaxErrorBody = 64 << 10

// maxResponseBody bounds a successful response. A summary is a few tens of
// kilobytes at most; anything near this size is not a message.
const maxResponseBody = 32 << 20

// providerName is the ProviderError.Provider of every error this package
// returns.
const providerName = "anthropic"

// ErrEmptySummary is wrapped by the error Complete returns when the model
// finished normally but produced no text.
var ErrEmptySummary = errors.New("empty summary")

// Config configures a Client. ConfigFromEnv fills in the key and base URL
// from the environment.
type Config struct {
	// BaseURL is the API root, without "/v1". Empty means
	// DefaultBaseURL.
	BaseURL string
	// APIKey is sent in the x-api-key header. Empty sends no key, for
	// gateways that add their own.
	APIKey string
	// Model is used when a Request leaves Model empty. With both empty,
	// Complete fails without sending anything.
	Model string
	// MaxTokens is the output limit for requests whose MaxTokens is 0.
	// Zero means DefaultMaxTokens.
	MaxTokens int
	// ThinkingBudget, when positive, turns on extended thinking with this
	// many tokens for reasoning (at least MinThinkingBudget). The budget
	// is added to the request's output limit, so that max_tokens stays
	// above it as the API demands and the text keeps its full allowance.
	ThinkingBudget int
	// Temperature is sent when not nil. It cannot be combined with
	// ThinkingBudget, which the API refuses.
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
	// anthropic-beta, or Authorization for a gateway that takes bearer
	// tokens. content-type, accept, anthropic-version and User-Agent are
	// always the client's own; an x-api-key entry is replaced when APIKey
	// is set.
	Header http.Header
}

// Client calls the Messages API. It implements summarize.Completer and is
// safe for concurrent use.
type Client struct {
	call        apihttp.Call // endpoint, HTTP client, timeout, headers, clock (tests replace call.Now)
	apiKey      string
	model       string
	maxTokens   int
	thinking    int
	temperature *float64
}

var _ summarize.Completer = (*Client)(nil)

// New checks cfg, applies the defaults and returns a Client. It fails on a
// base URL that is not an absolute http or https URL, on a negative
// MaxTokens, on a ThinkingBudget below MinThinkingBudget, and on a
// Temperature given together with a ThinkingBudget.
func New(cfg Config) (*Client, error) {
	call, _, err := apihttp.NewCall(apihttp.Setup{
		Provider: providerName, BaseURL: cfg.BaseURL, DefaultBaseURL: DefaultBaseURL, Path: "/v1/messages",
		Timeout: cfg.Timeout, DefaultTimeout: DefaultTimeout, HTTPClient: cfg.HTTPClient,
		UserAgent: cfg.UserAgent, DefaultUserAgent: DefaultUserAgent, Header: cfg.Header,
		MaxErrorBody: MaxErrorBody, MaxBody: maxResponseBody,
	})
	if err != nil {
		return nil, err
	}
	if cfg.MaxTokens < 0 {
		return nil, fmt.Errorf("anthropic: negative MaxTokens %d", cfg.MaxTokens)
	}
	if cfg.ThinkingBudget < 0 || (cfg.ThinkingBudget > 0 && cfg.ThinkingBudget < MinThinkingBudget) {
		return nil, fmt.Errorf("anthropic: thinking budget %d is below the minimum of %d",
			cfg.ThinkingBudget, MinThinkingBudget)
	}
	if cfg.ThinkingBudget > 0 && cfg.Temperature != nil {
		return nil, errors.New("anthropic: Temperature cannot be set together with ThinkingBudget")
	}
	maxTokens := cfg.MaxTokens
	if maxTokens == 0 {
		maxTokens = DefaultMaxTokens
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
		maxTokens:   maxTokens,
		thinking:    cfg.ThinkingBudget,
		temperature: temp,
	}, nil
}

// Complete sends req as one Messages API request and returns the answer.
// It makes exactly one HTTP call and never retries.
//
// Errors:
//   - a non-2xx status gives a *compact.ProviderError with the status, the
//     body (up to MaxErrorBody bytes) and RetryAfter from the
//     retry-after-ms or Retry-After header;
//   - a 2xx response whose body is an error ({"type": "error", ...}), as
//     some gateways send, gives a *compact.ProviderError with the body and
//     the HTTP status Anthropic documents for the error's type (529 for
//     overloaded_error, 429 for rate_limit_error, ...), or 0 for a type it
//     does not list;
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
//     a refusal (stop reason "refusal") is an error as well;
//   - when ctx ends first the error wraps ctx.Err();
//   - when Config.Timeout runs out first the error wraps
//     context.DeadlineExceeded (test with errors.Is); since that value
//     has a Timeout method, errors.As to a net.Error finds one whose
//     Timeout reports true as well. No ProviderError is involved.
func (c *Client) Complete(ctx context.Context, req *summarize.Request) (*summarize.Response, error) {
	if req == nil {
		return nil, errors.New("anthropic: nil request")
	}
	model, err := apihttp.Model(ctx, providerName, req.Model, c.model)
	if err != nil {
		return nil, err
	}
	set := http.Header{}
	set.Set("Anthropic-Version", APIVersion)
	if c.apiKey != "" {
		set.Set("X-Api-Key", c.apiKey)
	}
	return apihttp.PostJSON(ctx, c.call, set, c.wireRequest(model, req), func(body []byte) (*summarize.Response, error) {
		return decodeResponse(body, model)
	})
}

// Send sends body, a complete Messages API request the caller built (a
// conversation of its own, say), exactly as given: not re-encoded, with
// the client's headers and key, its model and limits left to the body.
// The answer is read as Complete reads it (the text blocks; thinking
// blocks are skipped) and the errors are Complete's. The body must ask
// for a non-streamed answer. header replaces the client's headers of
// the same names for this request (an anthropic-beta list, say).
func (c *Client) Send(ctx context.Context, body []byte, header http.Header) (*summarize.Response, error) {
	set := header.Clone()
	if set == nil {
		set = http.Header{}
	}
	set.Set("Anthropic-Version", APIVersion)
	if c.apiKey != "" {
		set.Set("X-Api-Key", c.apiKey)
	}
	return apihttp.PostBody(ctx, c.call, set, body, func(b []byte) (*summarize.Response, error) {
		return decodeResponse(b, c.model)
	})
}
