package bolt

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/compactkit/compact/proxy/store"
	"github.com/compactkit/compact/proxy/store/storetest"
)

// open opens a store in a new temporary directory, with no background
// sweep, closed at the end of the test.
func open(t *testing.T, opts Options) *Store {
	t.Helper()
	if opts.SweepEvery == 0 {
		opts.SweepEvery = -1
	}
	s, err := Open(filepath.Join(t.TempDir(), "proxy.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, cfg storetest.Config) store.Store {
		return open(t, Options{MaxBytes: cfg.MaxBytes, TTL: cfg.TTL, Now: cfg.Clock.Now})
	})
}

func TestAuth(t *testing.T) {
	storetest.RunAuth(t, func(t *testing.T, cfg storetest.Config) store.Store {
		return open(t, Options{MaxBytes: cfg.MaxBytes, TTL: cfg.TTL, Now: cfg.Clock.Now, RecordKey: cfg.RecordKey})
	}, func(t *testing.T, st store.Store) storetest.Raw {
		s := st.(*Store)
		return storetest.Raw{
			Get: func(key string) []byte {
				var v []byte
				if err := s.db.View(func(tx *bbolt.Tx) error {
					v = bytes.Clone(tx.Bucket(bucketRecords).Get([]byte(key)))
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				return v
			},
			Put: func(key string, val []byte) {
				if err := s.db.Update(func(tx *bbolt.Tx) error {
					if err := tx.Bucket(bucketUsed).Put([]byte(key), encodeTime(s.now())); err != nil {
						return err
					}
					return tx.Bucket(bucketRecords).Put([]byte(key), val)
				}); err != nil {
					t.Fatal(err)
				}
			},
		}
	})
}

func record(units int) *store.Record {
	return &store.Record{
		Checkpoints: []store.Checkpoint{{Covered: units, Summary: "summary", Item: []byte(`{"role":"user"}`)}},
		Last:        &store.LastCall{Units: units},
	}
}

func mustGet(t *testing.T, s store.Store, key string) *store.Record {
	t.Helper()
	rec, err := s.Get(context.Background(), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	return rec
}

func mustPut(t *testing.T, s store.Store, key string, rec *store.Record) {
	t.Helper()
	if err := s.Put(context.Background(), key, rec); err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
}

func TestSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "proxy.db")
	clock := storetest.NewClock()
	s, err := Open(path, Options{Now: clock.Now, SweepEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, "a", record(1))
	mustPut(t, s, "b", record(2))
	_, wantBytes, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	clock.Advance(time.Hour)
	s, err = Open(path, Options{Now: clock.Now, SweepEvery: -1})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	if got := mustGet(t, s, "a"); got.Last.Units != 1 {
		t.Fatalf("a after reopen: %+v", got.Last)
	}
	if got := mustGet(t, s, "b"); got.Last.Units != 2 {
		t.Fatalf("b after reopen: %+v", got.Last)
	}
	n, gotBytes, err := s.Stats()
	if err != nil || n != 2 || gotBytes != wantBytes {
		t.Fatalf("Stats after reopen = %d, %d, %v; want 2, %d", n, gotBytes, err, wantBytes)
	}
}

func TestFailedPutKeepsOldRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "proxy.db")
	s, err := Open(path, Options{SweepEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, "k", record(1))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	err = s.Put(context.Background(), "k", record(2))
	if !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Put on a closed store = %v; want ErrClosed", err)
	}
	if _, err := s.Get(context.Background(), "k"); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Get on a closed store = %v; want ErrClosed", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}

	s, err = Open(path, Options{SweepEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := mustGet(t, s, "k"); got.Last.Units != 1 {
		t.Fatalf("after a failed Put, record = %+v; want the old one", got.Last)
	}
}

func TestPutFailingInsideTransactionKeepsOldRecord(t *testing.T) {
	// A Put whose transaction fails after every write was made (the test
	// hook fails it just before the commit) leaves the old record, its
	// neighbours and the total size as they were.
	clock := storetest.NewClock()
	s := open(t, Options{MaxBytes: 1, Now: clock.Now})
	mustPut(t, s, "k", record(1))
	_, before, _ := s.Stats()
	clock.Advance(time.Minute)
	boom := errors.New("boom")
	s.beforeCommit = func() error { return boom }
	if err := s.Put(context.Background(), "other", record(2)); !errors.Is(err, boom) {
		t.Fatalf("Put = %v; want the injected failure", err)
	}
	if err := s.Put(context.Background(), "k", record(3)); !errors.Is(err, boom) {
		t.Fatalf("Put = %v; want the injected failure", err)
	}
	s.beforeCommit = nil
	if got := mustGet(t, s, "k"); got.Last.Units != 1 {
		t.Fatalf("after failed Puts, record = %+v; want the old one (not replaced, not evicted)", got.Last)
	}
	if _, err := s.Get(context.Background(), "other"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get of the key whose Put failed = %v; want ErrNotFound", err)
	}
	if n, after, _ := s.Stats(); n != 1 || after != before {
		t.Fatalf("Stats = %d records, %d bytes after failed Puts; want 1, %d", n, after, before)
	}
}

func TestCorruptValue(t *testing.T) {
	s := open(t, Options{})
	mustPut(t, s, "bad", record(1))
	mustPut(t, s, "good", record(2))
	_, before, _ := s.Stats()
	var size int
	err := s.db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketRecords)
		size = len(b.Get([]byte("bad")))
		return b.Put([]byte("bad"), []byte(strings.Repeat("\x00", size)))
	})
	if err != nil {
		t.Fatal(err)
	}

	rec, err := s.Get(context.Background(), "bad")
	if rec != nil || !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("Get of a corrupt value = %v, %v; want an error wrapping ErrCorrupt", rec, err)
	}
	if !strings.Contains(err.Error(), s.Path()) {
		t.Errorf("error %q does not name the file", err)
	}
	if _, err := s.Get(context.Background(), "bad"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second Get of the corrupt key = %v; want ErrNotFound (deleted)", err)
	}
	if got := mustGet(t, s, "good"); got.Last.Units != 2 {
		t.Fatalf("good record: %+v", got.Last)
	}
	mustPut(t, s, "bad", record(3))
	if got := mustGet(t, s, "bad"); got.Last.Units != 3 {
		t.Fatalf("rewritten record: %+v", got.Last)
	}
	if n, after, _ := s.Stats(); n != 2 || after != before {
		t.Fatalf("Stats = %d records, %d bytes; want 2, %d", n, after, before)
	}
}

func TestLockedByAnotherOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "proxy.db")
	s, err := Open(path, Options{SweepEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The file is locked for as long as s is open, so the short timeout
	// always runs out; it only keeps the test quick.
	s2, err := Open(path, Options{SweepEvery: -1, LockTimeout: 20 * time.Millisecond})
	if err == nil {
		s2.Close()
		t.Fatal("a second Open of a held file succeeded")
	}
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), path) {
		t.Fatalf("second Open = %v; want ErrLocked naming %s", err, path)
	}
	mustPut(t, s, "k", record(1)) // the first store is unharmed
}

func TestOpenCreatesPrivateFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "compact")
	path := filepath.Join(dir, "proxy.db")
	s, err := Open(path, Options{SweepEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for p, want := range map[string]os.FileMode{dir: 0o700, path: 0o600} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s has mode %v; want %v", p, fi.Mode().Perm(), want)
		}
	}
}

func TestOpenRejectsForeignFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(path, []byte(strings.Repeat("not a database\n", 1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(path, Options{SweepEvery: -1})
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("Open of a text file = %v; want an error naming %s", err, path)
	}
	if b, _ := os.ReadFile(path); !strings.HasPrefix(string(b), "not a database") {
		t.Fatal("Open changed the foreign file")
	}
}

func TestOpenRejectsOtherFormatVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "proxy.db")
	s, err := Open(path, Options{SweepEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.db.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bucketMeta).Put(metaVersion, []byte("99")) }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err = Open(path, Options{SweepEvery: -1})
	if err == nil || !strings.Contains(err.Error(), `"99"`) || !strings.Contains(err.Error(), path) {
		t.Fatalf("Open of a version 99 file = %v; want a version error naming the file", err)
	}
}

func TestSweep(t *testing.T) {
	clock := storetest.NewClock()
	s := open(t, Options{TTL: time.Hour, Now: clock.Now})
	mustPut(t, s, "a", record(1))
	mustPut(t, s, "b", record(2))
	clock.Advance(30 * time.Minute)
	mustPut(t, s, "c", record(3))
	clock.Advance(45 * time.Minute) // a and b expired, c not

	n, err := s.Sweep(context.Background())
	if err != nil || n != 2 {
		t.Fatalf("Sweep = %d, %v; want 2 records deleted", n, err)
	}
	records, size, err := s.Stats()
	if err != nil || records != 1 {
		t.Fatalf("Stats = %d, %v; want 1 record", records, err)
	}
	mustGet(t, s, "c")
	clock.Advance(2 * time.Hour)
	if n, err := s.Sweep(context.Background()); err != nil || n != 1 {
		t.Fatalf("second Sweep = %d, %v; want 1", n, err)
	}
	if records, size, _ = s.Stats(); records != 0 || size != 0 {
		t.Fatalf("Stats after sweeping all = %d records, %d bytes; want 0, 0", records, size)
	}
}

