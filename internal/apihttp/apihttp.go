// Package apihttp holds the HTTP plumbing the openai and anthropic clients
// share: the base URL check, the default client, capped body reads and
// Retry-After parsing.
package apihttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/redact"
)

// Endpoint checks base, an API's base URL, which must be an absolute http
// or https URL, and returns the URL of path under it, with the base
// parsed. provider names the API at the start of the errors ("anthropic:
// base URL ...").
func Endpoint(provider, base, path string) (string, *url.URL, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", nil, fmt.Errorf("%s: base URL: %w", provider, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", nil, fmt.Errorf("%s: base URL %q is not an http or https URL", provider, base)
	}
	return strings.TrimRight(base, "/") + path, u, nil
}

// NewClient returns the HTTP client a provider client uses when its
// configuration gives none: the usual dial and TLS timeouts, the
// environment's proxy, and redirects returned rather than followed.
func NewClient() *http.Client {
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           dialer.DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          100,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ExpectContinueTimeout: 1 * time.Second,
			// No ResponseHeaderTimeout: without streaming the headers
			// arrive only once the whole answer is written.
		},
		// A redirect would be a second HTTP call for one Complete, and
		// a POST turned into a GET by a 301 or 302 cannot succeed.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// ReadCapped reads at most limit bytes of r. It returns what it read
// even when it also returns an error.
func ReadCapped(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit))
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return b, err
}

// RetryAfter returns the wait a response asks for: retry-after-ms in
// milliseconds when present and valid, else Retry-After as a number of
// seconds or an HTTP date measured from now. It is 0 when neither header
// says anything usable, and never negative.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s < 0 || s > 1e9 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// Secrets returns the credentials among the headers h, for
// redact.String: the values of Authorization and Proxy-Authorization,
// with and without their scheme ("Bearer "), and of every header whose
// name says it holds a key, token, secret or password (X-Api-Key,
// Api-Key, X-Auth-Token, ...).
func Secrets(h http.Header) []string {
	var out []string
	for name, values := range h {
		n := strings.ToLower(name)
		auth := n == "authorization" || n == "proxy-authorization"
		if !auth && !strings.Contains(n, "key") && !strings.Contains(n, "token") &&
			!strings.Contains(n, "secret") && !strings.Contains(n, "password") && !strings.Contains(n, "auth") {
			continue
		}
		for _, v := range values {
			out = append(out, v)
			if _, cred, ok := strings.Cut(strings.TrimSpace(v), " "); ok && auth {
				out = append(out, strings.TrimSpace(cred))
			}
		}
	}
	return out
}

// RedactError takes the credentials secrets, and every text shaped like
// one (see redact.String), out of an error this package's callers have
// just built: out of the Body of the *compact.ProviderError it holds, if
// any, and out of its text.
func RedactError(err error, secrets []string) error {
	var pe *compact.ProviderError
	if errors.As(err, &pe) {
		pe.Body = redact.String(pe.Body, secrets...)
	}
	return redact.Error(err, secrets...)
}

// RedirectError is the error of a call answered with a redirect (a 3xx
// status), which is never followed: it would be a second request for one
// call, and a POST turned into a GET by a 301 or 302 cannot succeed. Its
// text names where the server points, so that the base URL can be set
// there.
type RedirectError struct {
	// ProviderError holds the status and the body.
	*compact.ProviderError
	// Location is the absolute address the redirect points to, "" when
	// the answer named none.
	Location string
}

// Error says that the call was redirected, where to, and that the
// redirect was not followed.
func (e *RedirectError) Error() string {
	if e.Location == "" {
		return fmt.Sprintf("%s: HTTP %d: a redirect without a Location header (redirects are not followed)",
			e.Provider, e.StatusCode)
	}
	return fmt.Sprintf("%s: HTTP %d: redirected to %s, and redirects are not followed: use that address as the base URL if it is the API's",
		e.Provider, e.StatusCode, e.Location)
}

