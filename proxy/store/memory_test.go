package store_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact/proxy/store"
	"github.com/compactkit/compact/proxy/store/storetest"
)

func TestMemoryConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, cfg storetest.Config) store.Store {
		return store.NewMemory(store.MemoryOptions{MaxBytes: cfg.MaxBytes, TTL: cfg.TTL, Now: cfg.Clock.Now})
	})
}

func TestMemoryAuth(t *testing.T) {
	storetest.RunAuth(t, func(t *testing.T, cfg storetest.Config) store.Store {
		return store.NewMemory(store.MemoryOptions{MaxBytes: cfg.MaxBytes, TTL: cfg.TTL, Now: cfg.Clock.Now, RecordKey: cfg.RecordKey})
	}, func(t *testing.T, s store.Store) storetest.Raw {
		m := s.(*store.Memory)
		return storetest.Raw{
			Get: func(key string) []byte { return m.Raw(key) },
			Put: func(key string, val []byte) { m.SetRaw(key, val) },
		}
	})
}

func TestMemoryDefaults(t *testing.T) {
	clock := storetest.NewClock()
	s := store.NewMemory(store.MemoryOptions{Now: clock.Now})
	defer s.Close()
	ctx := context.Background()
	if err := s.Put(ctx, "k", &store.Record{}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(store.DefaultTTL - time.Second)
	if _, err := s.Get(ctx, "k"); err != nil {
		t.Fatalf("a record used %v ago expired: %v", store.DefaultTTL-time.Second, err)
	}
	clock.Advance(store.DefaultTTL)
	if _, err := s.Get(ctx, "k"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get a default TTL after the last use = %v; want ErrNotFound", err)
	}
	if n, b := s.Len(); n != 0 || b != 0 {
		t.Fatalf("Len after expiry = %d records, %d bytes; want 0, 0", n, b)
	}
}

func TestMemoryLenTracksBytes(t *testing.T) {
	s := store.NewMemory(store.MemoryOptions{})
	defer s.Close()
	ctx := context.Background()
	for range 3 {
		if err := s.Put(ctx, "a", &store.Record{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Put(ctx, "b", &store.Record{Last: &store.LastCall{}}); err != nil {
		t.Fatal(err)
	}
	// {"updated":"0001-01-01T00:00:00Z"} is 34 bytes; b adds "last":{...}.
	n, b := s.Len()
	if n != 2 || b <= 2*34 || b > 200 {
		t.Fatalf("Len = %d records, %d bytes; want 2 records of their encoded size", n, b)
	}
}

// TestMemoryRawAccess: Keys lists the records from the least recently
// used, Raw returns the stored bytes (sealed with a record key) and
// SetRaw replaces them as they are, so that a Get of bytes altered behind
// the store's back fails its authentication.
func TestMemoryRawAccess(t *testing.T) {
	ctx := context.Background()
	s := store.NewMemory(store.MemoryOptions{RecordKey: []byte("test-record-key-0123456789")})
	defer s.Close()
	for _, k := range []string{"c:a", "c:b", "c:c"} {
		if err := s.Put(ctx, k, &store.Record{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Get(ctx, "c:a"); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(s.Keys(), " "), "c:b c:c c:a"; got != want {
		t.Errorf("Keys = %q, want %q (least recently used first)", got, want)
	}
	if s.Raw("c:none") != nil {
		t.Error("Raw of a missing key is not nil")
	}
	raw := s.Raw("c:b")
	if !bytes.HasPrefix(raw, []byte("cmac1:")) {
		t.Fatalf("Raw = %q, want the sealed bytes", raw)
	}
	raw[len(raw)-2] ^= 1 // Raw returns a copy: the store is not altered
	if _, err := s.Get(ctx, "c:b"); err != nil {
		t.Fatalf("changing Raw's copy altered the store: %v", err)
	}
	s.SetRaw("c:b", raw)
	if _, err := s.Get(ctx, "c:b"); !errors.Is(err, store.ErrUnauthenticated) {
		t.Errorf("Get of bytes altered with SetRaw = %v, want ErrUnauthenticated", err)
	}
}
