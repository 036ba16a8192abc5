package compact

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/compactkit/compact/internal/swar"
)

// This file reads raw JSON bytes without decoding them: tool-call
// arguments are kept as stored, and the two questions asked of them (how
// long would JavaScript print them, and what is the string under a
// top-level key) are answered by one pass over the bytes. The standard
// decoder answers both too, but allocates for every token and is an order
// of magnitude slower on large edit arguments; the root package may not
// import a faster third-party decoder.

// jsStringifyLenFast is JSStringifyLen for well-formed input. ok is false
// when the bytes are not valid JSON as far as the scan can tell, and the
// caller falls back to the slow path.
func jsStringifyLenFast(raw []byte) (n int, ok bool) {
	i := 0
	depth := 0
	for i < len(raw) {
		c := raw[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			i++
		case '"':
			l, next, ok := jsStringLen(raw, i)
			if !ok {
				return 0, false
			}
			n += l
			i = next
		case '{', '[':
			depth++
			n++
			i++
		case '}', ']':
			depth--
			n++
			i++
		case ',', ':':
			n++
			i++
		case 't', 'f', 'n':
			j := i
			for j < len(raw) && raw[j] >= 'a' && raw[j] <= 'z' {
				j++
			}
			switch string(raw[i:j]) {
			case "true", "null":
				n += 4
			case "false":
				n += 5
			default:
				return 0, false
			}
			i = j
		default:
			if c != '-' && (c < '0' || c > '9') {
				return 0, false
			}
			j := i
			plain := true
			for j < len(raw) && (raw[j] == '-' || raw[j] == '+' || raw[j] == '.' || raw[j] == 'e' || raw[j] == 'E' || (raw[j] >= '0' && raw[j] <= '9')) {
				if raw[j] == '.' || raw[j] == 'e' || raw[j] == 'E' || raw[j] == '+' {
					plain = false
				}
				j++
			}
			digits := raw[i:j]
			if digits[0] == '-' {
				digits = digits[1:]
			}
			// Integers print as stored unless they are -0 or too long to
			// survive a double.
			if plain && len(digits) > 0 && digits[0] != '0' && len(digits) <= 15 {
				n += j - i
			} else {
				n += len(jsNumber(string(raw[i:j])))
			}
			i = j
		}
	}
	return n, depth == 0
}

// jsStringLen measures the JSON string starting at raw[start] (a quote)
// as JSON.stringify would print its value, and returns the index after
// the closing quote. It reads the bytes once: runs of plain ASCII eight
// bytes at a time up to the next byte that needs a look (swar.Stops),
// which in agent transcripts is an escaped newline or quote every dozen
// bytes or so. Escapes JSON.stringify writes back the same way count as
// stored; the others count what they decode to, printed.
func jsStringLen(raw []byte, start int) (n, next int, ok bool) {
	n = 2
	i := start + 1
	for i < len(raw) {
		if i+8 <= len(raw) {
			m := swar.Stops(binary.LittleEndian.Uint64(raw[i:]))
			if m == 0 {
				n += 8
				i += 8
				continue
			}
			k := bits.TrailingZeros64(m) >> 3
			n += k
			i += k
		}
		c := raw[i]
		switch {
		case c == '"':
			return n, i + 1, true
		case c == '\\':
			if i+1 >= len(raw) {
				return 0, 0, false
			}
			switch raw[i+1] {
			case '"', '\\', 'b', 'f', 'n', 'r', 't':
				n += 2
				i += 2
			case '/':
				n++
				i += 2
			case 'u':
				r, ok := hex4u(raw[i:])
				if !ok {
					return 0, 0, false
				}
				i += 6
				switch {
				case r == '"' || r == '\\' || r == '\b' || r == '\f' || r == '\n' || r == '\r' || r == '\t':
					n += 2
				case r < 0x20:
					n += 6
				case utf16.IsSurrogate(r):
					// A high surrogate followed by an escaped low one is a
					// pair JavaScript prints as is; a lone one it escapes.
					if r < 0xdc00 {
						if r2, ok := hex4u(raw[i:]); ok && r2 >= 0xdc00 && r2 <= 0xdfff {
							n += 2
							i += 6
							continue
						}
					}
					// Go's decoders turn a lone surrogate into U+FFFD, one
					// unit; count what the decoded text will hold.
					n++
				default:
					n++
				}
			default:
				return 0, 0, false
			}
		case c < 0x80:
			n++
			i++
		default:
			r, size := utf8.DecodeRune(raw[i:])
			if r >= 0x10000 {
				n += 2
			} else {
				n++
			}
			i += size
		}
	}
	return 0, 0, false
}

