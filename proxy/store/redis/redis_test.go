package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/proxy/store"
	"github.com/compactkit/compact/proxy/store/storetest"
)

// TestConformance runs the stores' shared tests. Expiry and eviction live
// in the Redis server (EXPIRE, maxmemory), not in the client, so the sets
// that drive them with a fake clock (RunTTL, RunLRU) do not apply;
// TestRecordsExpire checks the expiry instead.
func TestConformance(t *testing.T) {
	srv := startServer(t)
	n := 0
	storetest.RunBasic(t, func(t *testing.T, cfg storetest.Config) store.Store {
		n++
		st, err := Open(context.Background(), srv.url(), Options{Prefix: fmt.Sprintf("t%d:", n)})
		if err != nil {
			t.Fatal(err)
		}
		return st
	})
}

// TestAuth runs the shared tests of record authentication; the raw
// access reaches the value that holds the checkpoints.
func TestAuth(t *testing.T) {
	srv := startServer(t)
	c := rawClient(t, srv)
	n := 0
	storetest.RunAuth(t, func(t *testing.T, cfg storetest.Config) store.Store {
		n++
		st, err := Open(context.Background(), srv.url(), Options{Prefix: fmt.Sprintf("a%d:", n), RecordKey: cfg.RecordKey})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}, func(t *testing.T, st store.Store) storetest.Raw {
		prefix := st.(*Store).opts.Prefix
		ctx := context.Background()
		return storetest.Raw{
			Get: func(key string) []byte {
				v, err := c.Get(ctx, prefix+key).Bytes()
				if err != nil && !errors.Is(err, goredis.Nil) {
					t.Fatal(err)
				}
				return v
			},
			Put: func(key string, val []byte) {
				if err := c.Set(ctx, prefix+key, val, 0).Err(); err != nil {
					t.Fatal(err)
				}
			},
		}
	})
}

