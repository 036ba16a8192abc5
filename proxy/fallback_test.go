package proxy

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/proxy/store"
)

// full is a store.Memory that answers reads but refuses every write, as a
// Redis at its maxmemory with the noeviction policy does.
type full struct{ *store.Memory }

var errOOM = errors.New("store: OOM command not allowed when used memory > 'maxmemory'")

func (f full) Put(context.Context, string, *store.Record) error { return errOOM }

func (f full) PutLast(context.Context, string, *store.LastCall) error { return errOOM }

func (f full) TryLock(ctx context.Context, key string, ttl time.Duration) (store.Lock, error) {
	return nil, errOOM
}

// TestFallbackWhenWritesFail: a shared store that reads but refuses writes
// is a failed store: the compaction is kept on this replica and applied
// to the next requests, so the conversation is summarized as often as
// with a healthy store, not on every turn.
func TestFallbackWhenWritesFail(t *testing.T) {
	run := func(st store.Store) (summaries int32, rewritten int) {
		up := newFakeUpstream(t)
		_, ts := newTestProxy(t, up, Config{Window: 6000, Policy: compact.Reserve{Tokens: 1000}, Store: st, LocalFallback: true})
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
	wantSum, wantRew := run(store.NewMemory(store.MemoryOptions{}))
	gotSum, gotRew := run(full{store.NewMemory(store.MemoryOptions{})})
	t.Logf("healthy store: %d summaries, %d requests rewritten; full store: %d, %d", wantSum, wantRew, gotSum, gotRew)
	if wantSum == 0 {
		t.Fatal("the conversation never reached its trigger")
	}
	if gotSum != wantSum || gotRew != wantRew {
		t.Errorf("full store: %d summaries and %d requests rewritten, want %d and %d as with a healthy store", gotSum, gotRew, wantSum, wantRew)
	}
}
