package redis

import (
	"testing"

	"github.com/compactkit/compact/internal/testing/clustertest"
)

// TestReplicasOnRedis runs three replicas, each with its own connection
// to one real Redis, under 50 concurrent conversations of 30 steps (the
// checks are in package clustertest).
func TestReplicasOnRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	srv := startServer(t)
	res := clustertest.Run(t, srv.store, clustertest.Options{})
	t.Log(res)
}

// TestReplicasThroughRedisRestart stops Redis half way through the run
// and starts it again (empty: no persistence) 100 requests later. Every
// request is answered, none goes over the window or breaks tool pairing,
// and the conversations go on compacting afterwards.
func TestReplicasThroughRedisRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	srv := startServer(t)
	res := clustertest.Run(t, srv.store, clustertest.Options{Down: srv.stop, Up: srv.start})
	t.Log(res)
}

// TestReplicasThroughRedisRestartWithFallback is the same outage with the
// replicas keeping state in memory meanwhile (as compact proxy --redis
// does): conversations stay compacted through it, so far fewer requests
// reach the provider too long.
func TestReplicasThroughRedisRestartWithFallback(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	srv := startServer(t)
	res := clustertest.Run(t, srv.store, clustertest.Options{Down: srv.stop, Up: srv.start, LocalFallback: true})
	t.Log(res)
	if res.Refused > 60 {
		t.Errorf("%d requests refused as too long during the outage; the local fallback should keep most compacted", res.Refused)
	}
}
