package proxy

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/fakeupstream"
	"github.com/compactkit/compact/proxy/store"
)

// The conversations of these tests: a 12,000-token window, a trigger at
// 9,000 (reserve 3,000), tool results of 2,000 bytes (about 550 tokens a
// step), so that the early mark (7,200) comes several steps before the
// trigger and the trigger several steps before the window.
const (
	aheadWindow    = 12000
	aheadThreshold = 9000
)

func aheadConfig(cfg Config) Config {
	cfg.Window = aheadWindow
	cfg.Policy = compact.Reserve{Tokens: aheadWindow - aheadThreshold}
	return cfg
}

// aheadCount is the value of compact_proxy_summaries_ahead_total for outcome.
func aheadCount(srv *Server, outcome string) int {
	return int(testutil.ToFloat64(srv.metrics.aheadTotal.WithLabelValues(outcome)))
}

// eventually waits up to 10 s for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
	}
}

// lastModel returns the newest agent request the upstream received.
func lastModel(t *testing.T, up *fakeUpstream) seen {
	t.Helper()
	reqs := up.modelRequests()
	if len(reqs) == 0 {
		t.Fatal("no model request upstream")
	}
	return reqs[len(reqs)-1]
}

// toEarlyMark steps c until srv starts a summary ahead (at most 40 steps)
// and checks that it started at the first request past the early mark:
// the request before it was under the mark, this one is under the
// trigger. It returns the next step number.
func toEarlyMark(t *testing.T, srvs []*Server, up *fakeUpstream, c *client, url func(i int) string) int {
	return toMark(t, 0.8, srvs, up, c, url)
}

// toMark is toEarlyMark for an early mark of mark (Config.AheadMark).
func toMark(t *testing.T, mark float64, srvs []*Server, up *fakeUpstream, c *client, url func(i int) string) int {
	t.Helper()
	started := func() int {
		n := 0
		for _, s := range srvs {
			n += aheadCount(s, aheadStarted)
		}
		return n
	}
	// A request far from its trigger goes upstream while it is read
	// (see streamable): its summary starts once its answer is sent, before
	// its last call is stored.
	var tokens []int
	for i := 1; i <= 40; i++ {
		c.base = url(i)
		n := len(c.body())
		c.step(i)
		if st := memoryOf(srvs[0]); st != nil {
			lastStored(t, st, n) // (the summary starts before)
		}
		tokens = append(tokens, tokensOf(lastModel(t, up).Body))
		if started() == 0 {
			continue
		}
		at := int(mark * aheadThreshold)
		k := len(tokens)
		if tokens[k-1] >= aheadThreshold || (k >= 2 && tokens[k-2] >= at+aheadThreshold/20) {
			t.Fatalf("summary ahead seen at %d tokens (the request before: %v); want it at the first request past %d",
				tokens[k-1], tokens[max(k-2, 0):], at)
		}
		if tokens[k-1] < at-aheadThreshold/10 {
			t.Fatalf("summary ahead started at %d tokens, well before the early mark %d", tokens[k-1], at)
		}
		return i + 1
	}
	t.Fatal("no summary was started ahead in 40 steps")
	return 0
}

