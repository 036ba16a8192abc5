package proxy

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/fakeupstream"
	"github.com/compactkit/compact/internal/testing/syncbuf"
	"github.com/compactkit/compact/proxy/store"
)

// canaryPanic is a panic message that quotes the clients' credential, as a
// careless dependency's might.
const canaryPanic = "boom near sk-canary-0123456789"

// panicStore panics in the methods its flags name.
type panicStore struct {
	*store.Memory
	get, put, extend atomic.Bool
}

func (p *panicStore) Get(ctx context.Context, key string) (*store.Record, error) {
	if p.get.Load() {
		panic(canaryPanic)
	}
	return p.Memory.Get(ctx, key)
}

func (p *panicStore) Put(ctx context.Context, key string, rec *store.Record) error {
	if p.put.Load() {
		panic(canaryPanic)
	}
	return p.Memory.Put(ctx, key, rec)
}

func (p *panicStore) TryLock(ctx context.Context, key string, ttl time.Duration) (store.Lock, error) {
	l, err := p.Memory.TryLock(ctx, key, ttl)
	if l == nil || err != nil {
		return l, err
	}
	return panicLock{l, p}, nil
}

// panicLock panics on Extend when its store says so.
type panicLock struct {
	store.Lock
	p *panicStore
}

func (l panicLock) Extend(ctx context.Context, ttl time.Duration) error {
	if l.p.extend.Load() {
		panic(canaryPanic)
	}
	return l.Lock.Extend(ctx, ttl)
}

// panicPolicy is compact.Reserve whose Threshold panics.
type panicPolicy struct{ compact.Reserve }

func (panicPolicy) Threshold(compact.ModelInfo) (int, bool) { panic(canaryPanic) }

// panicTransport sends requests to the fake upstream, but panics on those
// its match selects (each at most once when once is set).
type panicTransport struct {
	match func(body []byte) bool
	once  bool
	fired atomic.Int32
}

