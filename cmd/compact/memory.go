package main

import (
	"runtime"
)

// minHeadroom is the least the heap may grow beyond the loaded session
// before the collector works harder: room for the command's own working
// set (contexts, previews, the summary). The headroom is a quarter of
// the heap when that is more.
const minHeadroom = 64 << 20

// heapBound returns the hook the command line runs after loading a
// session file of size bytes. It sets the Go runtime's soft memory limit
// to twice the file's size, or to the heap just after loading plus a
// quarter (at least minHeadroom) when that is more (a file of many tiny
// entries loads into several times its size, and a limit under what the
// command needs would make the collector run without end), and never
// lowers a limit it set before (bench loads several files). A one-shot command then keeps its peak memory
// near that bound, at the price of more collections, where the
// collector's default pacing lets the heap grow to twice what is live
// (a 200 MB session peaked at 3.4 times its size in inspect). With
// GOMEMLIMIT set in the environment the runtime's own setting stands and
// the hook does nothing.
//
// set is debug.SetMemoryLimit and heap reports the bytes of heap in use;
// tests pass fakes.
func heapBound(getenv func(string) string, set func(int64) int64, heap func() uint64) func(size int64) {
	if getenv("GOMEMLIMIT") != "" {
		return func(int64) {}
	}
	var bound int64
	return func(size int64) {
		h := int64(heap())
		limit := max(2*size, h+max(h/4, minHeadroom), bound)
		if limit != bound {
			bound = limit
			set(limit)
		}
	}
}

// heapInUse is the heap-in-use figure heapBound needs, from the runtime.
func heapInUse() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
