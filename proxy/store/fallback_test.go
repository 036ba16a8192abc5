package store_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compactkit/compact/proxy/store"
)

// flaky is a Memory that fails every call while down is set.
type flaky struct {
	*store.Memory
	down atomic.Bool
}

var errDown = errors.New("store: connection refused")

func (f *flaky) Get(ctx context.Context, key string) (*store.Record, error) {
	if f.down.Load() {
		return nil, errDown
	}
	return f.Memory.Get(ctx, key)
}

func (f *flaky) Put(ctx context.Context, key string, rec *store.Record) error {
	if f.down.Load() {
		return errDown
	}
	return f.Memory.Put(ctx, key, rec)
}

func (f *flaky) TryLock(ctx context.Context, key string, ttl time.Duration) (store.Lock, error) {
	if f.down.Load() {
		return nil, errDown
	}
	return f.Memory.TryLock(ctx, key, ttl)
}

func (f *flaky) List(ctx context.Context, q store.ListQuery) (store.ListPage, error) {
	if f.down.Load() {
		return store.ListPage{}, errDown
	}
	return f.Memory.List(ctx, q)
}

// A Fallback lists the shared store, or what this replica kept while the
// shared store is down.
func TestFallbackLists(t *testing.T) {
	shared := &flaky{Memory: store.NewMemory(store.MemoryOptions{})}
	var reports atomic.Int32
	f := store.NewFallback(shared, time.Now, func(error) { reports.Add(1) })
	ctx := context.Background()
	if err := f.Put(ctx, "c:shared", &store.Record{}); err != nil {
		t.Fatal(err)
	}
	shared.down.Store(true)
	if err := f.Put(ctx, "c:local", &store.Record{}); err != nil {
		t.Fatal(err)
	}
	page, err := f.List(ctx, store.ListQuery{Prefix: "c:"})
	if err != nil || len(page.Records) != 1 || page.Records[0].Key != "c:local" || reports.Load() < 2 {
		t.Fatalf("List while down = %+v %v (%d failures reported); want the local record", page, err, reports.Load())
	}
	shared.down.Store(false)
	if page, err := f.List(ctx, store.ListQuery{Prefix: "c:"}); err != nil || len(page.Records) != 1 || page.Records[0].Key != "c:shared" {
		t.Fatalf("List once up = %+v %v; want the shared store's", page, err)
	}
}

// TestFallbackWritesBack: what a replica wrote while the shared store was
// down is served from memory meanwhile and written to the shared store
// once it answers again; every failure is reported.
func TestFallbackWritesBack(t *testing.T) {
	shared := &flaky{Memory: store.NewMemory(store.MemoryOptions{})}
	var reports atomic.Int32
	f := store.NewFallback(shared, time.Now, func(error) { reports.Add(1) })
	ctx := context.Background()
	shared.down.Store(true)
	rec := &store.Record{Checkpoints: []store.Checkpoint{{Covered: 4, Chain: "abc"}}}
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
	back, err := shared.Memory.Get(ctx, "c:k")
	if err != nil || back.Checkpoints[0].Chain != "abc" {
		t.Errorf("not written back to the shared store: %+v %v", back, err)
	}
}
