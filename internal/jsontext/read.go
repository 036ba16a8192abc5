package jsontext

import (
	"bytes"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/compactkit/compact/internal/zerocopy"
)

// TopLevelString returns the string value stored under key in the JSON
// object raw, without decoding the other members; the first member named
// key answers. ok is false when raw is not an object, the key is absent,
// its value is not a string, or the object cannot be read up to it.
func TopLevelString(raw []byte, key string) (string, bool) {
	i := SkipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return "", false
	}
	i++
	for {
		i = SkipSpace(raw, i)
		if i >= len(raw) || raw[i] != '"' {
			return "", false
		}
		kend := SkipString(raw, i)
		if kend < 0 {
			return "", false
		}
		k := raw[i+1 : kend-1]
		i = SkipSpace(raw, kend)
		if i >= len(raw) || raw[i] != ':' {
			return "", false
		}
		i = SkipSpace(raw, i+1)
		vend := SkipValue(raw, i)
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
			return Unquote(raw[i+1 : vend-1])
		}
		i = SkipSpace(raw, vend)
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
// raw this way: a key written with an escape, or JSON cut short or with a
// value missing. vals must be as long as keys.
func TopLevelValues(raw []byte, keys []string, vals [][]byte) bool {
	i := SkipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return true
	}
	i++
	for {
		i = SkipSpace(raw, i)
		if i >= len(raw) || raw[i] != '"' {
			return true // the object's "}"
		}
		kend := SkipString(raw, i)
		if kend < 0 {
			return false
		}
		key := raw[i+1 : kend-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return false
		}
		i = SkipSpace(raw, kend)
		if i >= len(raw) || raw[i] != ':' {
			return false
		}
		i = SkipSpace(raw, i+1)
		vend := SkipValue(raw, i)
		if vend < 0 {
			return false
		}
		for k, want := range keys {
			if string(key) == want {
				vals[k] = raw[i:vend]
			}
		}
		i = SkipSpace(raw, vend)
		if i < len(raw) && raw[i] == ',' {
			i++
		}
	}
}

// Unquote decodes s, the inside of a JSON string literal (without its
// quotes), as encoding/json does, without its reflection and allocations
// beyond the result (a shell command is read this way from every call): a
// \u escape of half a surrogate pair and every byte that is not valid
// UTF-8 become U+FFFD. ok is false for an invalid escape or a control
// character, which encoding/json refuses.
func Unquote(s []byte) (string, bool) {
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
				r, ok := hex4(s[i:])
				if !ok {
					return "", false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					r2, ok := hex4(s[i:])
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
	// b is not kept or changed after this: hand it over as the string.
	return zerocopy.String(b), true
}

// hex4 reads the escape \uXXXX at the start of s.
func hex4(s []byte) (rune, bool) {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return 0, false
	}
	v, err := strconv.ParseUint(string(s[2:6]), 16, 16)
	return rune(v), err == nil
}