// TestSummaryAhead: the summary is written ahead from the early mark
// while the conversation goes on; the request that crosses the trigger
// before it is ready goes uncompacted without waiting for it; once it is
// stored, the next request swaps it in with no summary request of its
// own: one summary for the crossing, the model's.
func TestSummaryAhead(t *testing.T) {
	for _, api := range []API{Anthropic, Chat, Responses} {
		t.Run(string(api), func(t *testing.T) {
			up := newFakeUpstream(t)
			up.window = aheadWindow
			up.gate = make(chan struct{}) // the summary is written only when the test says
			srv, ts := newTestProxy(t, up, aheadConfig(Config{}))
			c := newClient(t, api, ts.URL)
			c.header.Set("X-Session-Id", "ahead-"+string(api))
			c.outBytes = 2000
			i := toEarlyMark(t, []*Server{srv}, up, c, func(int) string { return ts.URL })
			eventually(t, "the summary request upstream", func() bool { return up.summaries.Load() == 1 })
			// Past the trigger with the summary still being written: the
			// requests go as they are, and answer (the summary is held).
			for ; aheadCount(srv, aheadNotReady) == 0; i++ {
				if i > 60 {
					t.Fatal("no request crossed the trigger")
				}
				c.step(i)
				if isSummaryItem(lastModel(t, up).Body) {
					t.Fatalf("step %d was compacted before the summary was written", i)
				}
			}
			if n := aheadCount(srv, aheadStarted); n != 1 {
				t.Errorf("%d summaries started ahead, want 1", n)
			}
			close(up.gate)
			eventually(t, "the pending summary stored", func() bool { return aheadCount(srv, aheadStored) == 1 })
			c.step(i)
			last := lastModel(t, up)
			sum := summaryOf(t, api, last.Body)
			if sum == "" || !strings.Contains(sum, fakeupstream.HandoverMark) {
				t.Fatalf("the request after the summary was stored carries summary %.200q; want the model's", sum)
			}
			if aheadCount(srv, aheadSwapped) != 1 || up.summaries.Load() != 1 {
				t.Errorf("swapped %d, %d summary requests; want the prepared summary swapped in, one summary request",
					aheadCount(srv, aheadSwapped), up.summaries.Load())
			}
			if got := tokensOf(last.Body); got >= aheadThreshold {
				t.Errorf("%d tokens after the swap, not under the trigger %d", got, aheadThreshold)
			}
			for _, p := range pairingProblems(t, api, last.Body) {
				t.Error(p)
			}
			// The conversation goes on under the same compaction.
			c.step(i + 1)
			if s := summaryOf(t, api, lastModel(t, up).Body); s != sum {
				t.Error("the next request lost the swapped-in summary")
			}
		})
	}
}

// TestSummaryAheadWaitsBeforeOverflow: a request that would overflow the
// window without a compaction waits for the summary being written ahead,
// and goes compacted.
func TestSummaryAheadWaitsBeforeOverflow(t *testing.T) {
	up := newFakeUpstream(t)
	up.window = aheadWindow
	up.gate = make(chan struct{})
	srv, ts := newTestProxy(t, up, aheadConfig(Config{}))
	c := newClient(t, Anthropic, ts.URL)
	c.header.Set("X-Session-Id", "ahead-wait")
	c.outBytes = 2000
	i := toEarlyMark(t, []*Server{srv}, up, c, func(int) string { return ts.URL })
	for ; ; i++ {
		if i > 80 {
			t.Fatal("no request waited")
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.step(i)
		}()
		select {
		case <-done:
			if tokensOf(lastModel(t, up).Body) > aheadWindow {
				t.Fatal("a request over the window went upstream")
			}
			continue
		case <-time.After(500 * time.Millisecond):
		}
		// Held: it must be the one that would not fit.
		if n := tokensOf(c.body()); n <= aheadWindow*9/10 {
			t.Fatalf("step %d (%d tokens, far from the window) waits for the summary", i, n)
		}
		close(up.gate)
		<-done
		break
	}
	last := lastModel(t, up)
	if !isSummaryItem(last.Body) || tokensOf(last.Body) > aheadWindow {
		t.Fatalf("the request that waited went with %d tokens, compacted %v", tokensOf(last.Body), isSummaryItem(last.Body))
	}
	// (The kept part grew much since the early mark: its remainder may
	// be summarized too.)
	if aheadCount(srv, aheadWaited) != 1 || aheadCount(srv, aheadSwapped) != 1 || up.summaries.Load() > 2 {
		t.Errorf("waited %d, swapped %d, %d summary requests; want 1, 1 and at most 2",
			aheadCount(srv, aheadWaited), aheadCount(srv, aheadSwapped), up.summaries.Load())
	}
}

