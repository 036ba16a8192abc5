package store

import (
	"testing"
	"time"

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

// The timeline keeps the newest MaxRecent marks in time order, whatever
// order they were recorded in.
func TestAppendRecent(t *testing.T) {
	at := func(s int) time.Time { return time.Unix(int64(s), 0) }
	var r []Mark
	for i := range MaxRecent + 5 {
		r = AppendRecent(r, Mark{At: at(2 * i), Prompt: i})
	}
	if len(r) != MaxRecent || r[0].Prompt != 5 {
		t.Fatalf("%d marks from prompt %d; want %d from 5", len(r), r[0].Prompt, MaxRecent)
	}
	late := AppendRecent(r, Mark{At: at(2*(MaxRecent+4) - 1), Prompt: -1}) // between the last two
	if n := len(late); late[n-2].Prompt != -1 || late[n-1].Prompt != MaxRecent+4 || late[0].Prompt != 6 {
		t.Fatalf("a mark recorded late is not in its place: %+v", late[n-3:])
	}
	if r[len(r)-1].Prompt != MaxRecent+4 {
		t.Fatal("AppendRecent modified its argument")
	}
}
