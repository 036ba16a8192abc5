// Package apihttp holds the HTTP plumbing the openai and anthropic clients
// share: the default client, capped body reads and Retry-After parsing.
package apihttp

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

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
