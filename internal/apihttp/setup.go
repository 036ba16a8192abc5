package apihttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// Setup is what a client's configuration says about its calls, with the
// client's defaults for the fields it leaves empty. Both API clients
// (anthropic, openai) build their Call from one in New.
type Setup struct {
	// Provider names the API in errors ("anthropic").
	Provider string
	// BaseURL is the configured API root; "" means DefaultBaseURL.
	BaseURL, DefaultBaseURL string
	// Path is appended to the base URL ("/v1/messages").
	Path string
	// Timeout bounds one call; 0 means DefaultTimeout, a negative value
	// leaves the call bounded by its context alone.
	Timeout, DefaultTimeout time.Duration
	// HTTPClient sends the calls; nil means NewClient().
	HTTPClient *http.Client
	// UserAgent is the User-Agent header; "" means DefaultUserAgent.
	UserAgent, DefaultUserAgent string
	// Header holds the extra headers of every call; it is copied.
	Header http.Header
	// MaxErrorBody and MaxBody are Call's caps.
	MaxErrorBody int64
	MaxBody      int
}

// NewCall applies the defaults of s and returns the Call that every
// request of the client starts from (no Body yet, the clock time.Now),
// with the base URL parsed. It fails, as Endpoint does, on a base URL
// that is not an absolute http or https URL.
func NewCall(s Setup) (Call, *url.URL, error) {
	base := s.BaseURL
	if base == "" {
		base = s.DefaultBaseURL
	}
	endpoint, u, err := Endpoint(s.Provider, base, s.Path)
	if err != nil {
		return Call{}, nil, err
	}
	timeout := s.Timeout
	if timeout == 0 {
		timeout = s.DefaultTimeout
	}
	hc := s.HTTPClient
	if hc == nil {
		hc = NewClient()
	}
	ua := s.UserAgent
	if ua == "" {
		ua = s.DefaultUserAgent
	}
	return Call{
		Provider:     s.Provider,
		Client:       hc,
		URL:          endpoint,
		Header:       s.Header.Clone(),
		UserAgent:    ua,
		Timeout:      timeout,
		MaxErrorBody: s.MaxErrorBody,
		MaxBody:      s.MaxBody,
		Now:          time.Now,
	}, u, nil
}

// Model returns the model a request asks for: asked, else fallback. It
// fails, before anything is sent, when both are empty ("set
// Request.Model or Config.Model") and when ctx has already ended (the
// error wraps ctx.Err()).
func Model(ctx context.Context, provider, asked, fallback string) (string, error) {
	model := asked
	if model == "" {
		model = fallback
	}
	if model == "" {
		return "", errors.New(provider + ": no model: set Request.Model or Config.Model")
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("%s: %w", provider, err)
	}
	return model, nil
}

// PostJSON sends v, encoded as JSON, as the body of c, with the entries
// of set replacing those of c.Header (the authentication, a version
// header), and returns decode's reading of the body of a 2xx answer (see
// Post). An error decode returns has the credentials sent (Secrets) taken
// out (RedactError): an error found inside a 2xx body may quote the
// request's headers, as a gateway that echoes them does.
func PostJSON[T any](ctx context.Context, c Call, set http.Header, v any, decode func(body []byte) (T, error)) (T, error) {
	var zero T
	payload, err := json.Marshal(v)
	if err != nil {
		return zero, fmt.Errorf("%s: encoding request: %w", c.Provider, err)
	}
	return PostBody(ctx, c, set, payload, decode)
}

// PostBody is PostJSON for a body that is already JSON: payload is sent
// exactly as given, not re-encoded (a proxy forwarding its client's bytes
// keeps them byte for byte, so that the provider's prompt cache still
// matches them).
func PostBody[T any](ctx context.Context, c Call, set http.Header, payload []byte, decode func(body []byte) (T, error)) (T, error) {
	var zero T
	h := c.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	for k, vs := range set {
		for i, v := range vs {
			if i == 0 {
				h.Set(k, v)
			} else {
				h.Add(k, v)
			}
		}
	}
	c.Header, c.Body = h, payload
	body, err := Post(ctx, c)
	if err != nil {
		return zero, err
	}
	out, err := decode(body)
	if err != nil {
		return zero, RedactError(err, Secrets(h))
	}
	return out, nil
}