// skipString returns the index after the JSON string starting at
// raw[start], or -1. It jumps from quote to quote (the arguments of edits
// and writes hold whole files): a quote ends the string when an even run
// of backslashes precedes it.
func skipString(raw []byte, start int) int {
	for j := start + 1; j < len(raw); {
		q := bytes.IndexByte(raw[j:], '"')
		if q < 0 {
			return -1
		}
		q += j
		n := 0
		for k := q - 1; k > start && raw[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
	return -1
}

// skipValue returns the index after the JSON value starting at raw[i]
// (leading whitespace allowed), or -1.
func skipValue(raw []byte, i int) int {
	i = skipSpace(raw, i)
	if i >= len(raw) {
		return -1
	}
	switch raw[i] {
	case '"':
		return skipString(raw, i)
	case '{', '[':
		depth := 0
		for ; i < len(raw); i++ {
			switch raw[i] {
			case '"':
				j := skipString(raw, i)
				if j < 0 {
					return -1
				}
				i = j - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	default:
		for ; i < len(raw); i++ {
			switch raw[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
		}
		return i
	}
}

func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
}

// TopLevelString returns the string value stored under key in the JSON
// object raw, without decoding the other members. ok is false when raw is
// not an object, the key is absent, or its value is not a string.
func TopLevelString(raw []byte, key string) (string, bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return "", false
	}
	i++
	for {
		i = skipSpace(raw, i)
		if i >= len(raw) || raw[i] == '}' || raw[i] != '"' {
			return "", false
		}
		kend := skipString(raw, i)
		if kend < 0 {
			return "", false
		}
		k := raw[i+1 : kend-1]
		i = skipSpace(raw, kend)
		if i >= len(raw) || raw[i] != ':' {
			return "", false
		}
		i = skipSpace(raw, i+1)
		vend := skipValue(raw, i)
		if vend < 0 {
			return "", false
		}
		if string(k) == key {
			if raw[i] != '"' {
				return "", false
			}
			if inner := raw[i+1 : vend-1]; bytes.IndexByte(inner, '\\') < 0 {
				return string(inner), true
			}
			return unquote(raw[i+1 : vend-1])
		}
		i = skipSpace(raw, vend)
		if i < len(raw) && raw[i] == ',' {
			i++
		}
	}
}

// TopLevelValues sets vals[k] to the raw JSON value of the member keys[k]
// of the object raw, in one pass over its members and decoding none: a
// key present more than once takes its last value, as decoding into a
// map does, and the value of an absent key stays as it was (nil). A raw
// that is no object leaves them all. It returns false when it cannot read
// raw this way: a key written with an escape, or JSON cut short. vals must
// be as long as keys.
func TopLevelValues(raw []byte, keys []string, vals [][]byte) bool {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return true
	}
	i++
	for {
		i = skipSpace(raw, i)
		if i >= len(raw) || raw[i] != '"' {
			return true // the object's "}"
		}
		kend := skipString(raw, i)
		if kend < 0 {
			return false
		}
		key := raw[i+1 : kend-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return false
		}
		i = skipSpace(raw, kend)
		if i >= len(raw) || raw[i] != ':' {
			return false
		}
		i = skipSpace(raw, i+1)
		vend := skipValue(raw, i)
		if vend < 0 {
			return false
		}
		for k, want := range keys {
			if string(key) == want {
				vals[k] = raw[i:vend]
			}
		}
		i = skipSpace(raw, vend)
		if i < len(raw) && raw[i] == ',' {
			i++
		}
	}
}

// unquote decodes the inside of a JSON string literal that holds escapes
// as encoding/json does, without its reflection and allocations (a shell
// command is read this way from every call): a \u escape of half a
// surrogate pair and every byte that is not valid UTF-8 become U+FFFD. ok
// is false for an invalid escape or a control character, which
// encoding/json refuses.
func unquote(s []byte) (string, bool) {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 >= len(s) {
				return "", false
			}
			switch e := s[i+1]; e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r, ok := hex4u(s[i:])
				if !ok {
					return "", false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					r2, ok := hex4u(s[i:])
					if dec := utf16.DecodeRune(r, r2); ok && dec != utf8.RuneError {
						r = dec
						i += 6
					} else {
						r = utf8.RuneError
					}
				}
				b = utf8.AppendRune(b, r)
				continue
			default:
				return "", false
			}
			i += 2
		case c < 0x20:
			return "", false
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
		}
	}
	return unsafe.String(unsafe.SliceData(b), len(b)), true
}

// hex4u reads the escape \uXXXX at the start of s.
func hex4u(s []byte) (rune, bool) {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return 0, false
	}
	v, err := strconv.ParseUint(string(s[2:6]), 16, 16)
	return rune(v), err == nil
}