func TestRecordsExpire(t *testing.T) {
	srv := startServer(t)
	st := srv.open(t, Options{TTL: time.Hour})
	ctx := context.Background()
	if err := st.Put(ctx, "c:abc", &store.Record{Checkpoints: []store.Checkpoint{{Covered: 3, Chain: "x"}}}); err != nil {
		t.Fatal(err)
	}
	ttl, err := st.c.PTTL(ctx, DefaultPrefix+"c:abc").Result()
	if err != nil {
		t.Fatal(err)
	}
	if ttl <= 59*time.Minute || ttl > time.Hour {
		t.Errorf("record expiry %v, want about 1h", ttl)
	}
	rec, err := st.Get(ctx, "c:abc")
	if err != nil || len(rec.Checkpoints) != 1 || rec.Checkpoints[0].Covered != 3 {
		t.Fatalf("round trip: %+v %v", rec, err)
	}
	if _, err := st.Get(ctx, "c:none"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("missing key: %v, want ErrNotFound", err)
	}
	// Writing the last call alone renews the record's expiry too.
	st.c.PExpire(ctx, DefaultPrefix+"c:abc", time.Minute)
	if err := st.PutLast(ctx, "c:abc", &store.LastCall{Bytes: 10}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{DefaultPrefix + "c:abc", DefaultPrefix + "last:c:abc"} {
		if ttl, err := st.c.PTTL(ctx, k).Result(); err != nil || ttl <= 59*time.Minute || ttl > time.Hour {
			t.Errorf("%s: expiry %v (%v) after PutLast, want about 1h", k, ttl, err)
		}
	}
}

// TestStoredForm pins what a Put leaves on the server, so that records
// written by earlier versions still load: the record without its last
// call under Prefix+key, sealed under the key, and the last call's JSON
// under Prefix+"last:"+key, sealed under that name.
func TestStoredForm(t *testing.T) {
	srv := startServer(t)
	sealKey := []byte("0123456789abcdef0123456789abcdef")
	st := srv.open(t, Options{RecordKey: sealKey})
	ctx := context.Background()
	// The summaries' tally lives with the checkpoints, the requests'
	// totals with the last call (rewritten after every answer).
	body := store.Record{Checkpoints: []store.Checkpoint{{Covered: 3, Chain: "x", Summary: "s", Duration: time.Second, Ahead: true}}, Updated: time.Unix(1700000000, 0).UTC(),
		Compactions: 3,
		Summaries:   store.Tally{Requests: 1, Input: 10, CacheRead: 900, Output: 50, Cost: 0.01},
		Pending:     &store.Pending{Covered: 2, Chain: "p", Units: 5, UnitsChain: "q", Prepared: compact.Prepared{FirstKeptID: "u2.0", Summary: "ahead"}}}
	// The timeline and the agent ride with the last call.
	last := &store.LastCall{Units: 2, Chain: "y", Bytes: 10, Totals: store.Tally{Requests: 3, CacheRead: 2000, TokensSaved: 700, Unpriced: 3}, At: time.Unix(1700000060, 0).UTC(),
		Agent: "codex_cli_rs/0.46.0", IDSource: "header session_id", Recent: []store.Mark{{At: time.Unix(1700000060, 0).UTC(), Prompt: 900, CacheRead: 800, Client: 1200, Applied: true}}}
	rec := body
	rec.Last = last
	if err := st.Put(ctx, "c:f", &rec); err != nil {
		t.Fatal(err)
	}
	bodyJSON, _ := json.Marshal(&body)
	lastJSON, _ := json.Marshal(last)
	for k, want := range map[string][]byte{
		DefaultPrefix + "c:f":      store.SealRecord(sealKey, "c:f", bodyJSON),
		DefaultPrefix + "last:c:f": store.SealRecord(sealKey, "last:c:f", lastJSON),
	} {
		got, err := st.c.Get(ctx, k).Bytes()
		if err != nil || string(got) != string(want) {
			t.Errorf("%s holds %q (%v), want %q", k, got, err, want)
		}
	}
	got, err := st.Get(ctx, "c:f")
	if err != nil || got.Last == nil || !reflect.DeepEqual(got.Last, last) || len(got.Checkpoints) != 1 || got.Checkpoints[0].Summary != "s" || got.Summaries != body.Summaries ||
		got.Compactions != 3 || got.Checkpoints[0].Duration != time.Second || !got.Checkpoints[0].Ahead ||
		got.Pending == nil || got.Pending.Prepared.Summary != "ahead" || got.Pending.Covered != 2 {
		t.Errorf("read back %+v (%v)", got, err)
	}
	// Values written before the tallies existed load with empty ones.
	old := store.SealRecord(sealKey, "last:c:old", []byte(`{"units":2,"chain":"y","usage":{"Input":5,"Output":1,"CacheRead":0,"CacheWrite":0,"Total":0,"Stored":""}}`))
	st.c.Set(ctx, DefaultPrefix+"last:c:old", old, 0)
	got, err = st.Get(ctx, "c:old")
	if err != nil || got.Last == nil || got.Last.Usage.Input != 5 || got.Last.Totals != (store.Tally{}) || got.Summaries != (store.Tally{}) {
		t.Errorf("an earlier version's last call read back as %+v (%v)", got, err)
	}
}

func TestValuesBounded(t *testing.T) {
	srv := startServer(t)
	st := srv.open(t, Options{MaxValueBytes: 1000})
	big := &store.Record{Checkpoints: []store.Checkpoint{{Summary: strings.Repeat("x", 2000)}}}
	if err := st.Put(context.Background(), "c:big", big); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("Put of a record over the limit: %v", err)
	}
}

func TestCorruptRecordDeleted(t *testing.T) {
	srv := startServer(t)
	st := srv.open(t, Options{})
	ctx := context.Background()
	st.c.Set(ctx, DefaultPrefix+"c:bad", "{not json", 0)
	if _, err := st.Get(ctx, "c:bad"); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("corrupt value: %v, want ErrCorrupt", err)
	}
	if _, err := st.Get(ctx, "c:bad"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("corrupt record not deleted: %v", err)
	}
}

