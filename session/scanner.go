package session

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/compactkit/compact/internal/swar"
)

// This file holds the fast decoder's JSON scanner: objects, keys,
// literals, numbers, skipped values and strings (with the SWAR scan for
// the bytes that end a plain run, and the escapes JSON.stringify writes).

// object walks the object at d.i (after white space), calling member with
// each key and d.i at its value; member must move past the value. Keys
// must be plain: printable ASCII without escapes.
func (d *fastDecoder) object(member func(key string) bool) bool {
	d.ws()
	if d.i >= len(d.b) || d.b[d.i] != '{' {
		return false
	}
	d.i++
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == '}' {
		d.i++
		return true
	}
	for {
		key, ok := d.key()
		if !ok || !member(key) {
			return false
		}
		d.ws()
		if d.i >= len(d.b) {
			return false
		}
		switch d.b[d.i] {
		case ',':
			d.i++
			d.ws()
		case '}':
			d.i++
			return true
		default:
			return false
		}
	}
}

// key reads a plain member name and the colon after it, leaving d.i at
// the value. The name points into the line.
func (d *fastDecoder) key() (string, bool) {
	b, i := d.b, d.i
	if i >= len(b) || b[i] != '"' {
		return "", false
	}
	i++
	start := i
	for i < len(b) {
		c := b[i]
		if c == '"' {
			break
		}
		if c < 0x20 || c >= 0x80 || c == '\\' {
			return "", false
		}
		i++
	}
	if i >= len(b) || i == start {
		return "", false
	}
	key := unsafe.String(&b[start], i-start)
	d.i = i + 1
	d.ws()
	if d.i >= len(b) || b[d.i] != ':' {
		return "", false
	}
	d.i++
	d.ws()
	return key, true
}

func (d *fastDecoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// peek returns the byte at d.i, 0 at the end.
func (d *fastDecoder) peek() byte {
	if d.i >= len(d.b) {
		return 0
	}
	return d.b[d.i]
}

func (d *fastDecoder) literal(lit string) bool {
	if len(d.b)-d.i < len(lit) || string(d.b[d.i:d.i+len(lit)]) != lit {
		return false
	}
	d.i += len(lit)
	return true
}

func (d *fastDecoder) null() bool { return d.literal("null") }

// stringOrNull decodes a string, or null (which leaves a Go string empty).
func (d *fastDecoder) stringOrNull() (s string, null, ok bool) {
	switch d.peek() {
	case '"':
		s, ok = d.str()
		return s, false, ok
	case 'n':
		return "", true, d.null()
	}
	return "", false, false
}

// intOrNull decodes an integer of at most 18 digits, or null.
func (d *fastDecoder) intOrNull() (v int, null, ok bool) {
	if d.peek() == 'n' {
		return 0, true, d.null()
	}
	v, isInt, ok := d.number()
	return v, false, ok && isInt
}

// boolOrNull decodes true, false or null (false).
func (d *fastDecoder) boolOrNull() (v, ok bool) {
	switch d.peek() {
	case 't':
		return true, d.literal("true")
	case 'f':
		return false, d.literal("false")
	case 'n':
		return false, d.null()
	}
	return false, false
}

// raw moves past any value and returns its bytes, capacity cut.
func (d *fastDecoder) raw() ([]byte, bool) {
	start := d.i
	if !d.skip(0) {
		return nil, false
	}
	return d.b[start:d.i:d.i], true
}

// number moves past a number and returns its value when it is an integer
// of at most 18 digits (isInt).
func (d *fastDecoder) number() (v int, isInt, ok bool) {
	b, i := d.b, d.i
	neg := false
	if i < len(b) && b[i] == '-' {
		neg = true
		i++
	}
	digits := i
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			v = v*10 + int(b[i]-'0')
			i++
		}
	default:
		return 0, false, false
	}
	isInt = i-digits <= 18
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return 0, false, false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		isInt = false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return 0, false, false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		isInt = false
	}
	d.i = i
	if !isInt {
		return 0, false, true
	}
	if neg {
		v = -v
	}
	return v, true, true
}

