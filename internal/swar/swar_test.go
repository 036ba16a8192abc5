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
		fillRandom(r, b[:], alphabet, 4)
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

// Index finds the first byte IsStop accepts, at every length and offset
// (so that the vector blocks, the words after them and the bytes after
// those are all tested), and Mask64 marks every stop, and on amd64 only
// those.
func TestIndexAndMask64(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte{'"', '\\', 0, 0x1f, 0x20, 0x21, 'a', 0x7f, 0x80, 0xc3, 0xff, 'n'}
	buf := make([]byte, 200)
	for range 50000 {
		n := r.IntN(len(buf) + 1)
		b := buf[:n]
		for i := range b {
			b[i] = 'x'
		}
		// Mostly plain bytes with a stop or two, so that runs of every
		// length are tested.
		for range r.IntN(3) {
			if n > 0 {
				b[r.IntN(n)] = alphabet[r.IntN(len(alphabet))]
			}
		}
		want := n
		for i, c := range b {
			if IsStop(c) {
				want = i
				break
			}
		}
		if got := Index(b); got != want {
			t.Fatalf("Index(%q) = %d, want %d", b, got, want)
		}
	}
	var blk [64]byte
	for range 50000 {
		fillRandom(r, blk[:], alphabet, 3)
		m := Mask64(&blk)
		for k, c := range blk {
			marked := m&(1<<k) != 0
			if IsStop(c) && !marked {
				t.Fatalf("% x: byte %d (%#x) is not marked (mask %#x)", blk, k, c, m)
			}
			if exactMask && !IsStop(c) && marked {
				t.Fatalf("% x: byte %d (%#x) is marked falsely (mask %#x)", blk, k, c, m)
			}
		}
	}
}

// fillRandom fills b with bytes of alphabet and, one in oneIn, any byte.
func fillRandom(r *rand.Rand, b, alphabet []byte, oneIn int) {
	for i := range b {
		if r.IntN(oneIn) == 0 {
			b[i] = byte(r.Uint32())
		} else {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
	}
}

// gather packs the eight high bits of a word in order.
func TestGather(t *testing.T) {
	for pattern := 0; pattern < 256; pattern++ {
		var m uint64
		for k := 0; k < 8; k++ {
			if pattern&(1<<k) != 0 {
				m |= 0x80 << (8 * k)
			}
		}
		if got := gather(m); got != uint64(pattern) {
			t.Fatalf("gather(%#x) = %#b, want %#b", m, got, pattern)
		}
	}
}
