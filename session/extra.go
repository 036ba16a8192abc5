package session

import (
	"bytes"
	stdjson "encoding/json"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsontext"
)

// This file fills Message.Extra and Part.Extra: the members of a stored
// message, and of its content blocks, that EncodeMessage would not write
// from the modelled fields. With them a message read from a file encodes
// back to the same members (api, details, thinkingSignature, ...), and
// consumers such as the extractive summarizer can read tool result
// details.
//
// This is the reference path, run after decodeEntry: the members are
// found by a second scan over the raw line rather than a second decode
// into maps. The line has already been decoded successfully when the scan
// runs; on anything unexpected the scan stops and leaves the extras it
// has not reached empty. The fast path (fast.go) fills the same maps in
// its single pass, with the same choices (messageKeyWritten,
// partKeyWritten).

// messageExtras sets the extras of m, decoded from the "message" member of
// line. The content array is scanned once, block by block.
func messageExtras(line []byte, m *compact.Message) {
	if m == nil {
		return
	}
	ms := scanner{b: line}
	if !ms.seek("message") {
		return
	}
	ms.eachMemberAt(func(key []byte) bool {
		switch {
		case string(key) == "content" && ms.peek() == '[' && m.Role != compact.RoleBash:
			blockExtras(&ms, m.Content)
			return !ms.bad
		}
		val := ms.value()
		if ms.bad {
			return false
		}
		switch {
		case string(key) == "usage" && m.Role == compact.RoleAssistant:
			// The usage object is modelled only in part (cost is not):
			// keep it whole, in Usage.Stored, when it has more than the
			// modelled counts.
			if !onlyKeys(val, usageNames...) {
				if m.Usage != nil {
					m.Usage.Stored = string(val)
				} else {
					setExtra(&m.Extra, key, val)
				}
			}
		case string(key) == "details" && m.Role == compact.RoleToolResult:
			metaOf(m).Details = val
		case messageKeyWritten(m.Role, string(key)):
		case m.Role == compact.RoleBash && string(key) == "truncated" && string(val) == "false",
			m.Role == compact.RoleCustom && string(key) == "display" && string(val) == "true":
			// What EncodeMessage writes when Extra has no value.
		default:
			setExtra(&m.Extra, key, val)
		}
		return true
	})
}

// messageKeyWritten reports whether EncodeMessage writes the member key
// for messages of the role from the modelled fields.
func messageKeyWritten(role compact.Role, key string) bool {
	switch key {
	case "role", "timestamp":
		return true
	}
	switch role {
	case compact.RoleAssistant:
		switch key {
		case "content", "provider", "model", "usage", "stopReason", "errorMessage":
			return true
		}
	case compact.RoleToolResult:
		switch key {
		case "toolCallId", "toolName", "content", "isError", "details":
			return true
		}
	case compact.RoleBash:
		switch key {
		case "command", "output", "exitCode", "cancelled", "excludeFromContext":
			return true
		}
	case compact.RoleCustom:
		switch key {
		case "customType", "content":
			return true
		}
	default:
		return key == "content"
	}
	return false
}

// blockExtras sets the extras of the parts decoded from the content array
// at sc.i, block i giving parts[i], and moves sc past the array.
func blockExtras(sc *scanner, parts []compact.Part) {
	i := 0
	sc.eachElementAt(func() bool {
		if i >= len(parts) || sc.peek() != '{' {
			sc.value()
			return !sc.bad
		}
		p := &parts[i]
		i++
		sc.eachMemberAt(func(key []byte) bool {
			v := sc.value()
			if sc.bad {
				return false
			}
			if !partKeyWritten(p, string(key)) {
				setExtra(&p.Extra, key, v)
			}
			return true
		})
		return !sc.bad
	})
}

// partKeyWritten reports whether encodeParts writes the member key of the
// part from its modelled fields.
func partKeyWritten(p *compact.Part, key string) bool {
	if key == "type" {
		return true
	}
	switch p.Type {
	case compact.PartText:
		return key == "text"
	case compact.PartThinking:
		return key == "thinking"
	case compact.PartImage:
		return key == "data" || key == "mimeType"
	case compact.PartToolCall:
		return key == "id" || key == "name" || key == "arguments"
	}
	return key == "text" && p.Text != ""
}

