// Package swar holds the word-at-a-time byte tests (SIMD within a
// register) that the JSON readers of compact and compact/session share:
// eight bytes of a string, read little-endian into a uint64, are tested at
// once. It is a package of its own so that the root package, which
// measures raw tool arguments, and the session decoder scan strings the
// same way from one definition.
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
