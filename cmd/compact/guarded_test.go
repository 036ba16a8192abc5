package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// canaryKey is an API key in no known shape: only knowing it as the
// configured key can keep it out of the output.
const canaryKey = "canary-Zq81-Lw0p-9x7T"

// echoAuth answers every request with status and an error body that
// quotes the request's headers, key included, three ways: raw in the
// message, as "Name: value" lines and as Go's JSON of the header map.
func echoAuth(provider string, status int) func(int, *seenRequest) answer {
	return func(_ int, r *seenRequest) answer {
		var lines []string
		for k, v := range r.Header {
			lines = append(lines, k+": "+strings.Join(v, ","))
		}
		sort.Strings(lines)
		dump, _ := json.Marshal(r.Header)
		key := r.Header.Get("X-Api-Key")
		if key == "" {
			key = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		}
		msg := fmt.Sprintf("invalid key %s; request headers: %s; %s", key, strings.Join(lines, "; "), dump)
		return answer{status: status, body: providerError(provider, "authentication_error", msg)}
	}
}

// TestKeyNeverShown runs compact against servers that echo the key in
// their error bodies, for both providers, with the key from the
// environment and from the configuration file: the key must reach
// neither stderr (the error, the fallback's warning, the debug log of
// -v), nor the JSON report, nor the session file that --fallback
// extractive writes (the summary and details.summarizerError).
func TestKeyNeverShown(t *testing.T) {
	for _, tc := range []struct {
		provider   string
		status     int
		fromConfig bool
	}{
		{summarizerOpenAI, http.StatusUnauthorized, false},
		{summarizerAnthropic, http.StatusBadRequest, false},
		{summarizerOpenAI, http.StatusBadRequest, true},
		{summarizerAnthropic, http.StatusUnauthorized, true},
	} {
		name := fmt.Sprintf("%s %d key from env", tc.provider, tc.status)
		if tc.fromConfig {
			name = fmt.Sprintf("%s %d key from config", tc.provider, tc.status)
		}
		t.Run(name, func(t *testing.T) {
			m := newFakeModel(t, tc.provider)
			m.answer = echoAuth(tc.provider, tc.status)
			c := newCLI(t)
			args := func(file string, extra ...string) []string {
				return modelArgs(m, file, append([]string{"--summary-window", "128000"}, extra...)...)
			}
			if tc.fromConfig {
				cfg := filepath.Join(t.TempDir(), "config.json")
				b, _ := json.Marshal(map[string]any{"summarizer": tc.provider, "apiKey": canaryKey})
				writeFile(t, cfg, string(b))
				base := args
				args = func(file string, extra ...string) []string {
					return append(base(file, extra...), "--config", cfg)
				}
			} else {
				c.env[keyVar(tc.provider)] = canaryKey
			}
			noKey := func(what, s string) {
				t.Helper()
				for _, part := range []string{canaryKey, "Zq81-Lw0p"} {
					if strings.Contains(s, part) {
						t.Errorf("%s shows the key:\n%s", what, s)
					}
				}
			}

			// Without a fallback: the error on stderr.
			file := copyFile(t, demoSession)
			msg := c.fails(1, args(file)...)
			noKey("the error", msg)
			contains(t, "the error", msg, fmt.Sprintf("HTTP %d", tc.status), "invalid key REDACTED")
			if reqs := m.seen(); len(reqs) != 1 || authHeader(reqs[0]) != canaryKey {
				t.Fatalf("%d requests; the key was not sent, so the test proves nothing", len(reqs))
			}

			// With the fallback, in JSON and with the debug log: stdout,
			// stderr and the file written.
			r := c.run(append(args(file, "--fallback", "extractive"), "--json", "-v")...)
			if r.code != 0 {
				t.Fatalf("--fallback extractive: exit %d, stderr %q", r.code, r.stderr)
			}
			noKey("stderr", r.stderr)
			noKey("the JSON report", r.stdout)
			noKey("the session file", string(readFile(t, file)))
			var rr runReport
			if err := json.Unmarshal([]byte(r.stdout), &rr); err != nil {
				t.Fatal(err)
			}
			contains(t, "fallbackError", rr.FallbackError, fmt.Sprintf("HTTP %d", tc.status), "REDACTED")
			e := open(t, file).Entry(rr.EntryID)
			if e == nil || e.Compaction == nil {
				t.Fatal("no compaction written")
			}
			contains(t, "the summary", e.Compaction.Summary, "> Written without a model", "REDACTED")
			if d, _ := e.Compaction.Details["summarizerError"].(string); !strings.Contains(d, "REDACTED") {
				t.Errorf("details.summarizerError %q", d)
			}
			if len(m.seen()) != 2 {
				t.Errorf("%d requests in all, want 2: a 4xx is not retried", len(m.seen()))
			}
		})
	}
}
