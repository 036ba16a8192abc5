package compact

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/compactkit/compact/internal/swar"
)

// ImageTokens is the estimate for one image, wherever it appears.
const ImageTokens = 1200

// imageChars is ImageTokens expressed in characters, so that an image adds
// to a message's character count before the division by four.
const imageChars = ImageTokens * 4

// EstimateTokens estimates a message's tokens as ceil(chars / 4), counting
// characters as UTF-16 code units, the way pi does, so that plans match
// pi's on the same file:
//
//   - user, custom and tool results: their text parts, plus 4800 chars
//     (1200 tokens) per image;
//   - assistant: text, thinking, and for each tool call its name plus its
//     arguments as JavaScript's JSON.stringify writes them;
//   - bash executions: command plus output;
//   - summaries: the summary text.
//
// The estimate ignores the system prompt and tool schemas. It is cheap and
// deliberately simple; providers' reported usage corrects it (see Measure).
func EstimateTokens(m *Message) int {
	return (messageChars(m) + 3) / 4
}

// utf16Len counts the UTF-16 code units of s (what JavaScript's
// String.length returns). Each byte of invalid UTF-8 counts one unit, as
// the replacement character a decoder puts in its place.
func utf16Len(s string) int {
	// Read the string's bytes in place; utf16LenBytes does not keep or
	// modify them.
	return utf16LenBytes(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// utf16LenBytes is utf16Len for bytes. ASCII, the bulk of agent
// transcripts, is counted eight bytes at a time.
func utf16LenBytes(s []byte) int {
	n := 0
	for i := 0; i < len(s); {
		if i+32 <= len(s) && (binary.LittleEndian.Uint64(s[i:])|binary.LittleEndian.Uint64(s[i+8:])|
			binary.LittleEndian.Uint64(s[i+16:])|binary.LittleEndian.Uint64(s[i+24:]))&swar.Highs == 0 {
			n += 32
			i += 32
			continue
		}
		if i+8 <= len(s) && binary.LittleEndian.Uint64(s[i:])&swar.Highs == 0 {
			n += 8
			i += 8
			continue
		}
		units, size := utf16Rune(s[i:])
		n += units
		i += size
	}
	return n
}

// utf16Rune returns the UTF-16 units of the character starting s and its
// length in bytes.
func utf16Rune(s []byte) (units, size int) {
	if s[0] < utf8.RuneSelf {
		return 1, 1
	}
	r, size := utf8.DecodeRune(s)
	if r >= 0x10000 {
		return 2, size
	}
	return 1, size
}

// JSStringifyLen returns the length in UTF-16 code units of
// JSON.stringify(JSON.parse(raw)) in JavaScript: compact, keys in their
// stored order, no escaping of HTML or non-ASCII characters. Empty input
// counts as "null"; input that does not parse counts its raw length.
func JSStringifyLen(raw json.RawMessage) int {
	if len(bytes.TrimSpace(raw)) == 0 {
		// JSON.stringify(undefined) is undefined; pi would then throw on
		// .length. Count what the nearest valid value, null, would give.
		return 4
	}
	if n, ok := jsStringifyLenFast(raw); ok {
		return n
	}
	n, ok := jsLen(raw)
	if !ok {
		return utf16Len(string(raw))
	}
	return n
}

// jsLen walks a JSON document with a decoder and adds up the length of
// each token as JSON.stringify would print it.
func jsLen(raw []byte) (int, bool) {
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
			n += jsQuotedLen(t)
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

// jsQuotedLen is the UTF-16 length of JSON.stringify(s).
func jsQuotedLen(s string) int {
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

// jsNumber formats a JSON number the way JavaScript prints it after a
// round trip through a double.
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
