//go:build !amd64 || purego

package swar

import (
	"encoding/binary"
	"math/bits"
)

// index16 is vec_amd64.s's, a word at a time.
func index16(b []byte) int {
	n := len(b) &^ 15
	for i := 0; i < n; i += 8 {
		if m := Stops(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	return n
}

// mask64 is vec_amd64.s's, a word at a time. Unlike it, it may mark bytes
// above a stop falsely (see Stops).
func mask64(b *[64]byte) uint64 {
	var m uint64
	for k := 0; k < 64; k += 8 {
		m |= gather(Stops(binary.LittleEndian.Uint64(b[k:]))) << k
	}
	return m
}

// exactMask says whether mask64 marks only stops.
const exactMask = false
