package store_test

import (
	"context"
	"errors"
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