// skip moves past one value, checking it is valid JSON.
func (d *fastDecoder) skip(depth int) bool {
	if depth > maxDepth {
		return false
	}
	switch d.peek() {
	case '"':
		return d.skipString()
	case '{':
		d.i++
		d.ws()
		if d.peek() == '}' {
			d.i++
			return true
		}
		for {
			if d.peek() != '"' {
				return false
			}
			if !d.skipString() {
				return false
			}
			d.ws()
			if d.peek() != ':' {
				return false
			}
			d.i++
			d.ws()
			if !d.skip(depth + 1) {
				return false
			}
			d.ws()
			switch d.peek() {
			case ',':
				d.i++
				d.ws()
			case '}':
				d.i++
				return true
			default:
				return false
			}
		}
	case '[':
		d.i++
		d.ws()
		if d.peek() == ']' {
			d.i++
			return true
		}
		for {
			if !d.skip(depth + 1) {
				return false
			}
			d.ws()
			switch d.peek() {
			case ',':
				d.i++
				d.ws()
			case ']':
				d.i++
				return true
			default:
				return false
			}
		}
	case 't':
		return d.literal("true")
	case 'f':
		return d.literal("false")
	case 'n':
		return d.null()
	}
	_, _, ok := d.number()
	return ok
}

// nextStop returns the index of the first byte of b from i on that is a
// stop (swar.IsStop), len(b) if none.
func nextStop(b []byte, i int) int {
	if i+8 <= len(b) {
		// Most strings end within a word: test it here, inlined, before
		// calling out to the vector scan.
		if m := swar.Stops(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	return i + swar.Index(b[i:])
}

// blockMin is how many bytes must be left in the line for str to read a
// block: 64 bytes and the 8 that an escape at the end of a block may look
// at.
const blockMin = 72

// str decodes the string whose opening quote is at d.i and moves past it.
// A string that holds no escapes and only valid UTF-8 is returned as a
// piece of the line; one with escapes is decoded into d.tmp and copied
// out; one with bytes that are not valid UTF-8 is decoded by unescape,
// which replaces them.
func (d *fastDecoder) str() (string, bool) { return d.scanString(true) }

// skipString moves past the string whose opening quote is at d.i,
// checking it.
func (d *fastDecoder) skipString() bool {
	_, ok := d.scanString(false)
	return ok
}

// simpleEscapes maps the byte after a backslash to what the two-byte
// escape stands for; 0 for u, which is longer, for / (\/, which
// JSON.stringify does not write, is left to escape, which notes it) and
// for bytes that do not make an escape.
var simpleEscapes = [256]byte{'"': '"', '\\': '\\', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// scanString checks the string whose opening quote is at d.i, moves past
// it and, with decode, returns its value.
//
// It looks for the bytes that end a run of plain bytes (swar.IsStop) one
// at a time until the string shows an escape. From then on, since long
// texts have an escape every few bytes (newlines, quotes), it marks the
// stops of 64 bytes at once (swar.Mask64) and walks the marks, which
// saves a mispredicted branch per escape. When decoding, the plain bytes are copied to d.tmp run by
// run as the escapes are decoded; w is how much of d.tmp is filled and
// prev where the bytes not yet copied start in the line.
func (d *fastDecoder) scanString(decode bool) (string, bool) {
	b, tmp := d.b, d.tmp
	i := d.i + 1
	start, prev, w := i, i, 0
	d.odd = false
	escaped, invalid := false, false
	next := 0 // stops before next were consumed by an escape or a rune
	for {
		i = nextStop(b, max(i, next))
		if i >= len(b) {
			return "", false
		}
		c := b[i]
		switch {
		case c == '"':
			d.i = i + 1
			return d.finish(start, i, prev, w, decode, escaped, invalid), true
		case c == '\\':
			escaped = true
			if len(b)-i < blockMin {
				n, ok := 0, false
				if n, w, prev, ok = d.escape(i, decode, w, prev); !ok {
					return "", false
				}
				i += n
				continue
			}
		case c < 0x20:
			return "", false
		default:
			if !invalid {
				r, size := utf8.DecodeRune(b[i:])
				if r == utf8.RuneError && size == 1 {
					invalid = true
				}
				i += size
			} else {
				i++
			}
			continue
		}
		// Escapes from here on: 64 bytes at a time, while the line has
		// blockMin bytes left, so that an escape at the end of a block
		// can be read without more checks.
		for len(b)-i >= blockMin {
			blk := (*[64]byte)(b[i : i+64])
			m := swar.Mask64(blk)
			if next > i {
				if next-i >= 64 {
					i += 64
					continue
				}
				m &^= 1<<(next-i) - 1
			}
			for m != 0 {
				pos := i + bits.TrailingZeros64(m)
				m &= m - 1
				switch c := b[pos]; {
				case c == '\\':
					if r := simpleEscapes[b[pos+1]]; r != 0 {
						if decode {
							// The run is copied eight bytes at a time: the
							// line has 8 bytes beyond the block and tmp
							// has room for it (see fast).
							for k := prev; k < pos; k += 8 {
								binary.LittleEndian.PutUint64(tmp[w+k-prev:], binary.LittleEndian.Uint64(b[k:]))
							}
							w += pos - prev
							tmp[w] = r
							w++
							prev = pos + 2
						}
						next = pos + 2
					} else {
						n, ok := 0, false
						if n, w, prev, ok = d.escape(pos, decode, w, prev); !ok {
							return "", false
						}
						next = pos + n
					}
				case c == '"':
					d.i = pos + 1
					return d.finish(start, pos, prev, w, decode, true, invalid), true
				case c < 0x20:
					return "", false
				case c >= 0x80:
					if invalid {
						continue
					}
					r, size := utf8.DecodeRune(b[pos:])
					if r == utf8.RuneError && size == 1 {
						invalid = true
					}
					next = pos + size
				default: // marked falsely (swar.Mask64 without SSE2)
					continue
				}
				// Drop the marks of the bytes just consumed.
				if next-i >= 64 {
					m = 0
				} else {
					m &^= 1<<(next-i) - 1
				}
			}
			i += 64
		}
	}
}

// escape checks the escape at b[pos] (a backslash) and returns its length:
// 2, 6 for \uXXXX, 12 for a surrogate pair, which decodes to one rune
// (half a pair decodes to U+FFFD). With decode set, it copies the plain
// bytes from prev and the decoded escape to d.tmp at w, and returns the
// new w and prev. It sets d.odd for an escape JSON.stringify does not
// write (\/, and \u except for a control character without a two-byte
// escape, in lower case): a string with none is canonical, its stored
// bytes its decoded text escaped again (escapeStored).
func (d *fastDecoder) escape(pos int, decode bool, w, prev int) (n, w2, prev2 int, ok bool) {
	b := d.b
	if pos+1 >= len(b) {
		return 0, w, prev, false
	}
	c := simpleEscapes[b[pos+1]]
	if b[pos+1] == '/' {
		c, d.odd = '/', true
	}
	if c != 0 {
		if decode {
			w += copy(d.tmp[w:], b[prev:pos])
			d.tmp[w] = c
			w++
		}
		return 2, w, pos + 2, true
	}
	if b[pos+1] != 'u' {
		return 0, w, prev, false
	}
	r, ok := u4(b[pos:])
	if !ok {
		return 0, w, prev, false
	}
	if !stringifyEscape(b[pos+2:pos+6], r) {
		d.odd = true
	}
	n = 6
	if utf16.IsSurrogate(r) {
		r2, ok := u4(b[pos+6:])
		if dec := utf16.DecodeRune(r, r2); ok && dec != unicode.ReplacementChar {
			n, r = 12, dec
		} else {
			r = unicode.ReplacementChar
		}
	}
	if decode {
		w += copy(d.tmp[w:], b[prev:pos])
		w += utf8.EncodeRune(d.tmp[w:], r)
	}
	return n, w, pos + n, true
}

// stringifyEscape reports whether \u followed by the four hex digits
// hex, which spell r, is how JSON.stringify writes r: only control
// characters without a two-byte escape are written so, in lower case.
func stringifyEscape(hex []byte, r rune) bool {
	switch r {
	case '\b', '\f', '\n', '\r', '\t':
		return false
	}
	return r < 0x20 && hex[0] == '0' && hex[1] == '0' && (hex[3] <= '9' || hex[3] >= 'a')
}

// finish returns the value of the string b[start:end] (its contents,
// escapes not decoded) that scanString has checked; prev and w are
// scanString's.
func (d *fastDecoder) finish(start, end, prev, w int, decode, escaped, invalid bool) string {
	b := d.b
	switch {
	case !decode:
		return ""
	case invalid:
		return d.unescape(b[start:end])
	case escaped:
		w += copy(d.tmp[w:], b[prev:end])
		if w > 0 && (d.inPlace || d.rebuild && !d.odd) {
			return d.overwrite(start, d.tmp[:w])
		}
		return d.keep(d.tmp[:w])
	case end == start:
		return ""
	}
	return unsafe.String(&b[start], end-start)
}

// u4 decodes the escape \uXXXX at the start of b.
func u4(b []byte) (rune, bool) {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' || !isHex(b[2]) || !isHex(b[3]) || !isHex(b[4]) || !isHex(b[5]) {
		return 0, false
	}
	return hex4(b[2:]), true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// unescape decodes the contents of a string literal that scanString
// accepted and found to hold bytes that are not valid UTF-8, the way
// encoding/json does: escapes are decoded, and both a \u escape of half a
// surrogate pair and every byte that is not part of valid UTF-8 become
// U+FFFD. The result goes to the string chunk when it fits there.
func (d *fastDecoder) unescape(s []byte) string {
	// Escapes never make the string longer; the replaced bytes do (U+FFFD
	// takes three), and then append moves the result out of the chunk.
	out := unescapeTo(d.strSpace(len(s)), s)
	if len(out) == 0 {
		return ""
	}
	d.strUsed(out)
	return unsafe.String(&out[0], len(out))
}

// unescapeTo appends the decoded contents of s, a checked string literal
// without its quotes, to dst (see unescape).
func unescapeTo(dst, s []byte) []byte {
	r := 0
	for r < len(s) {
		// The run up to the next escape, with invalid bytes replaced.
		k := bytes.IndexByte(s[r:], '\\')
		if k < 0 {
			k = len(s) - r
		}
		dst = appendUTF8(dst, s[r:r+k])
		r += k
		if r >= len(s) {
			break
		}
		c := simpleEscapes[s[r+1]]
		if s[r+1] == '/' {
			c = '/'
		}
		if c != 0 {
			dst = append(dst, c)
			r += 2
			continue
		}
		// \uXXXX, checked by scanString.
		rr := hex4(s[r+2:])
		r += 6
		if utf16.IsSurrogate(rr) {
			rr2, ok := u4(s[r:])
			if dec := utf16.DecodeRune(rr, rr2); ok && dec != unicode.ReplacementChar {
				r += 6
				rr = dec
			} else {
				rr = unicode.ReplacementChar
			}
		}
		dst = utf8.AppendRune(dst, rr)
	}
	return dst
}

// appendUTF8 appends s to dst with every byte that is not part of valid
// UTF-8 replaced by U+FFFD.
func appendUTF8(dst, s []byte) []byte {
	for len(s) > 0 {
		if s[0] < utf8.RuneSelf {
			dst = append(dst, s[0])
			s = s[1:]
			continue
		}
		r, size := utf8.DecodeRune(s)
		dst = utf8.AppendRune(dst, r)
		s = s[size:]
	}
	return dst
}

// hex4 decodes four hex digits (already checked).
func hex4(s []byte) rune {
	var r rune
	for _, c := range s[:4] {
		switch {
		case c <= '9':
			c -= '0'
		case c >= 'a':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}
