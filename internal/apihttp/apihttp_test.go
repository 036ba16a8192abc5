package apihttp

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		headers map[string]string
		want    time.Duration
	}{
		{"none", nil, 0},
		{"seconds", map[string]string{"Retry-After": "7"}, 7 * time.Second},
		{"fractional seconds", map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond},
		{"negative seconds", map[string]string{"Retry-After": "-3"}, 0},
		{"HTTP date", map[string]string{"Retry-After": "Sat, 01 Mar 2025 12:00:45 GMT"}, 45 * time.Second},
		{"RFC 850 date", map[string]string{"Retry-After": "Saturday, 01-Mar-25 12:01:00 GMT"}, time.Minute},
		{"milliseconds", map[string]string{"Retry-After-Ms": "250"}, 250 * time.Millisecond},
		{"bad milliseconds fall back", map[string]string{"Retry-After-Ms": "x", "Retry-After": "3"}, 3 * time.Second},
		{"garbage", map[string]string{"Retry-After": "tomorrow"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.headers {
				h.Set(k, v)
			}
			if got := RetryAfter(h, now); got != tt.want {
				t.Errorf("retryAfter = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSecrets(t *testing.T) {
	h := http.Header{}
	h.Set("Authorization", "Bearer tok-1")
	h.Set("X-Api-Key", "key-2")
	h.Set("X-Gateway-Token", "tok-3")
	h.Set("Content-Type", "application/json")
	h.Set("Anthropic-Version", "2023-06-01")
	got := map[string]bool{}
	for _, s := range Secrets(h) {
		got[s] = true
	}
	for _, want := range []string{"Bearer tok-1", "tok-1", "key-2", "tok-3"} {
		if !got[want] {
			t.Errorf("Secrets misses %q: %v", want, got)
		}
	}
	for _, not := range []string{"application/json", "2023-06-01"} {
		if got[not] {
			t.Errorf("Secrets holds %q", not)
		}
	}
}

func TestEndpoint(t *testing.T) {
	tests := []struct{ base, want, err string }{
		{"https://api.example.com", "https://api.example.com/v1/x", ""},
		{"http://localhost:8080/v1/", "http://localhost:8080/v1/v1/x", ""},
		{"api.example.com", "", `p: base URL "api.example.com" is not an http or https URL`},
		{"ftp://example.com", "", `p: base URL "ftp://example.com" is not an http or https URL`},
		{"http://[::1", "", "p: base URL: parse"},
	}
	for _, tc := range tests {
		got, u, err := Endpoint("p", tc.base, "/v1/x")
		switch {
		case tc.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.err)):
			t.Errorf("Endpoint(%q): error %v, want %q...", tc.base, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want || u == nil):
			t.Errorf("Endpoint(%q) = %q, %v, %v; want %q", tc.base, got, u, err, tc.want)
		}
	}
}