// TestSummaryAheadReplicas: two replicas sharing a store (and its locks)
// see the same conversation past its early mark in turn: one writes the
// summary, the other does not; the crossing on the other replica goes
// uncompacted while it is written, and swaps it in once stored.
func TestSummaryAheadReplicas(t *testing.T) {
	up := newFakeUpstream(t)
	up.window = aheadWindow
	up.gate = make(chan struct{})
	st := nopCloser{store.NewMemory(store.MemoryOptions{})}
	a, tsa := newTestProxy(t, up, aheadConfig(Config{Store: st}))
	b, tsb := newTestProxy(t, up, aheadConfig(Config{Store: st}))
	urls := []string{tsa.URL, tsb.URL}
	c := newClient(t, Chat, tsa.URL)
	c.header.Set("X-Session-Id", "ahead-replicas")
	c.outBytes = 2000
	i := toEarlyMark(t, []*Server{a, b}, up, c, func(i int) string { return urls[i%2] })
	eventually(t, "the summary request upstream", func() bool { return up.summaries.Load() == 1 })
	for ; aheadCount(a, aheadNotReady)+aheadCount(b, aheadNotReady) < 2; i++ {
		if i > 60 {
			t.Fatal("the requests over the trigger did not both pass")
		}
		c.base = urls[i%2]
		c.step(i)
	}
	if n := up.summaries.Load(); n != 1 {
		t.Fatalf("%d summary requests from two replicas, want 1", n)
	}
	if aheadCount(a, aheadSkipped)+aheadCount(b, aheadSkipped) == 0 {
		t.Error("the second replica did not stand back")
	}
	close(up.gate)
	eventually(t, "the pending summary stored", func() bool { return aheadCount(a, aheadStored)+aheadCount(b, aheadStored) == 1 })
	for range 2 {
		c.base = urls[i%2]
		c.step(i)
		i++
		if !isSummaryItem(lastModel(t, up).Body) {
			t.Fatalf("replica %d did not swap the summary in", i%2)
		}
	}
	if n := up.summaries.Load(); n != 1 {
		t.Errorf("%d summary requests, want 1", n)
	}
}

// TestSummaryAheadSurvivesRestart: the pending summary lives in the store;
// a proxy started on it after the first one stopped swaps it in.
func TestSummaryAheadSurvivesRestart(t *testing.T) {
	up := newFakeUpstream(t)
	up.window = aheadWindow
	st := nopCloser{store.NewMemory(store.MemoryOptions{})}
	first, ts := newTestProxy(t, up, aheadConfig(Config{Store: st}))
	c := newClient(t, Responses, ts.URL)
	c.outBytes = 2000
	i := toEarlyMark(t, []*Server{first}, up, c, func(int) string { return ts.URL })
	eventually(t, "the pending summary stored", func() bool { return aheadCount(first, aheadStored) == 1 })
	ts.Close()
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	second, ts2 := newTestProxy(t, up, aheadConfig(Config{Store: st}))
	c.base = ts2.URL
	for ; !isSummaryItem(lastModel(t, up).Body); i++ {
		if i > 60 {
			t.Fatal("the restarted proxy never compacted")
		}
		c.step(i)
	}
	if aheadCount(second, aheadSwapped) != 1 || up.summaries.Load() != 1 {
		t.Errorf("after the restart: swapped %d, %d summary requests; want the stored summary swapped in",
			aheadCount(second, aheadSwapped), up.summaries.Load())
	}
	// The summary request was counted once, when it was made.
	second.bg.Wait()
	found := false
	for _, k := range st.Keys() {
		rec, err := st.Get(t.Context(), k)
		if err != nil || len(rec.Checkpoints) == 0 || rec.Last == nil {
			continue // (a session's record holds its compactions alone)
		}
		found = true
		if rec.Pending != nil || rec.Summaries.Requests != 1 || len(rec.Checkpoints[0].SummaryCalls) != 0 {
			t.Errorf("record after the swap: pending %v, %d summary calls counted, checkpoint's %d; want none left, 1, 0",
				rec.Pending != nil, rec.Summaries.Requests, len(rec.Checkpoints[0].SummaryCalls))
		}
	}
	if !found {
		t.Error("no conversation record with a compaction")
	}
}

