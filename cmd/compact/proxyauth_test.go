package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const cmdTestToken = "cpt-cmd-0123456789abcdef"

// TestProxyAuthUsageErrors: the proxy refuses to serve beyond loopback
// without a token unless told to, and bad token settings are usage errors
// that never quote the token.
func TestProxyAuthUsageErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, []byte("\n"), 0o600)
	tok := filepath.Join(dir, "tok")
	os.WriteFile(tok, []byte(cmdTestToken+"\n"), 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"proxy", "--store", "memory", "--listen", "0.0.0.0:0"}, "--allow-open"},
		{[]string{"proxy", "--store", "memory", "--listen", ":0"}, "--allow-open"},
		{[]string{"proxy", "--store", "memory", "--auth-token", "short-tok"}, "--auth-token"},
		{[]string{"proxy", "--store", "memory", "--auth-token", cmdTestToken, "--auth-token-file", tok}, "give one"},
		{[]string{"proxy", "--store", "memory", "--auth-token-file", empty}, "empty"},
		{[]string{"proxy", "--store", "memory", "--max-inflight-mb", "0"}, "--max-inflight-mb"},
		{[]string{"proxy", "--store", "memory", "--max-messages", "-1"}, "--max-messages"},
		{[]string{"proxy", "--store", "memory", "--max-summary-calls", "0"}, "--max-summary-calls"},
		{[]string{"proxy", "--store", "memory", "--admit-wait", "0s"}, "--admit-wait"},
		{[]string{"proxy", "--store", "memory", "--body-timeout", "0s"}, "--body-timeout"},
		{[]string{"proxy", "--store", "memory", "--write-idle-timeout", "-1s"}, "--write-idle-timeout"},
		{[]string{"proxy", "--store", "memory", "--tenant-header", "bad header"}, "tenant header"},
		{[]string{"proxy", "--store", "memory", "--hook-summary"}, "--hook-summary"},
		{[]string{"proxy", "--store", "memory", "--hook-timeout", "0s"}, "--hook-timeout"},
		{[]string{"proxy", "--store", "memory", "--on-compaction-url", "ftp://x"}, "hook URL"},
	} {
		t.Run(strings.Join(tc.args[3:], " "), func(t *testing.T) {
			// A proxy that starts when it should not is stopped after a
			// while, and the test then fails on its exit code.
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			args := tc.args
			if !strings.Contains(strings.Join(args, " "), "--listen") {
				args = append(args, "--listen", "127.0.0.1:0")
			}
			r := newCLI(t).runCtx(ctx, args...)
			out := r.stderr
			if r.code != 2 {
				t.Fatalf("exit %d, want 2 (stderr %q)", r.code, out)
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("%q does not name %s", out, tc.want)
			}
			if strings.Contains(out, "short-tok") || strings.Contains(out, cmdTestToken) {
				t.Errorf("the error quotes the token: %q", out)
			}
		})
	}
}

// TestProxyTokenSources: the token comes from --auth-token,
// --auth-token-file, $COMPACT_PROXY_TOKEN or the configuration file, in
// that order.
func TestProxyTokenSources(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tok")
	os.WriteFile(file, []byte("  from-file-0123456789\n"), 0o600)
	cases := []struct {
		name           string
		changed        map[string]bool
		flagTok, flagF string
		env            string
		pc             proxyConfig
		want           string
	}{
		{"flag", map[string]bool{"auth-token": true}, "from-flag-0123456789", "", "from-env-0123456789", proxyConfig{}, "from-flag-0123456789"},
		{"file", map[string]bool{"auth-token-file": true}, "", file, "from-env-0123456789", proxyConfig{}, "from-file-0123456789"},
		{"env", nil, "", "", "from-env-0123456789", proxyConfig{AuthToken: "from-config-0123456789"}, "from-env-0123456789"},
		{"config", nil, "", "", "", proxyConfig{AuthToken: "from-config-0123456789"}, "from-config-0123456789"},
		{"config file", nil, "", "", "", proxyConfig{AuthTokenFile: file}, "from-file-0123456789"},
		{"none", nil, "", "", "", proxyConfig{}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := &app{getenv: func(k string) string {
				if k == envProxyToken {
					return tc.env
				}
				return ""
			}}
			got, _, err := a.proxyToken(changedSet(tc.changed), tc.pc, tc.flagTok, tc.flagF)
			if err != nil || got != tc.want {
				t.Errorf("token %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// changedSet plays the flag set's Changed for proxyToken.
type changedSet map[string]bool

func (c changedSet) Changed(name string) bool { return c[name] }

// TestProxyCommandAuth: with --auth-token-file, /healthz stays open, an
// API path needs X-Compact-Token, and the upstream never sees it; with
// --allow-open the proxy serves on every interface after a warning.
func TestProxyCommandAuth(t *testing.T) {
	var seen http.Header
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r.Header.Clone()
		io.WriteString(w, `{"data":[]}`)
	}))
	defer up.Close()
	file := filepath.Join(t.TempDir(), "tok")
	os.WriteFile(file, []byte(cmdTestToken+"\n"), 0o600)
	p := startProxy(t, "--store", "memory", "--anthropic-upstream", up.URL, "--openai-upstream", up.URL, "--auth-token-file", file)
	get := func(path string, h http.Header) int {
		req, _ := http.NewRequest("GET", p.addr+path, nil)
		req.Header = h
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := get("/healthz", http.Header{}); got != 200 {
		t.Errorf("/healthz: %d", got)
	}
	if got := get("/v1/models", http.Header{"Authorization": {"Bearer sk-canary"}}); got != 401 {
		t.Errorf("/v1/models without the token: %d, want 401", got)
	}
	if got := get("/v1/models", http.Header{"Authorization": {"Bearer sk-canary"}, "X-Compact-Token": {cmdTestToken}}); got != 200 {
		t.Errorf("/v1/models with the token: %d, want 200", got)
	}
	if seen.Get("X-Compact-Token") != "" || seen.Get("Authorization") != "Bearer sk-canary" {
		t.Errorf("upstream headers %v", seen)
	}
	p.stop()
	<-p.done
	if strings.Contains(p.stderr.String(), cmdTestToken) {
		t.Errorf("the token reached the log")
	}

	open := startProxy(t, "--store", "memory", "--listen", "0.0.0.0:0", "--allow-open")
	if !strings.Contains(open.stderr.String(), "without a proxy token") {
		t.Errorf("no warning for an open listener: %q", open.stderr.String())
	}
	open.stop()
	if code := <-open.done; code != 0 {
		t.Errorf("exit %d", code)
	}
}