func (p *panicTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil && r.GetBody != nil {
		body, _ := r.GetBody()
		b, _ := io.ReadAll(body)
		if p.match(b) && (!p.once || p.fired.Load() == 0) {
			p.fired.Add(1)
			panic(canaryPanic)
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestPanicsFailOpen: a panic anywhere on the request path (a Store, the
// summarizer, a Policy, the Transport, the background work after an
// answer, the lock renewal) is recovered: every request is answered, the
// agent's requests still reach the upstream, the process lives on, the
// panic is counted by stage and logged in one line without a stack trace
// or the credential.
func TestPanicsFailOpen(t *testing.T) {
	agent := func(b []byte) bool { return fakeupstream.IsAgentTurn(fakeupstream.Chat, b) }
	summary := func(b []byte) bool { return !agent(b) }
	for _, tc := range []struct {
		name  string
		setup func(*panicStore, *Config, *fakeUpstream)
		stage string
		// compacted is set when the requests must still be compacted
		// (the panic only cost the model summary).
		compacted bool
	}{
		{name: "store get", stage: stageInternal, setup: func(p *panicStore, _ *Config, _ *fakeUpstream) { p.get.Store(true) }},
		{name: "store put (after the answer)", stage: stageInternal, setup: func(p *panicStore, _ *Config, _ *fakeUpstream) { p.put.Store(true) }},
		{name: "policy", stage: stageInternal, setup: func(_ *panicStore, c *Config, _ *fakeUpstream) { c.Policy = panicPolicy{} }},
		{name: "summarizer", stage: stageSummarize, compacted: true, setup: func(_ *panicStore, c *Config, _ *fakeUpstream) {
			c.Summarizer = SummarizerUpstream
			c.Transport = &panicTransport{match: summary}
		}},
		{name: "transport before any answer", stage: stageInternal, compacted: true, setup: func(_ *panicStore, c *Config, _ *fakeUpstream) {
			c.Transport = &panicTransport{match: agent, once: true}
		}},
		{name: "lock renewal", stage: stageStore, compacted: true, setup: func(p *panicStore, c *Config, up *fakeUpstream) {
			p.extend.Store(true)
			c.Summarizer = SummarizerUpstream
			c.LockTTL = 30 * time.Millisecond
			up.gate = make(chan struct{})
			go func() { time.Sleep(200 * time.Millisecond); close(up.gate) }()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs syncbuf.Buffer
			logger := slog.New(slog.NewTextHandler(&logs, nil))
			up := newFakeUpstream(t)
			st := &panicStore{Memory: store.NewMemory(store.MemoryOptions{})}
			cfg := Config{Window: 6000, Policy: compact.Reserve{Tokens: 1500}, Summarizer: SummarizerExtractive, KeepRecentTokens: 1000, Store: st, Logger: logger}
			tc.setup(st, &cfg, up)
			srv, ts := newTestProxy(t, up, cfg)
			c := newClient(t, Chat, ts.URL)
			const steps = 6
			for i := 1; i <= steps; i++ {
				c.step(i) // fails the test unless answered 200
			}
			ts.Close()
			srv.Close() // waits for the background work: it must not crash
			if got := len(up.modelRequests()); got < steps {
				t.Errorf("upstream got %d of the agent's %d requests", got, steps)
			}
			compacted := false
			for _, r := range up.modelRequests() {
				compacted = compacted || summaryOf(t, Chat, r.Body) != ""
			}
			if compacted != tc.compacted {
				t.Errorf("compacted = %v, want %v", compacted, tc.compacted)
			}
			if n := testutil.ToFloat64(srv.metrics.failOpenTotal.WithLabelValues(tc.stage)); n < 1 {
				t.Errorf(`compact_proxy_fail_open_total{stage=%q} = %v, want the panic counted`, tc.stage, n)
			}
			out := logs.String()
			if !strings.Contains(out, "panic: boom") {
				t.Errorf("the panic was not logged:\n%s", out)
			}
			for _, bad := range []string{"goroutine ", ".go:", "sk-canary-0123456789"} {
				if strings.Contains(out, bad) {
					t.Errorf("log holds %q:\n%s", bad, out)
				}
			}
		})
	}
}

// TestPanicAnswered: once the answer has started
// nothing can be sent instead; a panic then ends the connection quietly
// (http.ErrAbortHandler), and nothing else is written.
func TestPanicAnswered(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write bool
		want  int
	}{
		{"nothing written", false, http.StatusBadGateway},
		{"answer started", true, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(Config{})
			if err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			aw := &answerWriter{ResponseWriter: rec}
			r := httptest.NewRequest("POST", "/v1/messages", nil)
			r.Header.Set("X-Api-Key", "sk-ant-canary-0123456789")
			aborted := func() (aborted bool) {
				defer func() { aborted = recover() == http.ErrAbortHandler }()
				defer s.recoverRequest(aw, r, Anthropic)
				if tc.write {
					aw.WriteHeader(http.StatusOK)
				}
				panic(canaryPanic)
			}()
			if aborted != tc.write {
				t.Errorf("connection cut = %v, want %v", aborted, tc.write)
			}
			if rec.Code != tc.want {
				t.Errorf("status %d, want %d", rec.Code, tc.want)
			}
			if strings.Contains(rec.Body.String(), "canary") {
				t.Errorf("answer quotes the credential: %s", rec.Body)
			}
		})
	}
}

// TestObserverPanicKeepsRelay: an observer that panics on a response costs
// its usage, never the answer: the client gets every byte.
func TestObserverPanicKeepsRelay(t *testing.T) {
	for _, at := range []string{"write", "observed"} {
		t.Run(at, func(t *testing.T) {
			s, err := New(Config{})
			if err != nil {
				t.Fatal(err)
			}
			body := strings.Repeat("data: {}\n\n", 5000)
			resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(strings.NewReader(body))}
			obs := &safeObserver{obs: panickyObserver{at: at}, s: s}
			rec := httptest.NewRecorder()
			if _, err := relay(&answerWriter{ResponseWriter: rec}, resp, obs, nil); err != nil {
				t.Fatal(err)
			}
			if rec.Body.String() != body {
				t.Errorf("client got %d of %d bytes", rec.Body.Len(), len(body))
			}
			if o := obs.Observed(); o.Usage != nil || o.Complete {
				t.Errorf("observed %+v from a failed observer", o)
			}
			if n := testutil.ToFloat64(s.metrics.failOpenTotal.WithLabelValues(stageObserve)); n != 1 {
				t.Errorf(`fail_open_total{stage="observe"} = %v, want 1`, n)
			}
		})
	}
}

// panickyObserver panics in Write or in Observed.
type panickyObserver struct{ at string }

func (p panickyObserver) Write(b []byte) (int, error) {
	if p.at == "write" {
		panic(canaryPanic)
	}
	return len(b), nil
}

func (p panickyObserver) Observed() Observed {
	if p.at == "observed" {
		panic(canaryPanic)
	}
	return Observed{Usage: &compact.Usage{Input: 1}, Complete: true}
}