// TestColdCacheCompaction: a request after the conversation was idle
// longer than the cache lifetime, with a context above half its trigger,
// is compacted (reason idle) once; not when switched off, not before an
// hour when the client marks its cache for an hour.
func TestColdCacheCompaction(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config
		hour  bool // the client marks its cache "ttl":"1h"
		idle  time.Duration
		wantN int // idle compactions
	}{
		{name: "idle past the cache lifetime", idle: 6 * time.Minute, wantN: 1},
		{name: "idle within the cache lifetime", idle: 4 * time.Minute},
		{name: "switched off", cfg: Config{NoColdCompaction: true}, idle: 6 * time.Minute},
		{name: "hour cache, idle 6 minutes", hour: true, idle: 6 * time.Minute},
		{name: "hour cache, idle 61 minutes", hour: true, idle: 61 * time.Minute, wantN: 1},
		{name: "configured lifetime", cfg: Config{CacheTTL: 10 * time.Minute}, idle: 6 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
			clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
			up := newFakeUpstream(t)
			up.window = aheadWindow
			cfg := tt.cfg
			st := store.NewMemory(store.MemoryOptions{Now: clock})
			cfg.Summarizer, cfg.Now, cfg.Store = SummarizerExtractive, clock, st
			srv, ts := newTestProxy(t, up, aheadConfig(cfg))
			stored := func(n int) { lastStored(t, st, n) }
			c := newClient(t, Anthropic, ts.URL)
			c.header.Set("X-Session-Id", "cold")
			c.outBytes = 2000
			if tt.hour {
				c.items[0] = `{"role":"user","content":[{"type":"text","text":"Count the lines of every file, one step at a time.","cache_control":{"type":"ephemeral","ttl": "1h"}}]}`
			}
			idle := func() int {
				return int(testutil.ToFloat64(srv.metrics.compactionsTotal.WithLabelValues(string(compact.ReasonIdle), summarizerExtractive)))
			}
			i := 1
			for ; tokensOf(c.body()) < aheadThreshold*6/10; i++ {
				n := len(c.body())
				c.step(i)
				stored(n)
			}
			if idle() != 0 {
				t.Fatal("compacted for idleness before any idle time")
			}
			mu.Lock()
			now = now.Add(tt.idle)
			mu.Unlock()
			n := len(c.body())
			c.step(i)
			stored(n)
			if got := idle(); got != tt.wantN {
				t.Fatalf("%d idle compactions after %v idle, want %d", got, tt.idle, tt.wantN)
			}
			if compacted := isSummaryItem(lastModel(t, up).Body); compacted != (tt.wantN == 1) {
				t.Errorf("the request after the idle time compacted: %v", compacted)
			}
			c.step(i + 1)
			if got := idle(); got != tt.wantN {
				t.Errorf("%d idle compactions after a request right after, want still %d", got, tt.wantN)
			}
		})
	}
}

// TestColdCacheUsesPreparedSummary: a conversation idle past the cache
// lifetime with a summary written ahead is compacted with it (reason
// idle), with no summary request of its own.
func TestColdCacheUsesPreparedSummary(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	up := newFakeUpstream(t)
	up.window = aheadWindow
	st := store.NewMemory(store.MemoryOptions{Now: clock})
	srv, ts := newTestProxy(t, up, aheadConfig(Config{Now: clock, Store: st}))
	c := newClient(t, Chat, ts.URL)
	c.outBytes = 2000
	i := toEarlyMark(t, []*Server{srv}, up, c, func(int) string { return ts.URL })
	eventually(t, "the pending summary stored", func() bool { return aheadCount(srv, aheadStored) == 1 })
	if isSummaryItem(lastModel(t, up).Body) {
		t.Fatal("compacted before the idle time")
	}
	n := len(c.body())
	c.step(i)
	lastStored(t, st, n)
	mu.Lock()
	now = now.Add(time.Hour)
	mu.Unlock()
	c.step(i + 1)
	idle := int(testutil.ToFloat64(srv.metrics.compactionsTotal.WithLabelValues(string(compact.ReasonIdle), summarizerModel)))
	if !isSummaryItem(lastModel(t, up).Body) || idle != 1 || aheadCount(srv, aheadSwapped) != 1 || up.summaries.Load() != 1 {
		t.Errorf("after an hour idle: compacted %v, %d idle compactions, %d swapped, %d summary requests; want the prepared summary swapped in for idleness",
			isSummaryItem(lastModel(t, up).Body), idle, aheadCount(srv, aheadSwapped), up.summaries.Load())
	}
}

