// Package storetest checks that an implementation of store.Store behaves
// as the proxy expects. Every store runs the same tests from its own test
// file:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T, cfg storetest.Config) store.Store {
//			return mystore.New(cfg.MaxBytes, cfg.TTL, cfg.Clock.Now)
//		})
//	}
//
// Run groups three sets a store can also run alone: RunBasic (round trip,
// replacement, isolation, key checks, cancellation, concurrency, listing
// (RunList, for a store.Lister), Close),
// RunTTL (expiry after the last use) and RunLRU (eviction of the least
// recently used records beyond a byte budget). A store whose expiry or
// eviction lives in a server, not in the client, may leave out the sets it
// cannot honour and say so. RunAuth, run apart since it needs raw access
// to the stored bytes, checks the authentication of records.
//
// The tests never sleep: time moves only through Config.Clock, by whole
// minutes between operations whose order matters, so a store may record
// uses with a resolution of up to a second.
package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/proxy/store"
)

// Config is what a subtest asks of the store it opens.
type Config struct {
	// MaxBytes is the byte budget (see store.MemoryOptions.MaxBytes);
	// negative means none. RunBasic and RunTTL pass -1.
	MaxBytes int64
	// TTL is the life of a record after its last use; negative means
	// none. RunBasic and RunLRU pass -1.
	TTL time.Duration
	// Clock is the time the store must read; it moves only when a test
	// advances it.
	Clock *Clock
	// RecordKey is the key that authenticates the records (see
	// store.SealRecord); nil means none. Only RunAuth sets it.
	RecordKey []byte
}

// Opener opens a new, empty store configured by cfg. Run closes it at the
// end of the subtest (unless the subtest closed it itself); the Opener
// fails t when it cannot open one.
type Opener func(t *testing.T, cfg Config) store.Store

// Clock is a manual clock for stores under test.
type Clock struct {
	mu    sync.Mutex
	now   time.Time
	hooks []func(time.Duration)
}

