package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// Concurrent writes all land, whole; run with -race to check the locking.
func TestConcurrentWrites(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				b.Write([]byte("ab\n"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if got := b.String(); got != strings.Repeat("ab\n", 800) {
		t.Errorf("%d bytes, want 2400 of whole lines", len(got))
	}
}
