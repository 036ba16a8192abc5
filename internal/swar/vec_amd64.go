//go:build !purego

package swar

// index16 returns the index of the first stop in b's whole sixteen-byte
// blocks, or the length of those blocks (len(b) rounded down to a
// multiple of 16) when they hold none.
//
//go:noescape
func index16(b []byte) int

// mask64 returns the stop mask of the 64 bytes at b: bit k is set when
// byte k is a stop (IsStop), and no other bit is.
//
//go:noescape
func mask64(b *[64]byte) uint64

// exactMask says whether mask64 marks only stops.
const exactMask = true
