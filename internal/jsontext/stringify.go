package jsontext

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/compactkit/compact/internal/swar"
)

// StringifyLen returns the length in UTF-16 code units of
// JSON.stringify(JSON.parse(raw)) in JavaScript: compact, keys in their
// stored order, no escaping of HTML or non-ASCII characters. Empty input
// counts as "null"; input that does not parse counts its raw length.
//
// One pass over the bytes answers for well-formed input; anything it
// cannot read is measured again token by token with encoding/json's
// decoder, which tells a document it does not accept.
func StringifyLen(raw []byte) int {
	if len(bytes.TrimSpace(raw)) == 0 {
		// JSON.stringify(undefined) is undefined; pi would then throw on
		// .length. Count what the nearest valid value, null, would give.
		return 4
	}
	if n, ok := stringifyLenFast(raw); ok {
		return n
	}
	n, ok := decoderLen(raw)
	if !ok {
		return UTF16LenBytes(raw)
	}
	return n
}

// stringifyLenFast is StringifyLen for well-formed input. ok is false
// when the bytes are not valid JSON as far as the scan can tell, and the
// caller falls back to the slow path.
func stringifyLenFast(raw []byte) (n int, ok bool) {
	i := 0
	depth := 0
	for i < len(raw) {
		c := raw[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			i++
		case '"':
			l, next, ok := stringLen(raw, i)
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

// stringLen measures the JSON string starting at raw[start] (a quote)
// as JSON.stringify would print its value, and returns the index after
// the closing quote. It reads the bytes once: runs of plain ASCII eight
// bytes at a time up to the next byte that needs a look (swar.Stops),
// which in agent transcripts is an escaped newline or quote every dozen
// bytes or so. Escapes JSON.stringify writes back the same way count as
// stored; the others count what they decode to, printed.
func stringLen(raw []byte, start int) (n, next int, ok bool) {
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
				r, ok := hex4(raw[i:])
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
						if r2, ok := hex4(raw[i:]); ok && r2 >= 0xdc00 && r2 <= 0xdfff {
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

// decoderLen walks a JSON document with a decoder and adds up the length of
// each token as JSON.stringify would print it.
func decoderLen(raw []byte) (int, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	n := 0
	// Each open container remembers whether it is an object, how many
	// members it holds so far (for commas) and whether a key is due next.
	type frame struct {
		obj     bool
		members int
		wantKey bool
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err != nil {
			if err.Error() == "EOF" {
				return n, len(stack) == 0
			}
			return 0, false
		}
		// Separators before this token.
		if len(stack) > 0 {
			top := &stack[len(stack)-1]
			if d, ok := tok.(json.Delim); !ok || (d != '}' && d != ']') {
				if top.obj {
					if top.wantKey {
						if top.members > 0 {
							n++ // comma
						}
					} else {
						n++ // colon
					}
				} else if top.members > 0 {
					n++ // comma
				}
			}
		}
		isValue := true
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				n++
				stack = append(stack, frame{obj: t == '{', wantKey: t == '{'})
				isValue = false
			case '}', ']':
				n++
				stack = stack[:len(stack)-1]
			}
		case string:
			n += quotedLen(t)
		case json.Number:
			n += len(jsNumber(string(t)))
		case bool:
			if t {
				n += 4
			} else {
				n += 5
			}
		case nil:
			n += 4
		}
		if !isValue {
			continue
		}
		// A complete key or value was written into the enclosing container.
		if len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.obj {
				if top.wantKey {
					top.wantKey = false
				} else {
					top.wantKey = true
					top.members++
				}
			} else {
				top.members++
			}
		}
	}
}

// quotedLen is the UTF-16 length of JSON.stringify(s).
func quotedLen(s string) int {
	n := 2
	for _, r := range s {
		switch {
		case r == '"' || r == '\\' || r == '\b' || r == '\f' || r == '\n' || r == '\r' || r == '\t':
			n += 2
		case r < 0x20:
			n += 6
		case r >= 0x10000:
			n += 2
		default:
			n++
		}
	}
	return n
}

// jsNumber formats the JSON number s the way JavaScript prints it after
// a round trip through a double: 1.50 is 1.5, 1e-7 is 1e-7 (Go writes
// 1e-07), 12345678901234567890 is 12345678901234567000. A string that is
// no number is returned as it is.
func jsNumber(s string) string {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	if f == 0 {
		return "0"
	}
	abs := math.Abs(f)
	if abs >= 1e-6 && abs < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	// Exponent form: JavaScript writes 1e+21, Go writes 1e+21 too, but Go
	// pads the exponent to two digits ("1e-07"); JavaScript does not.
	out := strconv.FormatFloat(f, 'e', -1, 64)
	if i := bytes.IndexAny([]byte(out), "e"); i >= 0 {
		mant, exp := out[:i], out[i+1:]
		sign := exp[0]
		digits := exp[1:]
		for len(digits) > 1 && digits[0] == '0' {
			digits = digits[1:]
		}
		out = mant + "e" + string(sign) + digits
	}
	return out
}
