package proxy

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/fakeupstream"
	"github.com/compactkit/compact/proxy/store"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
)

// TestReplicasCompactOnce: three replicas sharing one store receive the
// same conversation over its trigger at the same moment. Exactly one
// writes the summary (one summary request reaches the model); the other
// two wait for it, and all three send the same compacted bytes.
func TestReplicasCompactOnce(t *testing.T) {
	up := newFakeUpstream(t)
	// Build a history directly against the upstream.
	c := newClient(t, Chat, up.srv.URL)
	c.header.Set("X-Session-Id", "shared-1")
	for i := 1; i <= 8; i++ {
		c.step(i)
	}
	body := c.body()
	up.mu.Lock()
	up.reqs = nil
	up.mu.Unlock()
	up.gate = make(chan struct{})

	st := store.NewMemory(store.MemoryOptions{})
	var replicas []*Server
	var urls []string
	for i := 0; i < 3; i++ {
		srv, err := New(Config{OpenAIUpstream: up.srv.URL, Window: 12000, Policy: compact.Reserve{Tokens: 3000},
			Store: st, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(srv)
		t.Cleanup(ts.Close)
		replicas = append(replicas, srv)
		urls = append(urls, ts.URL)
	}
	var wg sync.WaitGroup
	for _, u := range urls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", u+"/v1/chat/completions", bytes.NewReader(body))
			req.Header = c.header.Clone()
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("status %d", resp.StatusCode)
			}
		}()
	}
	// Hold the one summary until the two other replicas are waiting.
	waiting := func() float64 {
		var n float64
		for _, r := range replicas {
			n += testutil.ToFloat64(r.metrics.lockWaitsTotal)
		}
		return n
	}
	deadline := time.Now().Add(10 * time.Second)
	for (up.summaries.Load() < 1 || waiting() < 2) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := waiting(); got != 2 {
		t.Errorf("%v replicas waited for another's compaction, want 2", got)
	}
	close(up.gate)
	wg.Wait()
	if n := up.summaries.Load(); n != 1 {
		t.Errorf("%d summary requests reached the model, want exactly 1", n)
	}
	// One compaction, counted once: by the replica that wrote it.
	var counted float64
	for _, r := range replicas {
		counted += sumOf(r.metrics.compactionsTotal)
	}
	if counted != 1 {
		t.Errorf("the replicas counted %v compactions, want 1", counted)
	}
	var summaries []string
	for _, r := range up.modelRequests() {
		for _, it := range listOf(t, Chat, r.Body) {
			if isSummaryItem(it) {
				summaries = append(summaries, string(it))
			}
		}
	}
	if len(summaries) != 3 {
		t.Fatalf("%d compacted requests upstream, want 3", len(summaries))
	}
	if summaries[0] != summaries[1] || summaries[1] != summaries[2] {
		t.Error("the replicas sent different summaries")
	}
	if !strings.Contains(summaries[0], fakeupstream.HandoverMark) {
		t.Error("the model's summary was not used")
	}
}

// lockedByAnother sets up a conversation due for compaction whose lock
// another replica holds: a Chat client of the given session that has run
// 8 steps straight to the upstream, a replica on st that waits lockWait
// for another's compaction, and the lock on that conversation, taken in
// st as the other replica would take it.
func lockedByAnother(t *testing.T, st *store.Memory, session string, lockWait time.Duration) (*fakeUpstream, *client, *httptest.Server, store.Lock) {
	t.Helper()
	up := newFakeUpstream(t)
	c := newClient(t, Chat, up.srv.URL)
	c.header.Set("X-Session-Id", session)
	for i := 1; i <= 8; i++ {
		c.step(i)
	}
	srv, err := New(Config{OpenAIUpstream: up.srv.URL, Window: 12000, Policy: compact.Reserve{Tokens: 3000}, Store: st,
		Summarizer: SummarizerExtractive, LockWait: lockWait, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	id := identify(Chat, srv.upstreamFor(Chat).String(), c.header, &Parsed{})
	l, err := st.TryLock(t.Context(), lockKey(id.key), DefaultLockTTL)
	if err != nil || l == nil {
		t.Fatalf("taking the lock: %v %v", l, err)
	}
	return up, c, ts, l
}

// TestLockHeldByDeadReplica: a lock left by a replica that died expires,
// and the next replica compacts.
func TestLockHeldByDeadReplica(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	st := store.NewMemory(store.MemoryOptions{Now: clock})
	// The dead replica's lock on this conversation.
	up, c, ts, _ := lockedByAnother(t, st, "dead-1", 100*time.Millisecond)
	send := func() []byte {
		req, _ := http.NewRequest("POST", ts.URL+"/v1/chat/completions", bytes.NewReader(c.body()))
		req.Header = c.header.Clone()
		roundTrip(t, req)
		return lastOf(t, up.modelRequests()).Body
	}
	if isSummaryItem(send()) {
		t.Fatal("compacted while another replica held the lock")
	}
	mu.Lock()
	now = now.Add(DefaultLockTTL + time.Second)
	mu.Unlock()
	if !isSummaryItem(send()) {
		t.Error("not compacted after the dead replica's lock expired")
	}
}

// TestCloseReleasesLocks: a server closed while a summary is still being
// written frees the conversation's lock at once.
func TestCloseReleasesLocks(t *testing.T) {
	st := store.NewMemory(store.MemoryOptions{})
	srv, err := New(Config{Store: nopCloser{st}})
	if err != nil {
		t.Fatal(err)
	}
	lock, err := st.TryLock(t.Context(), "l:abc", DefaultLockTTL)
	if err != nil || lock == nil {
		t.Fatal(err)
	}
	srv.holdLock(t.Context(), lock) // a summary still running
	srv.Close()
	if again, err := st.TryLock(t.Context(), "l:abc", DefaultLockTTL); err != nil || again == nil {
		t.Errorf("lock still held after Close: %v %v", again, err)
	}
}

// nopCloser keeps a store open when the server closes it.
type nopCloser struct{ *store.Memory }

func (nopCloser) Close() error { return nil }

// TestLockLetGoWithoutCompaction: a replica waiting for another one's
// compaction takes over as soon as the holder lets the lock go without
// storing one (its write failed, say): it writes the compaction itself
// instead of waiting out LockWait and passing the request through.
func TestLockLetGoWithoutCompaction(t *testing.T) {
	st := store.NewMemory(store.MemoryOptions{})
	// The other replica holds the lock, then lets it go with nothing
	// stored.
	up, c, ts, l := lockedByAnother(t, st, "let-go-1", time.Hour)
	go func() {
		time.Sleep(300 * time.Millisecond)
		l.Release(context.Background())
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/v1/chat/completions", bytes.NewReader(c.body()))
	req.Header = c.header.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("no answer while the lock was let go (the replica waited out LockWait): %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if !isSummaryItem(lastOf(t, up.modelRequests()).Body) {
		t.Error("not compacted after the holder let the lock go")
	}
}

// sumOf adds up every series of a counter vector (none is 0).
func sumOf(v *prometheus.CounterVec) float64 {
	ch := make(chan prometheus.Metric, 64)
	go func() { v.Collect(ch); close(ch) }()
	var n float64
	for m := range ch {
		var pb dto.Metric
		if m.Write(&pb) == nil && pb.Counter != nil {
			n += pb.Counter.GetValue()
		}
	}
	return n
}
