package jsontext

import (
	"bytes"
	"errors"
	"fmt"
)

// ErrSyntax is returned for bytes that are not the JSON a scan expects.
// The scans check structure only as far as they need to find where each
// value ends; a caller decodes the values it uses with encoding/json,
// which checks the rest.
var ErrSyntax = errors.New("malformed JSON")

// SkipSpace returns the index of the first byte of b at or after i that
// is not JSON white space (space, tab, newline, carriage return).
func SkipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// SkipString returns the index just past the JSON string whose opening
// quote is at b[start], or -1 when it does not end. It jumps from quote to
// quote (the arguments of edits and writes hold whole files, and
// bytes.IndexByte reads many bytes an instruction): a quote ends the
// string when an even run of backslashes precedes it.
func SkipString(b []byte, start int) int {
	for j := start + 1; j < len(b); {
		q := bytes.IndexByte(b[j:], '"')
		if q < 0 {
			return -1
		}
		q += j
		n := 0
		for k := q - 1; k > start && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
	return -1
}

// SkipValue returns the index just past the JSON value that starts at or
// after b[i] (white space before it is skipped), or -1 when there is no
// value there or it does not end: a string or container left open, or
// nothing but a separator where a value should be. Containers are matched
// bracket for bracket; their contents and scalars are not checked.
func SkipValue(b []byte, i int) int {
	i = SkipSpace(b, i)
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return SkipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				j := SkipString(b, i)
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
		j := i
		for ; j < len(b); j++ {
			switch b[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				if j == i {
					return -1
				}
				return j
			}
		}
		return j
	}
}

// Span is the byte range [Start, End) of a document.
type Span struct{ Start, End int }

// Member is one member of a JSON object: its key, unescaped, and the
// spans of the whole member (from the key's opening quote to the value's
// end) and of its value.
type Member struct {
	Key   string
	All   Span
	Value Span
}

// ObjectMembers returns the members, in order, of the object whose "{" is
// at b[i], and the index just past its "}". An error wraps ErrSyntax.
func ObjectMembers(b []byte, i int) ([]Member, int, error) {
	if i >= len(b) || b[i] != '{' {
		return nil, 0, ErrSyntax
	}
	var out []Member
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return out, i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return nil, 0, ErrSyntax
		}
		kEnd := SkipString(b, i)
		if kEnd < 0 {
			return nil, 0, ErrSyntax
		}
		inner := b[i+1 : kEnd-1]
		key := string(inner)
		if bytes.IndexByte(inner, '\\') >= 0 {
			var ok bool
			if key, ok = Unquote(inner); !ok {
				return nil, 0, ErrSyntax
			}
		}
		start := i
		i = SkipSpace(b, kEnd)
		if i >= len(b) || b[i] != ':' {
			return nil, 0, ErrSyntax
		}
		i = SkipSpace(b, i+1)
		vEnd := SkipValue(b, i)
		if vEnd < 0 {
			return nil, 0, ErrSyntax
		}
		out = append(out, Member{Key: key, All: Span{start, vEnd}, Value: Span{i, vEnd}})
		i = SkipSpace(b, vEnd)
		if i >= len(b) {
			return nil, 0, ErrSyntax
		}
		if b[i] == '}' {
			return out, i + 1, nil
		}
		if b[i] != ',' {
			return nil, 0, ErrSyntax
		}
		i = SkipSpace(b, i+1)
	}
}

// ArrayElements returns the spans of the elements of the array whose "["
// is at b[i], and the index just past its "]". An error wraps ErrSyntax.
func ArrayElements(b []byte, i int) ([]Span, int, error) {
	if i >= len(b) || b[i] != '[' {
		return nil, 0, ErrSyntax
	}
	var out []Span
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return out, i + 1, nil
	}
	for {
		end := SkipValue(b, i)
		if end < 0 {
			return nil, 0, ErrSyntax
		}
		out = append(out, Span{i, end})
		i = SkipSpace(b, end)
		if i >= len(b) {
			return nil, 0, ErrSyntax
		}
		if b[i] == ']' {
			return out, i + 1, nil
		}
		if b[i] != ',' {
			return nil, 0, ErrSyntax
		}
		i = SkipSpace(b, i+1)
	}
}

// Object returns the members of the document b, which must be one JSON
// object with nothing after it but white space (a request body). An
// error wraps ErrSyntax.
func Object(b []byte) ([]Member, error) {
	ms, end, err := ObjectMembers(b, SkipSpace(b, 0))
	if err != nil {
		return nil, err
	}
	if SkipSpace(b, end) != len(b) {
		return nil, fmt.Errorf("%w: data after the object", ErrSyntax)
	}
	return ms, nil
}

// Find returns the first member of ms named key, nil when there is none.
func Find(ms []Member, key string) *Member {
	for i := range ms {
		if ms[i].Key == key {
			return &ms[i]
		}
	}
	return nil
}

// WithoutKey returns b with every object member named key removed, at any
// depth, together with the comma that separated it from its neighbour. It
// returns b itself when there is none, or when b is not JSON it can read.
// (The proxy hashes messages without Anthropic's cache_control, which
// clients move from message to message between turns.)
func WithoutKey(b []byte, key string) []byte {
	if !bytes.Contains(b, []byte(`"`+key+`"`)) {
		return b
	}
	var cuts []Span
	var walk func(i int) (int, error)
	walk = func(i int) (int, error) {
		switch b[i] {
		case '{':
			ms, end, err := ObjectMembers(b, i)
			if err != nil {
				return 0, err
			}
			for k, m := range ms {
				if m.Key == key {
					switch {
					case k > 0:
						// From just after the previous member to the end of this one.
						cuts = append(cuts, Span{ms[k-1].All.End, m.All.End})
					case len(ms) > 1:
						cuts = append(cuts, Span{m.All.Start, ms[1].All.Start})
					default:
						cuts = append(cuts, m.All)
					}
					continue
				}
				if c := b[m.Value.Start]; c == '{' || c == '[' {
					if _, err := walk(m.Value.Start); err != nil {
						return 0, err
					}
				}
			}
			return end, nil
		case '[':
			els, end, err := ArrayElements(b, i)
			if err != nil {
				return 0, err
			}
			for _, e := range els {
				if c := b[e.Start]; c == '{' || c == '[' {
					if _, err := walk(e.Start); err != nil {
						return 0, err
					}
				}
			}
			return end, nil
		}
		if end := SkipValue(b, i); end >= 0 {
			return end, nil
		}
		return 0, ErrSyntax
	}
	start := SkipSpace(b, 0)
	if start >= len(b) {
		return b
	}
	if _, err := walk(start); err != nil || len(cuts) == 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	prev := 0
	for _, c := range cuts {
		if c.Start < prev {
			continue
		}
		out = append(out, b[prev:c.Start]...)
		prev = c.End
	}
	return append(out, b[prev:]...)
}
