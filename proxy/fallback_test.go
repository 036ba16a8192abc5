package proxy

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compactkit/compact"
)

// flaky is a MemStore that fails every call while down is set.
type flaky struct {
	*MemStore
	down atomic.Bool
}

var errDown = errors.New("store: connection refused")

func (f *flaky) Get(ctx context.Context, key string) (*Record, error) {
	if f.down.Load() {
		return nil, errDown
	}
	return f.MemStore.Get(ctx, key)
}

func (f *flaky) Put(ctx context.Context, key string, rec *Record) error {
	if f.down.Load() {
		return errDown
	}
	return f.MemStore.Put(ctx, key, rec)
}

func (f *flaky) TryLock(ctx context.Context, key string, ttl time.Duration) (Lock, error) {
	if f.down.Load() {
		return nil, errDown
	}
	return f.MemStore.TryLock(ctx, key, ttl)
}

// TestFallbackWritesBack: what a replica wrote while the shared store was
// down is served from memory meanwhile and written to the shared store
// once it answers again; every failure is reported.
func TestFallbackWritesBack(t *testing.T) {
	shared := &flaky{MemStore: NewMemStore(MemStoreOptions{})}
	var reports atomic.Int32
	f := newFallbackStore(shared, time.Now, func(error) { reports.Add(1) })
	ctx := context.Background()
	shared.down.Store(true)
	rec := &Record{Checkpoints: []Checkpoint{{Covered: 4, Chain: "abc"}}}
	if err := f.Put(ctx, "c:k", rec); err != nil {
		t.Fatalf("Put while down: %v", err)
	}
	got, err := f.Get(ctx, "c:k")
	if err != nil || got.Checkpoints[0].Covered != 4 {
		t.Fatalf("Get while down: %+v %v", got, err)
	}
	if l, err := f.TryLock(ctx, "l:k", time.Minute); err != nil || l == nil {
		t.Fatalf("local lock while down: %v %v", l, err)
	}
	if reports.Load() < 3 {
		t.Errorf("%d failures reported, want every one", reports.Load())
	}
	shared.down.Store(false)
	if _, err := f.Get(ctx, "c:k"); err != nil {
		t.Fatal(err)
	}
	back, err := shared.MemStore.Get(ctx, "c:k")
	if err != nil || back.Checkpoints[0].Chain != "abc" {
		t.Errorf("not written back to the shared store: %+v %v", back, err)
	}
}

// full is a MemStore that answers reads but refuses every write, as a
// Redis at its maxmemory with the noeviction policy does.
type full struct{ *MemStore }

var errOOM = errors.New("store: OOM command not allowed when used memory > 'maxmemory'")

func (f full) Put(context.Context, string, *Record) error { return errOOM }

func (f full) PutLast(context.Context, string, *LastCall) error { return errOOM }

func (f full) TryLock(ctx context.Context, key string, ttl time.Duration) (Lock, error) {
	return nil, errOOM
}

// TestFallbackWhenWritesFail: a shared store that reads but refuses writes
// is a failed store: the compaction is kept on this replica and applied
// to the next requests, so the conversation is summarized as often as
// with a healthy store, not on every turn.
func TestFallbackWhenWritesFail(t *testing.T) {
	run := func(store Store) (summaries int32, rewritten int) {
		up := newFakeUpstream(t)
		_, ts := newTestProxy(t, up, Config{Window: 6000, Policy: compact.Reserve{Tokens: 1000}, Store: store, LocalFallback: true})
		c := newClient(t, Chat, ts.URL)
		c.header.Set("X-Session-Id", "full-1")
		for i := 1; i <= 10; i++ {
			c.step(i)
		}
		for _, r := range up.modelRequests() {
			if l := listOf(t, Chat, r.Body); len(l) > 1 && isSummaryItem(l[1]) {
				rewritten++
			}
		}
		return up.summaries.Load(), rewritten
	}
	wantSum, wantRew := run(NewMemStore(MemStoreOptions{}))
	gotSum, gotRew := run(full{NewMemStore(MemStoreOptions{})})
	t.Logf("healthy store: %d summaries, %d requests rewritten; full store: %d, %d", wantSum, wantRew, gotSum, gotRew)
	if wantSum == 0 {
		t.Fatal("the conversation never reached its trigger")
	}
	if gotSum != wantSum || gotRew != wantRew {
		t.Errorf("full store: %d summaries and %d requests rewritten, want %d and %d as with a healthy store", gotSum, gotRew, wantSum, wantRew)
	}
}
