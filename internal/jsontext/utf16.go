package jsontext

import (
	"encoding/binary"
	"unicode/utf8"

	"github.com/compactkit/compact/internal/swar"
	"github.com/compactkit/compact/internal/zerocopy"
)

// UTF16Len counts the UTF-16 code units of s: what JavaScript's
// String.length returns for the same text. Each byte of invalid UTF-8
// counts one unit, as the replacement character a decoder puts in its
// place.
func UTF16Len(s string) int {
	// Read the string's bytes in place; UTF16LenBytes neither keeps nor
	// modifies them.
	return UTF16LenBytes(zerocopy.Bytes(s))
}

// UTF16LenBytes is UTF16Len for bytes. ASCII, the bulk of agent
// transcripts, is counted 32 or 8 bytes at a time (asciiWords).
func UTF16LenBytes(s []byte) int {
	n := 0
	for i := 0; i < len(s); {
		k := asciiWords(s[i:])
		n += k
		i += k
		if i == len(s) {
			break
		}
		units, size := runeUnits(s[i:])
		n += units
		i += size
	}
	return n
}

// runeUnits returns the UTF-16 units of the character that starts s and
// its length in bytes.
func runeUnits(s []byte) (units, size int) {
	if s[0] < utf8.RuneSelf {
		return 1, 1
	}
	r, size := utf8.DecodeRune(s)
	if r >= 0x10000 {
		return 2, size
	}
	return 1, size
}

// CutUTF16 returns the longest prefix of s, in whole characters, whose
// length in UTF-16 units is at most n.
func CutUTF16(s string, n int) string {
	size := 0
	for i, r := range s {
		w := 1
		if r >= 0x10000 {
			w = 2
		}
		if size+w > n {
			return s[:i]
		}
		size += w
	}
	return s
}

// RuneOffset returns the byte offset at which the n-th character (rune,
// counted from 0) of s starts, or len(s) when s has n characters or
// fewer. It is where a cut of a text "after n characters" falls without
// splitting a character: s[:RuneOffset(s, n)] holds the first n.
//
// Characters are counted as a range loop counts them (each byte of
// invalid UTF-8 is one); runs of ASCII, the bulk of agent transcripts,
// are skipped 32 or 8 bytes at a time.
func RuneOffset(s string, n int) int {
	if n < 0 {
		// A range loop never meets a negative count: the whole text.
		return len(s)
	}
	// Read the string's bytes in place; they are neither kept nor modified.
	b := zerocopy.Bytes(s)
	i := 0
	for n > 0 && i < len(b) {
		k := asciiWords(b[i : i+min(n, len(b)-i)])
		i += k
		n -= k
		if n == 0 || i == len(b) {
			break
		}
		_, size := runeUnits(b[i:])
		i += size
		n--
	}
	return i
}

// RuneCount returns the number of characters (runes) in s, counted as
// utf8.RuneCountInString counts them (each byte of invalid UTF-8 is
// one), with runs of ASCII counted 32 or 8 bytes at a time.
func RuneCount(s string) int {
	// Read the string's bytes in place; they are neither kept nor modified.
	b := zerocopy.Bytes(s)
	n := 0
	for i := 0; i < len(b); {
		k := asciiWords(b[i:])
		n += k
		i += k
		if i == len(b) {
			break
		}
		_, size := runeUnits(b[i:])
		i += size
		n++
	}
	return n
}

// asciiWords returns how many bytes at the start of b are ASCII, read a
// word of eight at a time (four words at once while they last), so a
// multiple of eight: the caller steps over the rest a character at a time.
func asciiWords(b []byte) int {
	i := 0
	for i+32 <= len(b) && (binary.LittleEndian.Uint64(b[i:])|binary.LittleEndian.Uint64(b[i+8:])|
		binary.LittleEndian.Uint64(b[i+16:])|binary.LittleEndian.Uint64(b[i+24:]))&swar.Highs == 0 {
		i += 32
	}
	for i+8 <= len(b) && binary.LittleEndian.Uint64(b[i:])&swar.Highs == 0 {
		i += 8
	}
	return i
}

// Shorten cuts s to at most n characters (n >= 1, counted as RuneOffset
// counts them), marking a cut with "…", which counts as one of them: the
// previews of messages in the report, the conversation API and the live
// view.
func Shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return s[:RuneOffset(s, n-1)] + "…"
}
