package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/sharedtest"
	"github.com/compactkit/compact/summarize"
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
			file := sharedtest.TempCopy(t, demoSession)
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

// TestGuardedSummarizer checks the wrapper of the model summarizer with
// an injected clock: one deadline for all calls of a run, the limit that
// ran out named in the error, and the keys taken out of it.
func TestGuardedSummarizer(t *testing.T) {
	// The context holds a real deadline, so the clock starts now.
	start := time.Now()
	var deadlines []time.Time
	inner := compact.SummarizerFunc(func(ctx context.Context, req *compact.SummaryRequest) (*compact.Summary, error) {
		d, _ := ctx.Deadline()
		deadlines = append(deadlines, d)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("openai: no answer within 1s: %w", context.DeadlineExceeded)
	})
	clock := start
	g := &guardedSummarizer{inner: &summarize.Deadline{Summarizer: inner, Limit: time.Hour, Now: func() time.Time { return clock }},
		timeout: time.Second, secrets: []string{canaryKey}}

	// Two calls (history, then a split turn's prefix) share the deadline
	// set at the start of the first; a per-request timeout is named.
	for i := 0; i < 2; i++ {
		_, err := g.Summarize(context.Background(), &compact.SummaryRequest{})
		contains(t, "error", fmt.Sprint(err), "no answer within 1s", "the time limit of one request, --timeout 1s, ran out")
		clock = clock.Add(30 * time.Minute)
	}
	if len(deadlines) != 2 || !deadlines[0].Equal(start.Add(time.Hour)) || !deadlines[1].Equal(deadlines[0]) {
		t.Errorf("deadlines %v, want both at %v", deadlines, start.Add(time.Hour))
	}

	// A deadline already past: the total limit is named.
	past := &guardedSummarizer{inner: &summarize.Deadline{Summarizer: inner, Limit: time.Minute, Now: func() time.Time { return time.Now().Add(-time.Hour) }},
		timeout: time.Second}
	_, err := past.Summarize(context.Background(), &compact.SummaryRequest{})
	contains(t, "error", fmt.Sprint(err), "the time limit of the whole summary (--total-timeout 1m0s) ran out")
	if !errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "--timeout 1s") {
		t.Errorf("error %v", err)
	}

	// The caller's own cancellation is not a time limit.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = g.Summarize(ctx, &compact.SummaryRequest{})
	if !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "time limit") {
		t.Errorf("cancelled: %v", err)
	}

	// Keys are taken out of any error.
	leaky := &guardedSummarizer{secrets: []string{canaryKey},
		inner: summarize.WithDeadline(compact.SummarizerFunc(func(context.Context, *compact.SummaryRequest) (*compact.Summary, error) {
			return nil, &compact.ProviderError{Provider: "p", StatusCode: 401, Body: "bad key " + canaryKey}
		}), time.Hour)}
	_, err = leaky.Summarize(context.Background(), &compact.SummaryRequest{})
	var pe *compact.ProviderError
	if strings.Contains(err.Error(), canaryKey) || !errors.As(err, &pe) {
		t.Errorf("leaky: %v", err)
	}
}

// TestModelTotalTimeout runs against a server that never answers: the
// per-request limit (10 minutes by default) would keep the run waiting,
// the total limit ends it and the error says which limit ran out. With
// --fallback extractive the offline summary is written instead.
func TestModelTotalTimeout(t *testing.T) {
	for _, provider := range []string{summarizerOpenAI, summarizerAnthropic} {
		t.Run(provider, func(t *testing.T) {
			m := newFakeModel(t, provider)
			m.answer = func(int, *seenRequest) answer { return answer{block: true} }
			c := newCLI(t)
			c.env[keyVar(provider)] = "k"
			file := sharedtest.TempCopy(t, demoSession)
			msg := c.failsKeeping(file, modelArgs(m, file, "--summary-window", "128000", "--total-timeout", "50ms")...)
			contains(t, "error", msg, "the file is unchanged", "the time limit of the whole summary (--total-timeout 50ms) ran out")
			if strings.Contains(msg, "--timeout 10m") {
				t.Errorf("the per-request limit is blamed: %s", msg)
			}
			if n := len(m.seen()); n > 1 {
				t.Errorf("%d requests after the total limit ran out", n)
			}

			// From the config, with the fallback.
			cfg := filepath.Join(t.TempDir(), "config.json")
			writeFile(t, cfg, `{"totalTimeout": "50ms", "fallback": "extractive"}`)
			var rr runReport
			r := c.run(append(modelArgs(m, file, "--summary-window", "128000", "--config", cfg), "--json")...)
			if r.code != 0 {
				t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
			}
			if err := json.Unmarshal([]byte(r.stdout), &rr); err != nil {
				t.Fatal(err)
			}
			contains(t, "fallbackError", rr.FallbackError, "--total-timeout 50ms")
			contains(t, "warning", r.stderr, "compact: warning:", "--total-timeout 50ms")
			if e := open(t, file).Entry(rr.EntryID); e == nil || !strings.HasPrefix(e.Compaction.Summary, "> Written without a model") {
				t.Errorf("no fallback summary written: %+v", e)
			}
		})
	}
}
