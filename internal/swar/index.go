package swar

import (
	"encoding/binary"
	"math/bits"
)

// Index returns the index of the first stop in b (a byte IsStop accepts),
// or len(b) when there is none. On amd64 it tests sixteen bytes at a time
// with SSE2 (vec_amd64.s), elsewhere eight with Stops.
func Index(b []byte) int {
	i := 0
	if len(b) >= 16 {
		if i = index16(b); i < len(b)&^15 {
			return i
		}
	}
	for ; i+8 <= len(b); i += 8 {
		if m := Stops(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for i < len(b) && !IsStop(b[i]) {
		i++
	}
	return i
}

// Mask64 returns the stops of the 64 bytes at b as a mask, byte k giving
// bit k. Every stop is marked. On amd64 (vec_amd64.s) nothing else is;
// elsewhere, where the mask is built from Stops, bytes above a stop may be
// marked falsely, so a caller must check the byte at each mark it uses.
func Mask64(b *[64]byte) uint64 { return mask64(b) }