func TestBackgroundSweep(t *testing.T) {
	clock := storetest.NewClock()
	s := open(t, Options{TTL: time.Hour, Now: clock.Now})
	mustPut(t, s, "a", record(1))
	clock.Advance(2 * time.Hour)

	tick := make(chan time.Time)
	swept := make(chan int)
	s.afterSweep = func(n int, err error) {
		if err != nil {
			t.Error(err)
		}
		swept <- n
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.sweepLoop(tick)
	}()
	tick <- clock.Now()
	if n := <-swept; n != 1 {
		t.Fatalf("background sweep deleted %d records; want 1", n)
	}
	close(s.stop)
	<-done
	s.stop = make(chan struct{}) // for Close
}

func TestGetTouchResolution(t *testing.T) {
	// Reads within a second of the last recorded use write nothing.
	clock := storetest.NewClock()
	s := open(t, Options{Now: clock.Now})
	mustPut(t, s, "k", record(1))
	writes := func() int64 { st := s.db.Stats(); return st.TxStats.GetWrite() }
	before := writes()
	for range 5 {
		clock.Advance(100 * time.Millisecond)
		mustGet(t, s, "k")
	}
	if got := writes() - before; got != 0 {
		t.Fatalf("5 Gets within a second wrote %d pages; want none", got)
	}
	clock.Advance(time.Second)
	mustGet(t, s, "k")
	if writes() == before {
		t.Fatal("a Get a second after the last recorded use wrote nothing")
	}
}

func TestStaleIndexEntriesAreDropped(t *testing.T) {
	clock := storetest.NewClock()
	s := open(t, Options{MaxBytes: 1, Now: clock.Now})
	mustPut(t, s, "a", record(1))
	// An index entry for a record that does not exist, older than a.
	err := s.db.Update(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketIndex).Put(indexKey(clock.Now().Add(-time.Hour), []byte("ghost")), nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	mustPut(t, s, "b", record(2)) // evicts a, past the ghost entry
	if _, err := s.Get(context.Background(), "a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get(a) = %v; want evicted", err)
	}
	mustGet(t, s, "b")
	err = s.db.View(func(tx *bbolt.Tx) error {
		if n := tx.Bucket(bucketIndex).Stats().KeyN; n != 1 {
			t.Errorf("index holds %d entries; want 1", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestDefaultPath(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/var/state-x")
	if p, err := DefaultPath(); err != nil || p != "/var/state-x/compact/proxy.db" {
		t.Fatalf("DefaultPath with XDG_STATE_HOME = %q, %v", p, err)
	}
	t.Setenv("HOME", "/home/someone")
	for _, xdg := range []string{"", "relative/dir"} {
		t.Setenv("XDG_STATE_HOME", xdg)
		if p, err := DefaultPath(); err != nil || p != "/home/someone/.local/state/compact/proxy.db" {
			t.Fatalf("DefaultPath with XDG_STATE_HOME=%q = %q, %v", xdg, p, err)
		}
	}
}

func TestEncodeTimeSorts(t *testing.T) {
	times := []time.Time{time.Unix(-5, 0), time.Unix(0, 0), time.Unix(0, 1), time.Unix(1<<32, 0)}
	for i := 1; i < len(times); i++ {
		a, b := encodeTime(times[i-1]), encodeTime(times[i])
		if string(a) >= string(b) {
			t.Errorf("encodeTime(%v) does not sort before encodeTime(%v)", times[i-1], times[i])
		}
		if !decodeTime(b).Equal(times[i]) {
			t.Errorf("decodeTime(encodeTime(%v)) = %v", times[i], decodeTime(b))
		}
	}
}

func benchRecord() *store.Record {
	rec := record(1)
	rec.Checkpoints[0].Summary = strings.Repeat("a summary line of some length\n", 300) // ~9 KB
	return rec
}

func BenchmarkPut(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "proxy.db"), Options{SweepEvery: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	rec := benchRecord()
	ctx := context.Background()
	i := 0
	for b.Loop() {
		i++
		if err := s.Put(ctx, "k:"+strings.Repeat("0", i%64), rec); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGet(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "proxy.db"), Options{SweepEvery: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if err := s.Put(ctx, "k", benchRecord()); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := s.Get(ctx, "k"); err != nil {
			b.Fatal(err)
		}
	}
}
