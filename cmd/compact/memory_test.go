package main

import "testing"

// TestHeapBound: the limit is twice the file, or the heap after loading
// plus two fifths (at least 64 MiB) when more; it never falls; GOMEMLIMIT
// in the environment turns the hook off.
func TestHeapBound(t *testing.T) {
	const mib = 1 << 20
	var set []int64
	heap := uint64(0)
	bound := heapBound(func(string) string { return "" }, func(l int64) int64 { set = append(set, l); return 0 }, func() uint64 { return heap })

	heap = 10 * mib
	bound(200 * mib) // a large file with a small heap: twice the file, less the reserve
	heap = 320 * mib
	bound(200 * mib) // a heap of 1.6 times the file still fits (320 + 40 <= 368): the limit stays
	heap = 900 * mib
	bound(180 * mib) // many tiny entries: the heap plus two fifths
	heap = 5 * mib
	bound(1 * mib) // a small file after a larger one: the limit stays
	want := []int64{368 * mib, 900*mib + 2*900*mib/5}
	if len(set) != len(want) || set[0] != want[0] || set[1] != want[1] {
		t.Fatalf("limits set %v, want %v", set, want)
	}

	set = nil
	small := heapBound(func(string) string { return "" }, func(l int64) int64 { set = append(set, l); return 0 }, func() uint64 { return 10 * mib })
	small(1 * mib)
	if len(set) != 1 || set[0] != 74*mib {
		t.Errorf("a small file: limits %v, want the heap plus 64 MiB (%d)", set, 74*mib)
	}

	// A heap just too large for twice the file, less the reserve, to
	// leave it an eighth: the heap plus two fifths.
	set = nil
	dense := heapBound(func(string) string { return "" }, func(l int64) int64 { set = append(set, l); return 0 }, func() uint64 { return 336 * mib })
	dense(200 * mib) // 336 + 42 > 368
	if want := int64(336*mib + 2*336*mib/5); len(set) != 1 || set[0] != want {
		t.Errorf("a dense file: limits %v, want the heap plus two fifths (%d)", set, want)
	}

	set = nil
	off := heapBound(func(k string) string {
		if k == "GOMEMLIMIT" {
			return "1GiB"
		}
		return ""
	}, func(l int64) int64 { set = append(set, l); return 0 }, func() uint64 { return 1 })
	off(500 * mib)
	if len(set) != 0 {
		t.Errorf("with GOMEMLIMIT set the hook set %v", set)
	}
}
