package proxy_test

import (
	"testing"

	"github.com/compactkit/compact/internal/testing/clustertest"
	"github.com/compactkit/compact/proxy"
)

// TestReplicasSharingAMemStore runs three replicas over one in-process
// store with 50 concurrent conversations of 30 steps each (see package
// clustertest for the checks).
func TestReplicasSharingAMemStore(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	store := proxy.NewMemStore(proxy.MemStoreOptions{})
	res := clustertest.Run(t, func(*testing.T) proxy.Store { return shared{store} }, clustertest.Options{})
	t.Logf("%d requests, %v compactions, %d summaries, largest request %d tokens", res.Requests, res.Compactions, res.Summaries, res.MaxTokens)
}

// shared keeps the one store open when a replica closes it.
type shared struct{ *proxy.MemStore }

func (shared) Close() error { return nil }