// Unwrap returns the ProviderError, for errors.As.
func (e *RedirectError) Unwrap() error { return e.ProviderError }

// location returns the redirect's target resolved against the request's
// URL, or "" when there is none.
func location(resp *http.Response) string {
	u, err := resp.Location()
	if err != nil {
		return resp.Header.Get("Location")
	}
	return u.String()
}

// Call is one JSON POST to a provider's API.
type Call struct {
	// Provider names the API in errors and in compact.ProviderError.
	Provider string
	// Client sends the request.
	Client *http.Client
	// URL is the endpoint.
	URL string
	// Header holds the caller's extra headers and its authentication;
	// Post adds the JSON content type, Accept and UserAgent over them.
	Header http.Header
	// UserAgent is sent as the User-Agent header.
	UserAgent string
	// Body is the JSON request.
	Body []byte
	// Timeout bounds the call inside ctx; 0 means ctx alone.
	Timeout time.Duration
	// MaxErrorBody caps the body kept in a ProviderError; MaxBody caps a
	// successful answer.
	MaxErrorBody int64
	MaxBody      int
	// Now is the clock for Retry-After dates.
	Now func() time.Time
}

// Post sends the call once and returns the body of a 2xx answer.
//
// A non-2xx answer gives a *compact.ProviderError with the status, the
// body (up to MaxErrorBody bytes) and the wait Retry-After asked for.
// When ctx ends first the error wraps ctx.Err(); when only Timeout runs
// out it wraps context.DeadlineExceeded, which also satisfies a net.Error
// with Timeout() true.
func Post(ctx context.Context, c Call) ([]byte, error) {
	rctx := ctx
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	fail := func(err error) error { return c.requestError(ctx, rctx, err) }
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, c.URL, bytes.NewReader(c.Body))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Provider, err)
	}
	req.Header = c.Header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.UserAgent)
	secrets := Secrets(req.Header)
	resp, err := c.Client.Do(req)
	if err != nil {
		return nil, redact.Error(fail(err), secrets...)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		body, rerr := ReadCapped(resp.Body, c.MaxErrorBody)
		if rerr != nil && rctx.Err() != nil {
			return nil, redact.Error(fail(rerr), secrets...)
		}
		now := time.Now
		if c.Now != nil {
			now = c.Now
		}
		pe := &compact.ProviderError{
			Provider:   c.Provider,
			StatusCode: resp.StatusCode,
			// A server may echo the request's headers, key included.
			Body:       redact.String(string(body), secrets...),
			RetryAfter: RetryAfter(resp.Header, now()),
		}
		if resp.StatusCode >= 300 && resp.StatusCode < 400 {
			return nil, &RedirectError{ProviderError: pe, Location: redact.String(location(resp), secrets...)}
		}
		return nil, pe
	}
	body, err := ReadCapped(resp.Body, int64(c.MaxBody)+1)
	if err != nil {
		return nil, redact.Error(fail(err), secrets...)
	}
	if len(body) > c.MaxBody {
		return nil, fmt.Errorf("%s: response larger than %d bytes", c.Provider, c.MaxBody)
	}
	return body, nil
}

// requestError wraps a failure of sending the request or reading the
// answer so that the cause stays visible to errors.Is: the caller's
// context error when ctx ended, context.DeadlineExceeded when only the
// per-request timeout did.
func (c Call) requestError(ctx, rctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		if errors.Is(err, cerr) {
			return fmt.Errorf("%s: %w", c.Provider, err)
		}
		return fmt.Errorf("%s: %w (%w)", c.Provider, cerr, err)
	}
	if rctx.Err() != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("%s: no answer within %v: %w", c.Provider, c.Timeout, err)
		}
		return fmt.Errorf("%s: no answer within %v: %w (%w)", c.Provider, c.Timeout, context.DeadlineExceeded, err)
	}
	return fmt.Errorf("%s: %w", c.Provider, err)
}
