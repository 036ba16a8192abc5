package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// The proxy reads request bodies with a small scanner of its own rather
// than a JSON decoder: it needs the exact byte span of every member and
// array element so that it can splice a request from the client's own
// bytes, and it must get through a 30 MB body in well under a millisecond
// per megabyte. Decoders (encoding/json, goccy/go-json) build values and
// lose the spans; gjson would give spans but walks the document again for
// each path. The scanner validates structure only as far as it needs to;
// the parts the proxy decodes (a message's role and content) then go
// through encoding/json.

// errSyntax is returned for bytes that are not the JSON the scanner
// expects.
var errSyntax = errors.New("proxy: malformed JSON")

// span is a byte range [start, end) of a body.
type span struct{ start, end int }

// skipWS returns the index of the first non-whitespace byte at or after i.
func skipWS(b []byte, i int) int {
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

// skipString returns the index just past the string whose opening quote is
// at b[i].
func skipString(b []byte, i int) (int, error) {
	i++
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return 0, errSyntax
		}
		end := i + j
		// Count the backslashes before the quote: an odd number escapes it.
		k := end - 1
		for k >= i && b[k] == '\\' {
			k--
		}
		if (end-1-k)%2 == 0 {
			return end + 1, nil
		}
		i = end + 1
	}
}

// skipValue returns the index just past the JSON value that starts at b[i]
// (i must point at its first byte, not at whitespace).
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errSyntax
	}
	switch c := b[i]; c {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				var err error
				if i, err = skipString(b, i); err != nil {
					return 0, err
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
			i++
		}
		return 0, errSyntax
	default:
		j := i
		for j < len(b) {
			switch b[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				if j == i {
					return 0, errSyntax
				}
				return j, nil
			}
			j++
		}
		if j == i {
			return 0, errSyntax
		}
		return j, nil
	}
}

// member is one member of a JSON object: its key (unescaped) and the spans
// of the whole member (key to value) and of the value.
type member struct {
	key   string
	all   span
	value span
}

// objectMembers returns the members of the object that starts at b[i].
func objectMembers(b []byte, i int) ([]member, int, error) {
	if i >= len(b) || b[i] != '{' {
		return nil, 0, errSyntax
	}
	var out []member
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return out, i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return nil, 0, errSyntax
		}
		kEnd, err := skipString(b, i)
		if err != nil {
			return nil, 0, err
		}
		key := string(b[i+1 : kEnd-1])
		if bytes.IndexByte(b[i:kEnd], '\\') >= 0 {
			if err := json.Unmarshal(b[i:kEnd], &key); err != nil {
				return nil, 0, errSyntax
			}
		}
		start := i
		i = skipWS(b, kEnd)
		if i >= len(b) || b[i] != ':' {
			return nil, 0, errSyntax
		}
		i = skipWS(b, i+1)
		vEnd, err := skipValue(b, i)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, member{key: key, all: span{start, vEnd}, value: span{i, vEnd}})
		i = skipWS(b, vEnd)
		if i >= len(b) {
			return nil, 0, errSyntax
		}
		if b[i] == '}' {
			return out, i + 1, nil
		}
		if b[i] != ',' {
			return nil, 0, errSyntax
		}
		i = skipWS(b, i+1)
	}
}

// arrayElements returns the spans of the elements of the array that starts
// at b[i].
func arrayElements(b []byte, i int) ([]span, int, error) {
	if i >= len(b) || b[i] != '[' {
		return nil, 0, errSyntax
	}
	var out []span
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return out, i + 1, nil
	}
	for {
		end, err := skipValue(b, i)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, span{i, end})
		i = skipWS(b, end)
		if i >= len(b) {
			return nil, 0, errSyntax
		}
		if b[i] == ']' {
			return out, i + 1, nil
		}
		if b[i] != ',' {
			return nil, 0, errSyntax
		}
		i = skipWS(b, i+1)
	}
}

// topObject reads a request body: a JSON object with nothing after it but
// whitespace.
func topObject(b []byte) ([]member, error) {
	i := skipWS(b, 0)
	ms, end, err := objectMembers(b, i)
	if err != nil {
		return nil, err
	}
	if skipWS(b, end) != len(b) {
		return nil, fmt.Errorf("%w: data after the object", errSyntax)
	}
	return ms, nil
}

// find returns the member named key, nil when absent.
func find(ms []member, key string) *member {
	for i := range ms {
		if ms[i].key == key {
			return &ms[i]
		}
	}
	return nil
}

// withoutKey returns b with every object member named key removed, at any
// depth, together with the comma that separated it. It returns b itself
// when there is none. Clients move Anthropic's cache_control breakpoints
// from message to message between turns; hashing messages without them
// keeps a resent message's digest stable.
func withoutKey(b []byte, key string) []byte {
	if !bytes.Contains(b, []byte(`"`+key+`"`)) {
		return b
	}
	var cuts []span
	var walk func(i int) (int, error)
	walk = func(i int) (int, error) {
		switch b[i] {
		case '{':
			ms, end, err := objectMembers(b, i)
			if err != nil {
				return 0, err
			}
			for k, m := range ms {
				if m.key == key {
					switch {
					case k > 0:
						// From just after the previous member to the end of this one.
						cuts = append(cuts, span{ms[k-1].all.end, m.all.end})
					case len(ms) > 1:
						cuts = append(cuts, span{m.all.start, ms[1].all.start})
					default:
						cuts = append(cuts, m.all)
					}
					continue
				}
				if c := b[m.value.start]; c == '{' || c == '[' {
					if _, err := walk(m.value.start); err != nil {
						return 0, err
					}
				}
			}
			return end, nil
		case '[':
			els, end, err := arrayElements(b, i)
			if err != nil {
				return 0, err
			}
			for _, e := range els {
				if c := b[e.start]; c == '{' || c == '[' {
					if _, err := walk(e.start); err != nil {
						return 0, err
					}
				}
			}
			return end, nil
		}
		return skipValue(b, i)
	}
	if _, err := walk(skipWS(b, 0)); err != nil || len(cuts) == 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	prev := 0
	for _, c := range cuts {
		if c.start < prev {
			continue
		}
		out = append(out, b[prev:c.start]...)
		prev = c.end
	}
	return append(out, b[prev:]...)
}
