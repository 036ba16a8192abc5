package apihttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact"
)

func TestNewCallDefaults(t *testing.T) {
	s := Setup{Provider: "p", DefaultBaseURL: "https://api.example.com", Path: "/v1/x",
		DefaultTimeout: time.Minute, DefaultUserAgent: "ua/1", Header: http.Header{"X-Extra": {"e"}}}
	c, u, err := NewCall(s)
	if err != nil {
		t.Fatal(err)
	}
	if c.URL != "https://api.example.com/v1/x" || u.Host != "api.example.com" || c.Timeout != time.Minute ||
		c.UserAgent != "ua/1" || c.Client == nil || c.Now == nil || c.Provider != "p" {
		t.Errorf("NewCall = %+v, %v", c, u)
	}
	s.Header.Set("X-Extra", "changed")
	if got := c.Header.Get("X-Extra"); got != "e" {
		t.Errorf("the Call shares the Setup's header map: %q", got)
	}
	s.Timeout, s.UserAgent, s.BaseURL = -1, "mine", "ftp://x"
	if _, _, err := NewCall(s); err == nil {
		t.Error("NewCall accepted an ftp base URL")
	}
	s.BaseURL = "http://localhost:1"
	if c, _, _ := NewCall(s); c.Timeout != -1 || c.UserAgent != "mine" {
		t.Errorf("given timeout and user agent not kept: %v, %q", c.Timeout, c.UserAgent)
	}
}

func TestModel(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name, asked, fallback, want string
		ctx                         context.Context
		wantIs                      error
	}{
		{name: "asked wins", asked: "a", fallback: "f", want: "a", ctx: context.Background()},
		{name: "fallback", fallback: "f", want: "f", ctx: context.Background()},
		{name: "none", ctx: context.Background()},
		{name: "context ended", asked: "a", ctx: done, wantIs: context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Model(tt.ctx, "p", tt.asked, tt.fallback)
			if tt.want != "" {
				if err != nil || got != tt.want {
					t.Errorf("Model = %q, %v; want %q", got, err, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("Model = %q, want an error", got)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("error %v does not wrap %v", err, tt.wantIs)
			}
		})
	}
}

// PostJSON sends the JSON of its value with the set headers replacing the
// configured ones, returns the decoder's reading of the answer, and takes
// the credentials it sent out of the decoder's error.
func TestPostJSON(t *testing.T) {
	var got http.Header
	var body map[string]string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		_ = json.NewDecoder(r.Body).Decode(&body)
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	c, _, err := NewCall(Setup{Provider: "p", BaseURL: srv.URL, Path: "/x", DefaultUserAgent: "ua",
		Header: http.Header{"X-Api-Key": {"configured"}, "X-Extra": {"e"}}, MaxErrorBody: 1 << 10, MaxBody: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	const key = "sk-set-0123456789"
	set := http.Header{}
	set.Set("X-Api-Key", key)
	asText := func(b []byte) (string, error) { return string(b), nil }
	answer, err := PostJSON(context.Background(), c, set, map[string]string{"a": "b"}, asText)
	if err != nil || answer != `{"ok":true}` {
		t.Fatalf("PostJSON = %q, %v", answer, err)
	}
	if got.Values("X-Api-Key")[0] != key || len(got.Values("X-Api-Key")) != 1 || got.Get("X-Extra") != "e" || body["a"] != "b" {
		t.Errorf("server saw headers %v, body %v", got, body)
	}
	if c.Header.Get("X-Api-Key") != "configured" {
		t.Errorf("the Call's own header became %v", c.Header)
	}
	quoting := func([]byte) (string, error) {
		return "", fmt.Errorf("answer holds an error: %w", &compact.ProviderError{Provider: "p", Body: "echo " + key})
	}
	_, err = PostJSON(context.Background(), c, set, map[string]string{"a": "b"}, quoting)
	var pe *compact.ProviderError
	if !errors.As(err, &pe) {
		t.Fatalf("decoder's error %v lost its ProviderError", err)
	}
	if strings.Contains(err.Error(), key) || strings.Contains(pe.Body, key) {
		t.Errorf("decoder's error %v (body %q) still holds the key sent", err, pe.Body)
	}
	if _, err := PostJSON(context.Background(), c, nil, func() {}, asText); err == nil {
		t.Error("PostJSON encoded a func")
	}
}
