package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/syncbuf"
	"github.com/compactkit/compact/proxy/store"
)

// hookReceiver is a loopback webhook receiver that keeps every body it is
// POSTed, answering status.
type hookReceiver struct {
	srv    *httptest.Server
	status int
	mu     sync.Mutex
	bodies [][]byte
	heads  []http.Header
}

func newHookReceiver(t *testing.T, status int) *hookReceiver {
	h := &hookReceiver{status: status}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.bodies = append(h.bodies, b)
		h.heads = append(h.heads, r.Header.Clone())
		h.mu.Unlock()
		w.WriteHeader(h.status)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hookReceiver) received() [][]byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([][]byte(nil), h.bodies...)
}

// decodeHooks reads a stream of CompactionHook JSON values.
func decodeHooks(t *testing.T, b []byte) []CompactionHook {
	t.Helper()
	var out []CompactionHook
	dec := json.NewDecoder(strings.NewReader(string(b)))
	for {
		var p CompactionHook
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatalf("hook payload: %v: %s", err, b)
		}
		out = append(out, p)
	}
}

// Every compaction the proxy records reaches the webhook and the command
// once, with the library's event shape and the conversation's fields,
// without the client's credentials, and with the summary only when asked.
func TestCompactionHooks(t *testing.T) {
	for _, withSummary := range []bool{false, true} {
		t.Run(map[bool]string{false: "figures", true: "summary"}[withSummary], func(t *testing.T) {
			recv := newHookReceiver(t, http.StatusNoContent)
			out := filepath.Join(t.TempDir(), "events")
			up := newCachingUpstream(t)
			mem := store.NewMemory(store.MemoryOptions{})
			reg := compact.NewRegistry([]compact.ModelInfo{{ID: "claude-test", ContextWindow: 12000, Prices: &testPrices}})
			promReg := prometheus.NewRegistry()
			srv, ts := proxyIn(t, up.srv.URL, Config{Window: 12000, Policy: compact.Reserve{Tokens: 3000}, Store: mem, Registry: reg,
				AheadMark: -1, Metrics: promReg, OnCompactionURL: recv.srv.URL + "/hook?secret=s3", OnCompactionCmd: "cat >> " + out,
				HookSummary: withSummary})
			c := newClient(t, Anthropic, ts.URL)
			c.header.Set("X-Session-Id", "hooks")
			c.header.Set("User-Agent", "claude-cli/2.0.14 (external, cli)")
			const steps = 14
			for i := 1; i <= steps; i++ {
				c.step(i)
			}
			rec := conversationRecord(t, mem, steps)
			// Close delivers what is queued.
			ts.Close()
			srv.Close()

			posted := recv.received()
			if len(posted) != rec.Compactions || rec.Compactions < 2 {
				t.Fatalf("%d hooks POSTed for %d compactions", len(posted), rec.Compactions)
			}
			file, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			ran := decodeHooks(t, file)
			if len(ran) != len(posted) {
				t.Fatalf("the command got %d events, the URL %d", len(ran), len(posted))
			}
			for i, b := range posted {
				if string(b) != strings.TrimSpace(string(b)) || !strings.Contains(string(file), string(b)) {
					t.Errorf("the command and the URL got different payloads for compaction %d", i)
				}
				if strings.Contains(string(b), "sk-ant-canary") {
					t.Errorf("payload %d holds the client's key: %s", i, b)
				}
				if ct := recv.heads[i].Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q", ct)
				}
			}
			// Oldest first, as they were recorded; the store keeps them
			// newest first.
			for i, p := range ran {
				cp := rec.Checkpoints[len(rec.Checkpoints)-1-i]
				if p.Type != compact.EventEnd || p.Reason != cp.Reason || p.TokensBefore != cp.TokensBefore || p.TokensAfter != cp.TokensAfter ||
					p.Summarizer != cp.Summarizer || p.FirstKeptUnit != cp.Covered || p.Model != "claude-test" || p.API != "anthropic" ||
					p.Agent != "claude-cli/2.0.14" || len(p.Conversation) != 12 || p.SummaryRequests != 1 || p.SummaryCostUSD == nil ||
					p.Usage == nil || p.Usage.CacheRead != cp.SummaryCalls[0].Usage.CacheRead || p.MessagesSummarized < cp.Covered {
					t.Errorf("event %d = %+v\ndoes not match compaction %+v", i, p, cp)
				}
				if got := p.Summary != ""; got != withSummary || (withSummary && p.Summary != cp.Summary) {
					t.Errorf("event %d summary %q; want it only with HookSummary (%v)", i, p.Summary, withSummary)
				}
			}
			for _, kind := range []string{hookURL, hookCmd} {
				if n := testutil.ToFloat64(srv.hooks.counts.WithLabelValues(kind, hookOK)); int(n) != rec.Compactions {
					t.Errorf("%s deliveries counted ok: %v, want %d", kind, n, rec.Compactions)
				}
			}
		})
	}
}

