package store

import (
	"testing"

	"github.com/compactkit/compact"
)

func TestTallyAdd(t *testing.T) {
	var tl Tally
	tl = tl.Add(compact.Usage{Input: 10, Output: 5, CacheRead: 900, CacheWrite: 90, CacheWrite1h: 30,
		Compaction: compact.StepUsage{Input: 1000, Output: 50}}, 400, compact.Cost{Input: 0.01, Output: 0.02}, true)
	tl = tl.Add(compact.Usage{Input: 1, CacheRead: 99}, -7, compact.Cost{Input: 5}, false)
	want := Tally{Requests: 2, Input: 1011, Output: 55, CacheRead: 999, CacheWrite: 90, CacheWrite1h: 30, TokensSaved: 400, Cost: 0.03, Unpriced: 1}
	if tl != want {
		t.Errorf("tally %+v, want %+v (an unpriced call adds no cost, a negative saving none)", tl, want)
	}
	if s, ok := tl.CacheReadShare(); !ok || s != 999.0/2100 {
		t.Errorf("share %v %v", s, ok)
	}
	if _, ok := (Tally{}).CacheReadShare(); ok {
		t.Error("an empty tally has a share")
	}
}
