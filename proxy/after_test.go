package proxy

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compactkit/compact/proxy/store"
)

// opsStore records the calls made on a store.Memory, holds every write for
// hold, and implements LastStore when last is set.
type opsStore struct {
	m    *store.Memory
	hold time.Duration
	mu   sync.Mutex
	ops  []string
}

func (o *opsStore) note(op string) {
	o.mu.Lock()
	o.ops = append(o.ops, op)
	o.mu.Unlock()
}

func (o *opsStore) list() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.ops...)
}

func (o *opsStore) Get(ctx context.Context, key string) (*store.Record, error) {
	o.note("get")
	return o.m.Get(ctx, key)
}

func (o *opsStore) Put(ctx context.Context, key string, rec *store.Record) error {
	o.note("put")
	time.Sleep(o.hold)
	err := o.m.Put(ctx, key, rec)
	o.note("put-done")
	return err
}

func (o *opsStore) Close() error { return o.m.Close() }

// lastOpsStore is an opsStore that can write the last call alone.
type lastOpsStore struct{ *opsStore }

func (o lastOpsStore) PutLast(ctx context.Context, key string, last *store.LastCall) error {
	o.note("putlast")
	return o.m.PutLast(ctx, key, last)
}

// TestAnswerDoesNotWaitForTheStore: the client's answer ends before the
// usage is written, and the next turn of the conversation still reads the
// record only once that write is done.
func TestAnswerDoesNotWaitForTheStore(t *testing.T) {
	up := newFakeUpstream(t)
	st := &opsStore{m: store.NewMemory(store.MemoryOptions{}), hold: 250 * time.Millisecond}
	srv, ts := newTestProxy(t, up, Config{Window: 200000, Summarizer: SummarizerExtractive, Store: st})
	c := newClient(t, Chat, ts.URL)
	c.header.Set("X-Session-Id", "after-the-answer")
	for i := 1; i <= 4; i++ {
		c.step(i)
		st.note("answered")
	}
	ts.Close() // waits for the handlers
	srv.bg.Wait()
	ops := st.list()
	t.Logf("store calls: %s", strings.Join(ops, " "))
	writing := false
	answers, done := 0, 0
	for _, op := range ops {
		switch op {
		case "put":
			writing = true
		case "put-done":
			writing = false
			done++
		case "get":
			if writing {
				t.Errorf("the record was read while the previous turn's write was in flight: %s", strings.Join(ops, " "))
			}
		case "answered":
			answers++
			if done >= answers {
				t.Errorf("answer %d came after its usage was written: %s", answers, strings.Join(ops, " "))
			}
		}
	}
	if answers != 4 || done != 4 {
		t.Errorf("%d answers, %d writes; want 4 of each (store calls %s)", answers, done, strings.Join(ops, " "))
	}
}

// TestUsageIsOneWrite: far from the trigger, a request of a known
// conversation costs one write of the last call on a store that
// implements LastStore, never a read-modify-write of the record, and no
// read before it goes upstream.
func TestUsageIsOneWrite(t *testing.T) {
	up := newFakeUpstream(t)
	st := lastOpsStore{&opsStore{m: store.NewMemory(store.MemoryOptions{})}}
	srv, ts := newTestProxy(t, up, Config{Window: 200000, Summarizer: SummarizerExtractive, Store: st})
	c := newClient(t, Anthropic, ts.URL)
	c.header.Set("X-Claude-Code-Session-Id", "one-write")
	for i := 1; i <= 8; i++ {
		c.step(i)
		// The usage is written after the handler returns, which is after
		// the client has the answer's last byte; a turn sent in between
		// finds no pending work yet and reads the record, legitimately.
		// Wait for each turn's write, so the count below is exact.
		waitWrites(t, st.opsStore, i)
		srv.bg.Wait() // and for the rest of that turn's work
	}
	ts.Close() // waits for the handlers
	srv.bg.Wait()
	count := map[string]int{}
	for _, op := range st.list() {
		count[op]++
	}
	// The first request is read in full (three reads: is it streamable,
	// its record, then its session's compaction under another credential,
	// since it has no record) and its usage stored with a
	// read-modify-write; each of the next seven costs one write of the
	// last call and no read (the replica knows the conversation has no
	// compaction).
	want := map[string]int{"get": 4, "put": 1, "put-done": 1, "putlast": 7}
	if fmt.Sprint(count) != fmt.Sprint(want) {
		t.Errorf("8 requests made %v store calls, want %v", count, want)
	}
	rec, err := st.m.Get(context.Background(), identityKeyOf(t, srv, c))
	if err != nil || rec.Last == nil || rec.Last.Usage.Input == 0 || rec.Last.Threshold == 0 {
		t.Errorf("the last call after the light requests: %+v, %v", rec, err)
	}
}

// identityKeyOf is the store key of c's conversation.
func identityKeyOf(t *testing.T, srv *Server, c *client) string {
	t.Helper()
	id, ok := identifyByHeader(c.api, srv.upstreamFor(c.api).String(), c.header)
	if !ok {
		t.Fatal("the client sends no session header")
	}
	return id.key
}

// waitWrites waits until the store has finished n writes of usage (a
// record put or a last-call put), failing the test after 5 s.
func waitWrites(t *testing.T, st *opsStore, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		done := 0
		for _, op := range st.list() {
			if op == "put-done" || op == "putlast" {
				done++
			}
		}
		if done >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d usage writes after 5 s, want %d: %s", done, n, strings.Join(st.list(), " "))
		}
		time.Sleep(time.Millisecond)
	}
}