// A receiver that never answers, or fails, holds no request up: the
// conversation goes on, the failures are counted and logged without the
// URL's secret, and a full queue drops events.
func TestCompactionHookFailures(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(stuck.Close)
	t.Cleanup(unblock)
	up := newCachingUpstream(t)
	mem := store.NewMemory(store.MemoryOptions{})
	var logs syncbuf.Buffer
	srv, ts := proxyIn(t, up.srv.URL, Config{Window: 12000, Policy: compact.Reserve{Tokens: 3000}, Store: mem, AheadMark: -1,
		OnCompactionURL: stuck.URL + "/hook?secret=s3cr3t", OnCompactionCmd: "exit 3", Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	c := newClient(t, Anthropic, ts.URL)
	c.header.Set("X-Session-Id", "stuck")
	const steps = 14
	for i := 1; i <= steps; i++ {
		c.step(i) // would hang here if a delivery held the request
	}
	rec := conversationRecord(t, mem, steps)
	if rec.Compactions < 2 {
		t.Fatalf("%d compactions", rec.Compactions)
	}
	unblock()
	ts.Close()
	srv.Close()
	if n := testutil.ToFloat64(srv.hooks.counts.WithLabelValues(hookCmd, hookFailed)); int(n) != rec.Compactions {
		t.Errorf("failed commands counted %v, want %d", n, rec.Compactions)
	}
	if !strings.Contains(logs.String(), "compaction hook failed") || strings.Contains(logs.String(), "s3cr3t") {
		t.Errorf("hook failures not logged, or logged with the URL's secret:\n%s", logs.String())
	}
}

// Behind a delivery that does not end, the queue fills and further
// events are dropped and counted; stopping drops what is left.
func TestCompactionHookQueueBounded(t *testing.T) {
	release := make(chan struct{})
	stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(stuck.Close)
	t.Cleanup(func() { close(release) })
	h, err := newHooks(Config{OnCompactionURL: stuck.URL}, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	for range hookQueue + 10 {
		h.send(CompactionHook{Conversation: "x"})
	}
	if n := testutil.ToFloat64(h.counts.WithLabelValues(hookURL, hookDropped)); n < 9 {
		t.Errorf("%v events dropped from a full queue, want at least 9", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h.close(ctx) // returns at once: nothing waits for the receiver
	if n := testutil.ToFloat64(h.counts.WithLabelValues(hookURL, hookDropped)); n < hookQueue {
		t.Errorf("%v events dropped in all after stopping with a full queue, want at least %d", n, hookQueue)
	}
	h.send(CompactionHook{})
}

// Bad hook settings are refused when the proxy starts.
func TestCompactionHookConfig(t *testing.T) {
	for _, cfg := range []Config{
		{OnCompactionURL: "ftp://example.com/x"},
		{OnCompactionURL: "/relative"},
		{HookSummary: true},
		{OnCompactionCmd: "true", HookTimeout: -1},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}

// A summary written ahead and swapped in is a compaction like any other:
// the hooks get it, marked ahead.
func TestCompactionHookAhead(t *testing.T) {
	recv := newHookReceiver(t, http.StatusOK)
	out := filepath.Join(t.TempDir(), "events")
	up := newCachingUpstream(t)
	mem := store.NewMemory(store.MemoryOptions{})
	reg := compact.NewRegistry([]compact.ModelInfo{{ID: "claude-test", ContextWindow: 12000, Prices: &testPrices}})
	srv, ts := proxyIn(t, up.srv.URL, Config{Window: 12000, Policy: compact.Reserve{Tokens: 3000}, Store: mem, Registry: reg,
		OnCompactionURL: recv.srv.URL, OnCompactionCmd: "cat >> " + out})
	c := newClient(t, Anthropic, ts.URL)
	c.header.Set("X-Session-Id", "ahead-hooks")
	const steps = 16
	for i := 1; i <= steps; i++ {
		c.step(i)
		// Each step waits for its record (and a summary being written
		// ahead), as a user reading the answer would.
		conversationRecord(t, mem, i)
		waitFor(t, func() bool { return !srv.aheadRunning(srvKey(mem)) })
	}
	rec := conversationRecord(t, mem, steps)
	ts.Close()
	srv.Close()
	file, _ := os.ReadFile(out)
	events := decodeHooks(t, file)
	if len(recv.received()) != rec.Compactions || len(events) != rec.Compactions {
		t.Fatalf("%d POSTed, %d run, for %d compactions", len(recv.received()), len(events), rec.Compactions)
	}
	ahead := 0
	for _, e := range events {
		if e.Ahead {
			ahead++
		}
	}
	if ahead == 0 {
		t.Errorf("no event marked ahead among %d: %+v", len(events), events)
	}
}

// srvKey is the key of the one conversation mem holds.
func srvKey(mem *store.Memory) string {
	for _, k := range mem.Keys() {
		if strings.HasPrefix(k, "c:") {
			return k
		}
	}
	return ""
}
