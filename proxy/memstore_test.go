package proxy_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/compactkit/compact/proxy"
	"github.com/compactkit/compact/proxy/store/storetest"
)

func TestMemStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, cfg storetest.Config) proxy.Store {
		return proxy.NewMemStore(proxy.MemStoreOptions{MaxBytes: cfg.MaxBytes, TTL: cfg.TTL, Now: cfg.Clock.Now})
	})
}

func TestMemStoreAuth(t *testing.T) {
	storetest.RunAuth(t, func(t *testing.T, cfg storetest.Config) proxy.Store {
		return proxy.NewMemStore(proxy.MemStoreOptions{MaxBytes: cfg.MaxBytes, TTL: cfg.TTL, Now: cfg.Clock.Now, RecordKey: cfg.RecordKey})
	}, func(t *testing.T, s proxy.Store) storetest.Raw {
		m := s.(*proxy.MemStore)
		return storetest.Raw{
			Get: func(key string) []byte { return proxy.MemStoreRaw(m, key) },
			Put: func(key string, val []byte) { proxy.SetMemStoreRaw(m, key, val) },
		}
	})
}

func TestMemStoreDefaults(t *testing.T) {
	clock := storetest.NewClock()
	s := proxy.NewMemStore(proxy.MemStoreOptions{Now: clock.Now})
	defer s.Close()
	ctx := context.Background()
	if err := s.Put(ctx, "k", &proxy.Record{}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(proxy.DefaultStoreTTL - time.Second)
	if _, err := s.Get(ctx, "k"); err != nil {
		t.Fatalf("a record used %v ago expired: %v", proxy.DefaultStoreTTL-time.Second, err)
	}
	clock.Advance(proxy.DefaultStoreTTL)
	if _, err := s.Get(ctx, "k"); !errors.Is(err, proxy.ErrNotFound) {
		t.Fatalf("Get a default TTL after the last use = %v; want ErrNotFound", err)
	}
	if n, b := s.Len(); n != 0 || b != 0 {
		t.Fatalf("Len after expiry = %d records, %d bytes; want 0, 0", n, b)
	}
}

func TestMemStoreLenTracksBytes(t *testing.T) {
	s := proxy.NewMemStore(proxy.MemStoreOptions{})
	defer s.Close()
	ctx := context.Background()
	for range 3 {
		if err := s.Put(ctx, "a", &proxy.Record{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Put(ctx, "b", &proxy.Record{Last: &proxy.LastCall{}}); err != nil {
		t.Fatal(err)
	}
	// {"updated":"0001-01-01T00:00:00Z"} is 34 bytes; b adds "last":{...}.
	n, b := s.Len()
	if n != 2 || b <= 2*34 || b > 200 {
		t.Fatalf("Len = %d records, %d bytes; want 2 records of their encoded size", n, b)
	}
}
