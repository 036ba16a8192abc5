// Package swar holds the byte tests that the JSON readers of
// internal/jsontext and compact/session share: which bytes end a run of
// plain string bytes.
// Stops tests the eight bytes of a word at once (SIMD within a register),
// read little-endian into a uint64. Index and Mask64 test longer runs: on
// amd64 with SSE2, sixteen bytes an instruction (vec_amd64.s; SSE2 is part
// of every amd64 CPU, so no feature check is needed), elsewhere, or when
// built with the purego tag, with Stops. It is a package of its own so
// that jsontext, which measures raw tool arguments, and the session
// decoder scan strings the same way from one definition.
//
// The vector code is hand-written assembly because no maintained module
// offers "index of the first byte in a set" with SIMD; bytes.IndexAny
// tests a byte at a time. On the real pi sessions (session's
// BenchmarkDecode, one goroutine) SSE2 decodes 5-7 % faster than Stops. A
// form with AVX2 (32 bytes an instruction) was no faster on the 974 KB
// session and about 5 % faster on the 2.4 MB one: not enough for a CPU
// feature check and a second copy of the assembly, so only SSE2 is kept.
package swar

const (
	// Ones has every byte 0x01.
	Ones = 0x0101010101010101
	// Highs has every byte 0x80, the high bit of each.
	Highs = 0x8080808080808080
)

// Stops has the high bit set in the bytes of w that end a run of plain
// JSON string bytes: a quote, a backslash, a control character, or a byte
// that is not ASCII. Only the lowest marked byte is sure to be one; the
// bytes above it may be marked falsely (a borrow runs upward), which does
// not matter to a scan that stops at the lowest.
func Stops(w uint64) uint64 {
	q := w ^ (Ones * '"')
	s := w ^ (Ones * '\\')
	return ((q-Ones)&^q | (s-Ones)&^s | (w - Ones*0x20) | w) & Highs
}

// IsStop reports whether Stops marks c: a quote, a backslash, a control
// character or a byte that is not ASCII.
func IsStop(c byte) bool { return c == '"' || c == '\\' || c < 0x20 || c >= 0x80 }

// gather packs the high bits of the eight bytes of m (its only bits) into
// the low eight bits, byte k giving bit k.
func gather(m uint64) uint64 { return (m >> 7) * 0x0102040810204080 >> 56 }
