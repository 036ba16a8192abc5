// Package zerocopy turns bytes into a string and a string into bytes
// without copying them, for the few hot paths that build a text in a
// buffer only to read it (a token estimate, a decoded JSON string).
//
// The caller promises what the compiler cannot check: the bytes are not
// changed while the string is in use (String), and the bytes of a string
// are only read (Bytes). Keeping the two conversions here keeps the
// unsafe package out of the packages that use them.
package zerocopy

import "unsafe"

// String returns a string that shares b's bytes. b must not be modified
// while the string is in use.
func String(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// Bytes returns the bytes of s, shared with s. They must not be modified.
func Bytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
