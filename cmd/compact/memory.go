package main

import (
	"runtime"
)

// minHeadroom is the least the heap may grow beyond the loaded session
// before the collector works harder, when the session is too dense for
// the file-size bound: room for the command's own working set (contexts,
// previews, the summary). The headroom is two fifths of the heap when
// that is more: `compact run` on a million tiny entries (about 610 MiB of
// heap once loaded) summarizes them in some 160 MiB more. With a quarter
// it collected 15 times (4.3 s); with two fifths it collects 7 or 8 (3.2
// to 3.3 s) and peaks at about 870 MiB; with a half it is 0.2 s faster
// but peaks at 937 MiB, too near the 1 GB the issue allows.
const minHeadroom = 64 << 20

// reserve is room for what the process holds beyond the memory the Go
// runtime counts against its limit (mostly the binary's code as mapped)
// and for the runtime overshooting the limit: a peak 10 to 25 MiB above
// the limit was measured on linux/amd64.
const reserve = 32 << 20

// heapBound returns the hook the command line runs after loading a
// session file of size bytes. It sets the Go runtime's soft memory limit
// so that the whole process stays within twice the file's size (the limit
// is that, less reserve) when that leaves the loaded heap an eighth to
// grow. A session too dense for that (many tiny entries load into several
// times their file's size) gets the heap just after loading plus two
// fifths, at least minHeadroom: a limit under what the command needs
// would make the collector run without end. The hook never lowers a limit
// it set before (bench loads several files). A one-shot command then
// keeps its peak memory near that bound, at the price of more
// collections, where the collector's default pacing lets the heap grow
// to twice what is live (a 200 MB session peaked at 3.4 times its size in
// inspect). With GOMEMLIMIT set in the environment the runtime's own
// setting stands and the hook does nothing.
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
		limit := h + max(2*h/5, minHeadroom)
		if fit := 2*size - reserve; fit >= h+h/8 {
			limit = fit
		}
		limit = max(limit, bound)
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
