package codex

import (
	"testing"

	"github.com/compactkit/compact/internal/testing/readertest"
)

// BenchmarkRead reads every test file; the bytes per second are the
// reader's throughput.
func BenchmarkRead(b *testing.B) {
	readertest.BenchRead(b, "testdata/*.jsonl", Read)
}
