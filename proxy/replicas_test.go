package proxy_test

import (
	"testing"

	"github.com/compactkit/compact/internal/testing/clustertest"
	"github.com/compactkit/compact/proxy/store"
)

// TestReplicasSharingAMemoryStore runs three replicas over one in-process
// store with 50 concurrent conversations of 30 steps each (see package
// clustertest for the checks).
func TestReplicasSharingAMemoryStore(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	st := store.NewMemory(store.MemoryOptions{})
	res := clustertest.Run(t, func(*testing.T) store.Store { return shared{st} }, clustertest.Options{})
	t.Log(res)
}

// shared keeps the one store open when a replica closes it.
type shared struct{ *store.Memory }

func (shared) Close() error { return nil }
