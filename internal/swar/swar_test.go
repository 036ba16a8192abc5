package swar

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// The lowest byte Stops marks is the first byte IsStop accepts, and Stops
// marks nothing when no byte is one; every byte IsStop accepts is marked.
func TestStops(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte{'"', '\\', 0, 0x1f, 0x20, 0x21, '!', 'a', 0x7f, 0x80, 0xc3, 0xff, '/', 'n'}
	var b [8]byte
	for range 200000 {
		for i := range b {
			if r.IntN(4) == 0 {
				b[i] = byte(r.Uint32())
			} else {
				b[i] = alphabet[r.IntN(len(alphabet))]
			}
		}
		m := Stops(binary.LittleEndian.Uint64(b[:]))
		first := 8
		for i, c := range b {
			if IsStop(c) {
				if m&(0x80<<(8*i)) == 0 {
					t.Fatalf("% x: byte %d (%#x) is not marked (mask %#x)", b, i, c, m)
				}
				first = min(first, i)
			}
		}
		if got := bits.TrailingZeros64(m) >> 3; got != first {
			t.Fatalf("% x: lowest mark at byte %d, want %d (mask %#x)", b, got, first, m)
		}
	}
}