func setExtra(extra *map[string]stdjson.RawMessage, key, val []byte) {
	if *extra == nil {
		*extra = make(map[string]stdjson.RawMessage, 2)
	}
	// The value shares the line's bytes; the capacity limit keeps an
	// append to it from writing into the line.
	(*extra)[string(key)] = stdjson.RawMessage(val[:len(val):len(val)])
}

// onlyKeys reports whether the object raw has no member outside keys.
func onlyKeys(raw []byte, keys ...string) bool {
	only := true
	sc := scanner{b: raw}
	sc.eachMember(func(key []byte, _ []byte) bool {
		for _, k := range keys {
			if string(key) == k {
				return true
			}
		}
		only = false
		return false
	})
	return only
}

// scanner walks JSON text without decoding it, with the skippers of
// internal/jsontext. It trusts the input to be valid JSON but never reads
// out of bounds when it is not.
type scanner struct {
	b   []byte
	i   int
	bad bool
}

func (s *scanner) ws() { s.i = jsontext.SkipSpace(s.b, s.i) }

// key reads a member name at s.i: its contents (escapes not decoded) and
// whether it holds a backslash.
func (s *scanner) key() (body []byte, escaped bool) {
	body = s.str()
	return body, bytes.IndexByte(body, '\\') >= 0
}

// str skips a string starting at s.i and returns its contents, escapes
// not decoded.
func (s *scanner) str() (body []byte) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		s.bad = true
		return nil
	}
	end := jsontext.SkipString(s.b, s.i)
	if end < 0 {
		s.bad = true
		return nil
	}
	body = s.b[s.i+1 : end-1]
	s.i = end
	return body
}

// value skips one value starting at s.i and returns its bytes.
func (s *scanner) value() []byte {
	start := jsontext.SkipSpace(s.b, s.i)
	end := jsontext.SkipValue(s.b, start)
	if end < 0 {
		s.i, s.bad = start, true
		return nil
	}
	s.i = end
	return s.b[start:end]
}

func (s *scanner) peek() byte {
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// eachMember calls fn with the key and raw value of each member of the
// object at s.i, in order, until fn returns false.
func (s *scanner) eachMember(fn func(key, val []byte) bool) {
	s.eachMemberAt(func(key []byte) bool {
		val := s.value()
		return !s.bad && fn(key, val)
	})
}

// eachMemberAt calls fn with the key of each member of the object at s.i,
// in order, with s.i at the member's value, until fn returns false. fn
// must move s past the value. Keys with escapes are decoded. On return
// s.i is past the object, unless fn stopped early or the text is bad.
func (s *scanner) eachMemberAt(fn func(key []byte) bool) {
	if s.peek() != '{' {
		s.bad = true
		return
	}
	s.i++
	for {
		switch s.peek() {
		case '}':
			s.i++
			return
		case 0:
			s.bad = true
			return
		}
		key, escaped := s.key()
		if s.bad {
			return
		}
		if escaped {
			k, ok := jsontext.Unquote(key)
			if !ok {
				s.bad = true
				return
			}
			key = []byte(k)
		}
		if s.peek() != ':' {
			s.bad = true
			return
		}
		s.i++
		s.ws()
		if !fn(key) || s.bad {
			return
		}
		if s.peek() == ',' {
			s.i++
		}
	}
}

// eachElementAt calls fn with s.i at each element of the array at s.i
// until fn returns false. fn must move s past the element.
func (s *scanner) eachElementAt(fn func() bool) {
	if s.peek() != '[' {
		s.bad = true
		return
	}
	s.i++
	for {
		switch s.peek() {
		case ']':
			s.i++
			return
		case 0:
			s.bad = true
			return
		}
		if !fn() || s.bad {
			return
		}
		if s.peek() == ',' {
			s.i++
		}
	}
}

// seek moves to the value of the first member named key of the object at
// s.i, without skipping over that value, and reports whether it found it.
func (s *scanner) seek(key string) bool {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return false
	}
	s.i++
	for {
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] == '}' {
			return false
		}
		k, escaped := s.key()
		if s.bad || escaped { // pi writes plain keys; give up on others
			return false
		}
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		s.ws()
		if string(k) == key {
			return true
		}
		s.value()
		if s.bad {
			return false
		}
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == ',' {
			s.i++
		}
	}
}