// lastStored waits until the last call of the step just answered (its body
// of n bytes) is in st: the accounting is written after the answer, maybe
// after the client has read it.
func lastStored(t *testing.T, st *store.Memory, n int) {
	t.Helper()
	eventually(t, "the last call stored", func() bool {
		for _, k := range st.Keys() {
			if rec, err := st.Get(t.Context(), k); err == nil && rec.Last != nil && rec.Last.Bytes == n {
				return true
			}
		}
		return false
	})
}

// TestSummaryAheadEarlyMark: a configured early mark below the default
// starts the summary there, also for requests that go upstream while they
// are read.
func TestSummaryAheadEarlyMark(t *testing.T) {
	up := newFakeUpstream(t)
	up.window = aheadWindow
	srv, ts := newTestProxy(t, up, aheadConfig(Config{AheadMark: 0.5}))
	c := newClient(t, Anthropic, ts.URL)
	c.header.Set("X-Session-Id", "ahead-early") // (streamed far from the trigger)
	c.outBytes = 2000
	toMark(t, 0.5, []*Server{srv}, up, c, func(int) string { return ts.URL })
}

// memoryOf returns the memory store srv keeps its records in, nil for
// another store.
func memoryOf(srv *Server) *store.Memory {
	switch st := srv.store.(type) {
	case *store.Memory:
		return st
	case nopCloser:
		return st.Memory
	}
	return nil
}

// slowPut is a memory store whose whole-record writes wait until put is
// closed, so that a last call written meanwhile lands between a
// read-modify-write's read and its write.
type slowPut struct {
	*store.Memory
	reading chan struct{} // closed when a Put starts waiting
	put     chan struct{}
}

func (s *slowPut) Put(ctx context.Context, key string, rec *store.Record) error {
	close(s.reading)
	<-s.put
	return s.Memory.Put(ctx, key, rec)
}

// TestLastCallNotUndone: the record written by a read-modify-write on
// this replica (a summary written ahead, stored in the background) does
// not put back the last call it read when a newer one was written
// meanwhile.
func TestLastCallNotUndone(t *testing.T) {
	st := &slowPut{Memory: store.NewMemory(store.MemoryOptions{}), reading: make(chan struct{}), put: make(chan struct{})}
	ctx := context.Background()
	if err := st.Memory.Put(ctx, "k", &store.Record{Last: &store.LastCall{Units: 1}}); err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{AnthropicUpstream: "http://127.0.0.1:1", Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	done := make(chan error)
	go func() {
		done <- srv.update(ctx, "k", func(rec *store.Record) bool { rec.Pending = &store.Pending{Covered: 1}; return true })
	}()
	<-st.reading // the update has read the record with the old last call
	wrote := make(chan error)
	go func() { wrote <- srv.putLast(ctx, st, "k", &store.LastCall{Units: 2}) }()
	select {
	case err := <-wrote:
		t.Fatalf("the last call was written while the record was being rewritten (err %v)", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(st.put)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	rec, err := st.Memory.Get(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Last == nil || rec.Last.Units != 2 || rec.Pending == nil {
		t.Errorf("record after both writes: last %+v, pending %v; want the newer last call and the pending summary", rec.Last, rec.Pending != nil)
	}
}
