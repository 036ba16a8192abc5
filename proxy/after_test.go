package proxy

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// opsStore records the calls made on a MemStore, holds every write for
// hold, and implements LastStore when last is set.
type opsStore struct {
	*MemStore
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

func (o *opsStore) Get(ctx context.Context, key string) (*Record, error) {
	o.note("get")
	return o.MemStore.Get(ctx, key)
}

func (o *opsStore) Put(ctx context.Context, key string, rec *Record) error {
	o.note("put")
	time.Sleep(o.hold)
	err := o.MemStore.Put(ctx, key, rec)
	o.note("put-done")
	return err
}

// lastOpsStore is an opsStore that can write the last call alone.
type lastOpsStore struct{ *opsStore }

func (o lastOpsStore) PutLast(ctx context.Context, key string, last *LastCall) error {
	o.note("putlast")
	rec, err := o.MemStore.Get(ctx, key)
	if errors.Is(err, ErrNotFound) {
		rec, err = &Record{}, nil
	}
	if err != nil {
		return err
	}
	rec.Last = last
	return o.MemStore.Put(ctx, key, rec)
}

// TestAnswerDoesNotWaitForTheStore: the client's answer ends before the
// usage is written, and the next turn of the conversation still reads the
// record only once that write is done.
func TestAnswerDoesNotWaitForTheStore(t *testing.T) {
	up := newFakeUpstream(t)
	st := &opsStore{MemStore: NewMemStore(MemStoreOptions{}), hold: 100 * time.Millisecond}
	srv, ts := newTestProxy(t, up, Config{Window: 200000, Summarizer: SummarizerExtractive, Store: st})
	c := newClient(t, Chat, ts.URL)
	c.header.Set("X-Session-Id", "after-the-answer")
	for i := 1; i <= 4; i++ {
		c.step(i)
		st.note("answered")
	}
	srv.bg.Wait()
	ops := st.list()
	t.Logf("store calls: %s", strings.Join(ops, " "))
	writing := false
	answers, early := 0, 0
	for _, op := range ops {
		switch op {
		case "put":
			writing = true
		case "put-done":
			writing = false
		case "get":
			if writing {
				t.Errorf("the record was read while the previous turn's write was in flight: %s", strings.Join(ops, " "))
			}
		case "answered":
			answers++
			if writing {
				early++
			}
		}
	}
	if answers != 4 || early < 3 {
		t.Errorf("%d of %d answers ended while their usage was being written; want the answer first every time (store calls %s)", early, answers, strings.Join(ops, " "))
	}
}

// TestUsageIsOneWrite: far from the trigger, a request of a known
// conversation costs one read and one write of the last call on a store
// that implements LastStore, never a read-modify-write of the record.
func TestUsageIsOneWrite(t *testing.T) {
	up := newFakeUpstream(t)
	st := lastOpsStore{&opsStore{MemStore: NewMemStore(MemStoreOptions{})}}
	srv, ts := newTestProxy(t, up, Config{Window: 200000, Summarizer: SummarizerExtractive, Store: st})
	c := newClient(t, Anthropic, ts.URL)
	c.header.Set("X-Claude-Code-Session-Id", "one-write")
	for i := 1; i <= 3; i++ {
		c.step(i)
	}
	srv.bg.Wait()
	before := len(st.list())
	for i := 4; i <= 8; i++ {
		c.step(i)
	}
	srv.bg.Wait()
	count := map[string]int{}
	for _, op := range st.list()[before:] {
		count[op]++
	}
	if count["get"] != 5 || count["putlast"] != 5 || count["put"] != 0 {
		t.Errorf("5 requests made %v store calls, want 5 get and 5 putlast", count)
	}
	rec, err := st.MemStore.Get(context.Background(), identityKeyOf(t, srv, c))
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