func TestLock(t *testing.T) {
	srv := startServer(t)
	a := srv.open(t, Options{})
	b := srv.open(t, Options{})
	ctx := context.Background()

	// Of many concurrent takers, one wins.
	var wins atomic.Int32
	var wg sync.WaitGroup
	var held store.Lock
	var mu sync.Mutex
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := a
			if i%2 == 1 {
				st = b
			}
			l, err := st.TryLock(ctx, "l:conv", time.Minute)
			if err != nil {
				t.Error(err)
				return
			}
			if l != nil {
				wins.Add(1)
				mu.Lock()
				held = l
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d owners of one lock", wins.Load())
	}
	if err := held.Extend(ctx, time.Minute); err != nil {
		t.Errorf("owner cannot extend: %v", err)
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// Expiry frees it; the old owner can neither extend nor release the
	// new owner's lock.
	old, err := a.TryLock(ctx, "l:exp", 50*time.Millisecond)
	if err != nil || old == nil {
		t.Fatalf("take: %v %v", old, err)
	}
	time.Sleep(120 * time.Millisecond) // the server's clock, not ours
	next, err := b.TryLock(ctx, "l:exp", time.Minute)
	if err != nil || next == nil {
		t.Fatalf("lock not freed by its expiry: %v %v", next, err)
	}
	if err := old.Extend(ctx, time.Minute); !errors.Is(err, store.ErrLockLost) {
		t.Errorf("expired owner's Extend: %v, want ErrLockLost", err)
	}
	old.Release(ctx)
	if again, _ := a.TryLock(ctx, "l:exp", time.Minute); again != nil {
		t.Error("the expired owner's Release freed the new owner's lock")
	}
}

// TestServerDownAndBack: with the server down every call fails fast, and
// after it comes back the same Store works again.
func TestServerDownAndBack(t *testing.T) {
	srv := startServer(t)
	st := srv.open(t, Options{})
	ctx := context.Background()
	if err := st.Put(ctx, "c:x", &store.Record{}); err != nil {
		t.Fatal(err)
	}
	srv.stop()
	start := time.Now()
	_, gerr := st.Get(ctx, "c:x")
	perr := st.Put(ctx, "c:x", &store.Record{})
	_, lerr := st.TryLock(ctx, "l:x", time.Second)
	pingErr := st.Ping(ctx)
	if gerr == nil || perr == nil || lerr == nil || pingErr == nil {
		t.Fatalf("calls succeeded with the server down: %v %v %v %v", gerr, perr, lerr, pingErr)
	}
	if errors.Is(gerr, store.ErrNotFound) {
		t.Error("a server down reads as a missing record")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("four calls took %v with the server down", d)
	}
	srv.start()
	// The calls fail at once for Options.Backoff after one that got no
	// answer; a Ping tries the server and ends that.
	if err := st.Ping(ctx); err != nil {
		t.Errorf("ping after the restart: %v", err)
	}
	if err := st.Put(ctx, "c:x", &store.Record{}); err != nil {
		t.Errorf("after the restart: %v", err)
	}
}

func TestOpenDoesNotNeedTheServer(t *testing.T) {
	st, err := Open(context.Background(), "redis://user:s3cret-pass@127.0.0.1:1/0", Options{})
	if err != nil {
		t.Fatalf("Open with the server down: %v", err)
	}
	defer st.Close()
	err = st.Ping(context.Background())
	if err == nil {
		t.Fatal("ping succeeded")
	}
	if strings.Contains(err.Error(), "s3cret-pass") {
		t.Errorf("the password leaked into an error: %v", err)
	}
	if _, err := Open(context.Background(), "http://x", Options{}); err == nil {
		t.Error("a non-redis URL was accepted")
	}
}

// TestRefusedConnectionStartsNoBackoff: a server that refuses connections
// (down, restarting) fails calls at once and starts no backoff, so the
// first call after it is back reaches it; the backoff is for servers that
// do not answer in time (TestStalledServerHeldToDeadline).
func TestRefusedConnectionStartsNoBackoff(t *testing.T) {
	srv := startServer(t)
	st := srv.open(t, Options{Backoff: time.Hour})
	ctx := context.Background()
	srv.stop()
	if _, err := st.Get(ctx, "c:x"); err == nil || errors.Is(err, ErrUnavailable) {
		t.Fatalf("Get with the server down: %v, want the connection's error", err)
	}
	if _, err := st.Get(ctx, "c:x"); errors.Is(err, ErrUnavailable) {
		t.Fatalf("second Get with the server refusing connections: %v; a refused connection must start no backoff", err)
	}
	srv.start()
	if err := st.Put(ctx, "c:x", &store.Record{}); err != nil {
		t.Errorf("first call after the restart: %v", err)
	}
}