// NewClock returns a clock set to a fixed instant.
func NewClock() *Clock {
	return &Clock{now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d and then calls the OnAdvance hooks.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	hooks := append([]func(time.Duration){}, c.hooks...)
	c.mu.Unlock()
	for _, h := range hooks {
		h(d)
	}
}

// OnAdvance registers f to be called after each Advance: a store whose
// clock lives elsewhere (a test server) moves it there.
func (c *Clock) OnAdvance(f func(time.Duration)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hooks = append(c.hooks, f)
}

// Raw reaches the bytes a store keeps for a key's record behind the
// store's back, as someone with write access to the store's file or server
// would. RunAuth uses it to alter, move and forge records. For a store
// that keeps a record in several values, Get and Put reach the one that
// holds the checkpoints.
type Raw struct {
	// Get returns the stored bytes, nil when there are none.
	Get func(key string) []byte
	// Put replaces them.
	Put func(key string, val []byte)
}

// RawOpener gives RunAuth raw access to a store it opened.
type RawOpener func(t *testing.T, s store.Store) Raw

// Run runs RunBasic, RunTTL and RunLRU.
func Run(t *testing.T, open Opener) {
	t.Run("Basic", func(t *testing.T) { RunBasic(t, open) })
	t.Run("TTL", func(t *testing.T) { RunTTL(t, open) })
	t.Run("LRU", func(t *testing.T) { RunLRU(t, open) })
}

// harness is one subtest's store and clock.
type harness struct {
	t      *testing.T
	clock  *Clock
	store  store.Store
	closed bool
}

func newHarness(t *testing.T, open Opener, maxBytes int64, ttl time.Duration) *harness {
	t.Helper()
	h := &harness{t: t, clock: NewClock()}
	h.store = open(t, Config{MaxBytes: maxBytes, TTL: ttl, Clock: h.clock})
	t.Cleanup(func() {
		if !h.closed {
			if err := h.store.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		}
	})
	return h
}

func (h *harness) close() error {
	h.closed = true
	return h.store.Close()
}

func (h *harness) put(key string, rec *store.Record) {
	h.t.Helper()
	if err := h.store.Put(context.Background(), key, rec); err != nil {
		h.t.Fatalf("Put(%q): %v", key, err)
	}
}

// get returns the record under key, nil when the store reports
// ErrNotFound; any other error fails the test.
func (h *harness) get(key string) *store.Record {
	h.t.Helper()
	rec, err := h.store.Get(context.Background(), key)
	if errors.Is(err, store.ErrNotFound) {
		if rec != nil {
			h.t.Fatalf("Get(%q) returned a record with ErrNotFound", key)
		}
		return nil
	}
	if err != nil {
		h.t.Fatalf("Get(%q): %v", key, err)
	}
	if rec == nil {
		h.t.Fatalf("Get(%q) returned a nil record and no error", key)
	}
	return rec
}

// present lists which of keys the store still returns, in order.
func (h *harness) present(keys ...string) string {
	h.t.Helper()
	var out []string
	for _, k := range keys {
		if h.get(k) != nil {
			out = append(out, k)
		}
	}
	return strings.Join(out, ",")
}

// wantEvictions fails the test unless a store that counts its evictions
// (store.Evicter) has counted n.
func (h *harness) wantEvictions(n uint64) {
	h.t.Helper()
	if e, ok := h.store.(store.Evicter); ok {
		if got := e.Evictions(); got != n {
			h.t.Fatalf("Evictions() = %d after %d records were evicted", got, n)
		}
	}
}

// use reads keys in order, a minute apart, and lists those the store
// still returns.
func (h *harness) use(keys ...string) string {
	h.t.Helper()
	var out []string
	for _, k := range keys {
		if h.get(k) != nil {
			out = append(out, k)
		}
		h.clock.Advance(time.Minute)
	}
	return strings.Join(out, ",")
}

// fullRecord is a record with every field set, non-ASCII text and a raw
// JSON item included.
func fullRecord() *store.Record {
	at := time.Date(2026, 11, 2, 3, 4, 5, 600, time.UTC)
	return &store.Record{
		Checkpoints: []store.Checkpoint{
			{
				Covered:       12,
				Chain:         strings.Repeat("ab", 32),
				Item:          []byte(`{"role":"user","content":"<summary>\nwork so far – «done»\n</summary>"}`),
				Summary:       "work so far – «done» ✓\nline two",
				ReadFiles:     []string{"a.go", "dir/b.go"},
				ModifiedFiles: []string{"c.go"},
				TokensBefore:  180000,
				TokensAfter:   21000,
				Reason:        compact.ReasonThreshold,
				Summarizer:    "extractive",
				Created:       at,
				Duration:      2500 * time.Millisecond,
				Ahead:         true,
				KeptRole:      compact.RoleUser,
				KeptPreview:   "now run the tests – «again»",
			},
			{Covered: 3, Chain: "00", Item: []byte(`{}`), Summary: "older", Reason: compact.ReasonOverflow, Created: at.Add(-time.Hour)},
		},
		Last: &store.LastCall{
			Units: 40,
			Chain: strings.Repeat("cd", 32),
			Usage: compact.Usage{Input: 10, Output: 20, CacheRead: 30, CacheWrite: 40, Total: 100, CacheWrite1h: 15,
				Compaction: compact.StepUsage{Input: 180000, Output: 3500}},
			Overflow: true,
			Totals: store.Tally{Requests: 41, Input: 5000, Output: 9000, CacheRead: 1200000, CacheWrite: 90000, CacheWrite1h: 40000,
				TokensSaved: 2400000, Cost: 1.8375, Unpriced: 2},
			At:       at.Add(-time.Minute),
			Agent:    "claude-cli/2.0.14",
			IDSource: "header x-claude-code-session-id",
			Recent: []store.Mark{
				{At: at.Add(-2 * time.Minute), Prompt: 150000, CacheRead: 149000, Output: 900, Client: 151000},
				{At: at.Add(-time.Minute), Prompt: 21000, Output: 300, Client: 180000, Applied: true, Compaction: true, Overflow: true},
			},
			LastMiss: &store.CacheMiss{At: at.Add(-time.Minute), Request: 41, Cause: store.MissPrefix,
				Detail: "message 7 (user) changed – «edited»", Expected: 150000, Read: 4000, DivergedAt: new(7), Role: "user",
				Idle: 90 * time.Second, ProviderReason: "messages_changed", ProviderMissed: 146000},
		},
		Pending: &store.Pending{
			Covered: 20, Chain: strings.Repeat("ef", 32), Units: 31, UnitsChain: strings.Repeat("01", 32), Base: strings.Repeat("ab", 32),
			Prepared: compact.Prepared{
				Base: "cp", LeafID: "u30.1", FirstKeptID: "u20.0", Summary: "written ahead – «early» ✓",
				ReadFiles: []string{"a.go"}, ModifiedFiles: []string{"b.go"}, PinnedIDs: []string{"u3.0"},
				SummaryTokens: 900, SpanTokens: 40000, KeptTokens: 12000, TokensBefore: 150000, MessagesSummarized: 33,
				Reason: compact.ReasonThreshold, Summarizer: "claude", Usage: &compact.Usage{Input: 5, CacheRead: 7},
				FallbackError: "timeout", Refused: []string{"a refusal"}, Details: map[string]any{"reason": "threshold"},
				Adjustments: []string{"kept part reduced"}, Duration: 3 * time.Second, Created: at,
			},
			SummaryCalls: []store.SummaryCall{{OnConversation: true, Usage: compact.Usage{Input: 100, CacheRead: 9000, Output: 700}}},
		},
		Summaries:   store.Tally{Requests: 2, Input: 300, Output: 4000, CacheRead: 150000, CacheWrite: 2000, Cost: 0.1234},
		Compactions: 7,
		Updated:     at,
	}
}

// sameRecord compares two records by their JSON encodings, which is what
// stores keep.
func sameRecord(t *testing.T, got, want *store.Record) {
	t.Helper()
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if string(g) != string(w) {
		t.Fatalf("record differs\n got: %s\nwant: %s", g, w)
	}
}

// RunBasic checks the store's core behaviour with no size limit and no
// expiry.
func RunBasic(t *testing.T, open Opener) {
	ctx := context.Background()
	basic := func(t *testing.T) *harness { return newHarness(t, open, -1, -1) }

	t.Run("NotFound", func(t *testing.T) {
		h := basic(t)
		rec, err := h.store.Get(ctx, "k:missing")
		if !errors.Is(err, store.ErrNotFound) || rec != nil {
			t.Fatalf("Get of a missing key = %v, %v; want nil and ErrNotFound", rec, err)
		}
	})

	t.Run("RoundTrip", func(t *testing.T) {
		h := basic(t)
		want := fullRecord()
		h.put("k:1", want)
		sameRecord(t, h.get("k:1"), want)
		// An empty record round-trips too.
		h.put("k:2", &store.Record{})
		sameRecord(t, h.get("k:2"), &store.Record{})
	})

	t.Run("Replace", func(t *testing.T) {
		h := basic(t)
		h.put("k", fullRecord())
		second := &store.Record{Last: &store.LastCall{Units: 2}}
		h.put("k", second)
		sameRecord(t, h.get("k"), second)
	})

	t.Run("PutLast", func(t *testing.T) {
		h := basic(t)
		ls, ok := h.store.(store.LastStore)
		if !ok {
			t.Skip("the store does not implement store.LastStore")
		}
		// The last call is replaced, the checkpoints kept.
		full := fullRecord()
		h.put("k", full)
		last := &store.LastCall{Bytes: 4321, Threshold: 9000, Usage: compact.Usage{Input: 77, Output: 5},
			Totals:   store.Tally{Requests: 42, Input: 5077, Cost: 1.9},
			LastMiss: &store.CacheMiss{Request: 42, Cause: store.MissPrefix, DivergedAt: new(0), Expected: 2000}}
		if err := ls.PutLast(ctx, "k", last); err != nil {
			t.Fatalf("PutLast: %v", err)
		}
		want := *full
		want.Last = last
		got := h.get("k")
		got.Updated = want.Updated
		sameRecord(t, got, &want)
		// A Put after it replaces both; one without a last call drops it.
		h.put("k", &store.Record{Checkpoints: full.Checkpoints[1:]})
		if got := h.get("k"); got.Last != nil || len(got.Checkpoints) != 1 {
			t.Errorf("after a Put without a last call: %+v", got)
		}
		// On a missing key it stores the last call alone.
		if err := ls.PutLast(ctx, "k:new", last); err != nil {
			t.Fatalf("PutLast of a new key: %v", err)
		}
		if got := h.get("k:new"); got.Last == nil || got.Last.Bytes != 4321 || len(got.Checkpoints) != 0 {
			t.Errorf("PutLast of a new key stored %+v", got)
		}
	})

	t.Run("KeysAreIndependent", func(t *testing.T) {
		h := basic(t)
		a, b := fullRecord(), &store.Record{Last: &store.LastCall{Units: 7}}
		h.put("a", a)
		h.put("b", b)
		sameRecord(t, h.get("a"), a)
		sameRecord(t, h.get("b"), b)
	})

	t.Run("NoSharedMemory", func(t *testing.T) {
		h := basic(t)
		rec := fullRecord()
		h.put("k", rec)
		rec.Checkpoints[0].Item[0] = 'X'
		rec.Checkpoints[0].Summary = "changed after Put"
		got := h.get("k")
		sameRecord(t, got, fullRecord())
		got.Checkpoints[0].Item[0] = 'Y'
		got.Last.Units = -1
		sameRecord(t, h.get("k"), fullRecord())
	})

	t.Run("BadKeys", func(t *testing.T) {
		h := basic(t)
		for _, key := range []string{"", "UPPER", "sk-ant-api03 secret", "a/b", strings.Repeat("a", store.MaxKeyLen+1)} {
			if err := h.store.Put(ctx, key, &store.Record{}); err == nil {
				t.Errorf("Put(%q) accepted the key", key)
			}
			if _, err := h.store.Get(ctx, key); err == nil || errors.Is(err, store.ErrNotFound) {
				t.Errorf("Get(%q) = %v; want a key error", key, err)
			} else if key != "" && strings.Contains(err.Error(), key) {
				t.Errorf("Get(%q) error quotes the key: %v", key, err)
			}
		}
		long := strings.Repeat("0123456789abcdef", store.MaxKeyLen/16)
		h.put(long, &store.Record{})
		h.get(long)
	})

	t.Run("NilRecord", func(t *testing.T) {
		h := basic(t)
		if err := h.store.Put(ctx, "k", nil); err == nil {
			t.Fatal("Put of a nil record succeeded")
		}
	})

	t.Run("CanceledContext", func(t *testing.T) {
		h := basic(t)
		h.put("k", fullRecord())
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := h.store.Get(cctx, "k"); !errors.Is(err, context.Canceled) {
			t.Errorf("Get with a canceled context = %v; want context.Canceled", err)
		}
		if err := h.store.Put(cctx, "k", &store.Record{}); !errors.Is(err, context.Canceled) {
			t.Errorf("Put with a canceled context = %v; want context.Canceled", err)
		}
		sameRecord(t, h.get("k"), fullRecord())
	})

	t.Run("Concurrent", func(t *testing.T) {
		// Writers store records whose fields agree with each other; a
		// reader must only ever see whole records.
		h := basic(t)
		const workers, rounds = 6, 40
		var wg sync.WaitGroup
		errs := make(chan error, workers*rounds)
		for w := range workers {
			wg.Go(func() {
				for i := range rounds {
					key := fmt.Sprintf("k:%d", (w+i)%3)
					n := w*1000 + i
					rec := &store.Record{
						Checkpoints: []store.Checkpoint{{Covered: n, Summary: strings.Repeat(fmt.Sprint(n%10), n%50+1)}},
						Last:        &store.LastCall{Units: n},
					}
					if err := h.store.Put(ctx, key, rec); err != nil {
						errs <- fmt.Errorf("Put: %w", err)
						return
					}
					got, err := h.store.Get(ctx, fmt.Sprintf("k:%d", (w+i+1)%3))
					if errors.Is(err, store.ErrNotFound) {
						continue
					}
					if err != nil {
						errs <- fmt.Errorf("Get: %w", err)
						return
					}
					m := got.Last.Units
					if len(got.Checkpoints) != 1 || got.Checkpoints[0].Covered != m || got.Checkpoints[0].Summary != strings.Repeat(fmt.Sprint(m%10), m%50+1) {
						errs <- fmt.Errorf("Get returned a mixed record: %+v", got)
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})

	t.Run("List", func(t *testing.T) { RunList(t, open) })

	t.Run("Closed", func(t *testing.T) {
		h := basic(t)
		h.put("k", fullRecord())
		if err := h.close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if err := h.store.Put(ctx, "k", &store.Record{}); err == nil {
			t.Error("Put after Close succeeded")
		}
		if _, err := h.store.Get(ctx, "k"); err == nil {
			t.Error("Get after Close succeeded")
		}
	})
}

// RunTTL checks that a record expires a TTL after its last use, and that
// a Get counts as a use.
func RunTTL(t *testing.T, open Opener) {
	const ttl = time.Hour

	t.Run("ExpiresAfterLastUse", func(t *testing.T) {
		h := newHarness(t, open, -1, ttl)
		h.put("a", fullRecord())
		h.put("b", fullRecord())
		h.clock.Advance(ttl - time.Minute)
		sameRecord(t, h.get("a"), fullRecord()) // a is used again, b is not
		h.clock.Advance(2 * time.Minute)
		if got := h.present("a", "b"); got != "a" {
			t.Fatalf("after %v, present = %q; want a (b unused for longer than the TTL)", ttl+time.Minute, got)
		}
		h.clock.Advance(ttl)
		if got := h.present("a", "b"); got != "" {
			t.Fatalf("after a further TTL, present = %q; want none", got)
		}
	})

	t.Run("PutRenews", func(t *testing.T) {
		h := newHarness(t, open, -1, ttl)
		h.put("a", fullRecord())
		h.clock.Advance(ttl - time.Minute)
		h.put("a", &store.Record{})
		h.clock.Advance(ttl - time.Minute)
		if h.get("a") == nil {
			t.Fatal("a record rewritten within its TTL expired")
		}
	})

	t.Run("ListSkipsExpired", func(t *testing.T) { runListTTL(t, open, ttl) })

	t.Run("ExpiredThenRewritten", func(t *testing.T) {
		h := newHarness(t, open, -1, ttl)
		h.put("a", fullRecord())
		h.clock.Advance(2 * ttl)
		h.put("b", &store.Record{}) // may purge a
		h.put("a", &store.Record{Last: &store.LastCall{Units: 3}})
		sameRecord(t, h.get("a"), &store.Record{Last: &store.LastCall{Units: 3}})
	})
}

// RunLRU checks that a Put beyond the byte budget evicts the least
// recently used records, where both Get and Put count as uses, and that
// the budget counts each record once however often it is rewritten.
func RunLRU(t *testing.T, open Opener) {
	// Records of equal size; the budget holds three and a half of them.
	rec := func(key string) *store.Record {
		return &store.Record{Checkpoints: []store.Checkpoint{{Summary: "summary of " + key + strings.Repeat(".", 200)}}}
	}
	enc, err := json.Marshal(rec("a"))
	if err != nil {
		t.Fatal(err)
	}
	size := int64(len(enc))
	budget := 3*size + size/2

	t.Run("EvictsLeastRecentlyUsed", func(t *testing.T) {
		h := newHarness(t, open, budget, -1)
		for _, k := range []string{"a", "b", "c"} {
			h.put(k, rec(k))
			h.clock.Advance(time.Minute)
		}
		h.get("a") // a is now more recent than b and c
		h.clock.Advance(time.Minute)
		h.put("d", rec("d"))
		h.clock.Advance(time.Minute)
		if got := h.use("b", "a", "c", "d"); got != "a,c,d" {
			t.Fatalf("present = %q; want a,c,d (b, the least recently used, evicted)", got)
		}
		h.wantEvictions(1)
		// a, c and d were read in that order: a is now the least recently
		// used.
		h.put("e", rec("e"))
		h.clock.Advance(time.Minute)
		if got := h.use("a", "c", "d", "e"); got != "c,d,e" {
			t.Fatalf("present = %q; want c,d,e", got)
		}
		h.wantEvictions(2)
	})

	t.Run("RewritesCountOnce", func(t *testing.T) {
		h := newHarness(t, open, budget, -1)
		for _, k := range []string{"a", "b", "c"} {
			h.put(k, rec(k))
			h.clock.Advance(time.Minute)
		}
		for range 20 {
			h.put("c", rec("c"))
			h.clock.Advance(time.Minute)
		}
		if got := h.use("a", "b", "c"); got != "a,b,c" {
			t.Fatalf("after rewriting c 20 times, present = %q; want a,b,c", got)
		}
	})

	t.Run("OversizedRecordKeptAlone", func(t *testing.T) {
		h := newHarness(t, open, budget, -1)
		h.put("a", rec("a"))
		h.clock.Advance(time.Minute)
		big := &store.Record{Checkpoints: []store.Checkpoint{{Summary: strings.Repeat("x", int(budget))}}}
		h.put("big", big)
		if got := h.use("a", "big"); got != "big" {
			t.Fatalf("present = %q; want big", got)
		}
		sameRecord(t, h.get("big"), big)
		h.clock.Advance(time.Minute)
		h.put("b", rec("b"))
		if got := h.use("b", "big"); got != "b" {
			t.Fatalf("after a later Put, present = %q; want b", got)
		}
	})
}

// RunAuth checks the authentication of records (store.SealRecord): with a
// record key, a record altered, moved to another key, written with another
// key or with none reads as absent (ErrNotFound and
// store.ErrUnauthenticated), and a Put overwrites it; without a key,
// records are kept as they are and sealed ones still read.
func RunAuth(t *testing.T, open Opener, raw RawOpener) {
	ctx := context.Background()
	key := []byte("conformance-record-key-0123456789")
	sealed := func(t *testing.T) (*harness, Raw) {
		h := &harness{t: t, clock: NewClock()}
		h.store = open(t, Config{MaxBytes: -1, TTL: -1, Clock: h.clock, RecordKey: key})
		t.Cleanup(func() { h.store.Close() })
		return h, raw(t, h.store)
	}
	refused := func(t *testing.T, h *harness, k string) {
		t.Helper()
		rec, err := h.store.Get(ctx, k)
		if !errors.Is(err, store.ErrNotFound) || !errors.Is(err, store.ErrUnauthenticated) || rec != nil {
			t.Fatalf("Get(%q) = %v, %v; want nil and an error wrapping ErrNotFound and ErrUnauthenticated", k, rec, err)
		}
		if strings.Contains(err.Error(), "work so far") {
			t.Fatalf("the error quotes the record: %v", err)
		}
	}
	// plain is a record's bytes as a store without a key keeps them.
	plain := func() []byte {
		rec := fullRecord()
		rec.Last = nil
		b, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	t.Run("RoundTrip", func(t *testing.T) {
		h, r := sealed(t)
		h.put("k:a", fullRecord())
		sameRecord(t, h.get("k:a"), fullRecord())
		if b := r.Get("k:a"); json.Valid(b) {
			t.Fatalf("the store keeps the record as bare JSON: %.80s", b)
		}
	})
	t.Run("Altered", func(t *testing.T) {
		h, r := sealed(t)
		h.put("k:a", fullRecord())
		b := r.Get("k:a")
		i := bytes.Index(b, []byte("older"))
		if i < 0 {
			t.Fatal("the record's summary is not in the stored bytes")
		}
		copy(b[i:], "newer")
		r.Put("k:a", b)
		refused(t, h, "k:a")
		// Treated as absent: a Put writes a good record over it.
		h.put("k:a", fullRecord())
		sameRecord(t, h.get("k:a"), fullRecord())
	})
	t.Run("Moved", func(t *testing.T) {
		h, r := sealed(t)
		h.put("k:a", fullRecord())
		r.Put("k:b", r.Get("k:a"))
		refused(t, h, "k:b")
		sameRecord(t, h.get("k:a"), fullRecord())
	})
	t.Run("Unsealed", func(t *testing.T) {
		h, r := sealed(t)
		r.Put("k:c", plain())
		refused(t, h, "k:c")
	})
	t.Run("OtherKey", func(t *testing.T) {
		h, r := sealed(t)
		r.Put("k:d", store.SealRecord([]byte("another-key-of-the-right-size!!"), "k:d", plain()))
		refused(t, h, "k:d")
	})
	t.Run("Malformed", func(t *testing.T) {
		h, r := sealed(t)
		for _, v := range []string{"cmac1:", "cmac1:zz\n{}", "cmac1:" + strings.Repeat("00", 31) + "\n{}"} {
			r.Put("k:m", []byte(v))
			refused(t, h, "k:m")
		}
	})
	t.Run("PutLastOverForged", func(t *testing.T) {
		h, r := sealed(t)
		ls, ok := h.store.(store.LastStore)
		if !ok {
			t.Skip("not a LastStore")
		}
		r.Put("k:e", store.SealRecord([]byte("another-key-of-the-right-size!!"), "k:e", plain()))
		if err := ls.PutLast(ctx, "k:e", &store.LastCall{Units: 3}); err != nil {
			t.Fatal(err)
		}
		// The forged checkpoints are never served, whatever the store
		// does with the rest.
		rec, err := h.store.Get(ctx, "k:e")
		if err == nil && len(rec.Checkpoints) > 0 {
			t.Fatalf("a forged record's checkpoints were served after PutLast: %+v", rec.Checkpoints)
		}
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			t.Fatal(err)
		}
	})
	t.Run("WithoutKey", func(t *testing.T) {
		h := &harness{t: t, clock: NewClock()}
		h.store = open(t, Config{MaxBytes: -1, TTL: -1, Clock: h.clock})
		t.Cleanup(func() { h.store.Close() })
		r := raw(t, h.store)
		h.put("k:p", fullRecord())
		if b := r.Get("k:p"); !json.Valid(b) {
			t.Fatalf("a store without a key does not keep plain JSON: %.80s", b)
		}
		// Nothing can be checked without the key: a sealed record reads.
		r.Put("k:s", store.SealRecord(key, "k:s", plain()))
		want := fullRecord()
		want.Last = nil
		sameRecord(t, h.get("k:s"), want)
	})
}
