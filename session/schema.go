package session

import (
	stdjson "encoding/json"
	"unicode/utf8"
	"unsafe"

	"github.com/compactkit/compact"
)

// This file holds what the fast decoder knows of pi's schema: the members
// of an entry line, a message, a usage and a content block, each read in
// one pass, and the members kept for Extra.

// member is a member of a stored object kept until the object is complete,
// when it is known whether the member belongs in Extra.
type member struct {
	key string
	val []byte
	// inPlace is true when a string inside val was unescaped in place:
	// val no longer holds the stored bytes and cannot go to Extra.
	inPlace bool
}

// Names of the members of an entry line the reference decoder reads.
var entryNames = []string{"type", "id", "parentId", "timestamp", "summary", "firstKeptEntryId",
	"firstKeptEntryIndex", "tokensBefore", "tokensAfter", "details", "fromHook", "fromId", "provider",
	"modelId", "thinkingLevel", "targetId", "label", "name", "customType", "content", "version", "cwd",
	"parentSession", "message", "data"}

// Names of the members of a message the reference decoder reads.
var messageNames = []string{"role", "usage", "stopReason", "provider", "model", "errorMessage",
	"toolCallId", "toolName", "isError", "command", "output", "exitCode", "cancelled",
	"excludeFromContext", "customType", "timestamp", "content"}

// Names of the members of a content block the reference decoder reads.
var blockNames = []string{"type", "text", "thinking", "data", "mimeType", "id", "name", "arguments"}

// Names of the members of a usage object the reference decoder reads.
var usageNames = []string{"input", "output", "cacheRead", "cacheWrite", "totalTokens", "cacheWrite1h"}

// foldsTo reports whether key equals one of names when ASCII case is
// ignored. It is asked only about keys that match no name exactly, and
// keys are ASCII here.
func foldsTo(key string, names []string) bool {
	for _, n := range names {
		if len(n) != len(key) {
			continue
		}
		eq := true
		for j := 0; j < len(n); j++ {
			a, b := n[j], key[j]
			if a|0x20 != b|0x20 || (a|0x20) < 'a' || (a|0x20) > 'z' {
				if a != b {
					eq = false
					break
				}
			}
		}
		if eq {
			return true
		}
	}
	return false
}

// seen tracks which known members an object had, to detect repeats.
type seen uint32

// first marks member bit and reports whether it was new.
func (s *seen) first(bit uint) bool {
	if *s&(1<<bit) != 0 {
		return false
	}
	*s |= 1 << bit
	return true
}

// entryFields are the members of an entry line, decoded.
type entryFields struct {
	typ, id, parentID, timestamp string
	hasParent, hasKeptIndex      bool
	keptIndex                    int
	body                         entryBody
	msg                          *compact.Message
	hookRole                     bool
	seen                         seen
}

// reserve sizes tmp, and the journal when decoding in place, for lines
// of up to longest bytes, so that neither grows on the way (a doubling
// buffer leaves as much garbage as its final size).
func (d *fastDecoder) reserve(longest int) {
	if need := tmpSize(longest); len(d.tmp) < need {
		d.tmp = make([]byte, need)
	}
	if d.inPlace && cap(d.journal) < longest {
		// The pieces overwrite changes are disjoint parts of the line.
		d.journal = make([]byte, 0, longest)
	}
}

// tmpSize is the length of tmp that a line of n bytes needs: what the
// longest string in it can decode to (see str), and the eight bytes that
// scanString's word copies may write past it.
func tmpSize(n int) int { return n + utf8.UTFMax + 8 }

// fast decodes line, reporting false when the line is not one it decodes
// exactly as the reference path does.
func (d *fastDecoder) fast(line []byte) (decodedLine, bool) {
	d.b, d.i = line, 0
	d.spans, d.journal = d.spans[:0], d.journal[:0]
	if need := tmpSize(len(line)); len(d.tmp) < need {
		d.tmp = make([]byte, max(need, 2*len(d.tmp), 4<<10))
	}
	var f entryFields
	if !d.object(func(key string) bool { return d.entryMember(&f, key) }) {
		return decodedLine{}, false
	}
	d.ws()
	if d.i != len(d.b) {
		return decodedLine{}, false
	}
	kind := compact.EntryKind(f.typ)
	if f.typ == "" || f.typ == "session" || kind == compact.KindContextEdit || (f.msg != nil && kind != compact.KindMessage) {
		// context_edit lines are rare and left to the reference path.
		return decodedLine{}, false
	}
	e := d.entries.next()
	*e = compact.Entry{ID: f.id, ParentID: f.parentID, Kind: kind, Timestamp: f.timestamp}
	out := decodedLine{e: e, noParent: !f.hasParent, hookRole: f.hookRole}
	if len(d.spans) > 0 {
		out.inPlace, out.crc = true, d.lineCRC
	}
	if kind == compact.KindMessage {
		if f.msg == nil {
			return decodedLine{}, false
		}
		e.Message = f.msg
	} else if f.body.fill(e) != nil {
		return decodedLine{}, false
	}
	if kind == compact.KindCompaction {
		out.keptIndex, out.hasKeptIndex = f.keptIndex, f.hasKeptIndex
	}
	return out, true
}

// entryMember decodes the member key of an entry line, at its value.
func (d *fastDecoder) entryMember(f *entryFields, key string) bool {
	var (
		str        *string
		bit        uint
		ignored    string
		ignoredInt int
	)
	switch key {
	case "type":
		str, bit = &f.typ, 0
	case "id":
		str, bit = &f.id, 1
	case "timestamp":
		str, bit = &f.timestamp, 2
	case "summary":
		str, bit = &f.body.summary, 3
	case "firstKeptEntryId":
		str, bit = &f.body.firstKeptID, 4
	case "fromId":
		str, bit = &f.body.fromID, 5
	case "provider":
		str, bit = &f.body.provider, 6
	case "modelId":
		str, bit = &f.body.modelID, 7
	case "thinkingLevel":
		str, bit = &f.body.thinkingLevel, 8
	case "targetId":
		str, bit = &f.body.targetID, 9
	case "name":
		str, bit = &f.body.name, 10
	case "customType":
		str, bit = &f.body.customType, 11
	case "cwd":
		str, bit = &ignored, 12
	case "parentSession":
		str, bit = &ignored, 13
	case "parentId", "label":
		bit = 14
		if key == "label" {
			bit = 15
		}
		if !f.seen.first(bit) {
			return false
		}
		s, null, ok := d.stringOrNull()
		if key == "parentId" {
			f.parentID, f.hasParent = s, !null
		} else {
			f.body.label, f.body.hasLabel = s, !null
		}
		return ok
	case "firstKeptEntryIndex", "tokensBefore", "tokensAfter", "version":
		var dst *int
		switch key {
		case "firstKeptEntryIndex":
			dst, bit = &f.keptIndex, 16
		case "tokensBefore":
			dst, bit = &f.body.tokensBefore, 17
		case "tokensAfter":
			dst, bit = &f.body.tokensAfter, 18
		default:
			dst, bit = &ignoredInt, 19
		}
		if !f.seen.first(bit) {
			return false
		}
		n, null, ok := d.intOrNull()
		*dst = n
		if bit == 16 {
			f.hasKeptIndex = !null
		}
		return ok
	case "fromHook":
		if !f.seen.first(20) {
			return false
		}
		b, ok := d.boolOrNull()
		f.body.fromHook = b
		return ok
	case "details", "content", "data":
		dst, bit := &f.body.details, uint(21)
		switch key {
		case "content":
			dst, bit = &f.body.content, 22
		case "data":
			dst, bit = &f.body.data, 24
		}
		if !f.seen.first(bit) {
			return false
		}
		raw, ok := d.raw()
		*dst = raw
		return ok
	case "message":
		if !f.seen.first(23) || d.peek() != '{' {
			return false
		}
		return d.message(f)
	default:
		if foldsTo(key, entryNames) {
			return false
		}
		return d.skip(0)
	}
	if !f.seen.first(bit) {
		return false
	}
	s, _, ok := d.stringOrNull()
	*str = s
	return ok
}

// message decodes the message object at d.i into f.msg.
func (d *fastDecoder) message(f *entryFields) bool {
	m := d.msgs.next()
	var (
		pend     [24]member
		n        int
		role     string
		hasRole  bool
		usageRaw []byte // the usage object, when it has more than the counts
		array    bool   // content is an array
		ms       seen
	)
	ok := d.object(func(key string) bool {
		start, spans0 := d.i, len(d.spans)
		switch key {
		case "role":
			if !ms.first(0) {
				return false
			}
			s, _, ok := d.stringOrNull()
			role, hasRole = s, true
			return ok
		case "timestamp":
			if !ms.first(1) {
				return false
			}
			v, _, ok := d.intOrNull()
			if !ok || v > 1<<53 || v < -(1<<53) {
				return false
			}
			m.Timestamp = int64(v)
			return true
		case "content":
			if !ms.first(2) {
				return false
			}
			switch d.peek() {
			case '[':
				parts, ok := d.blocks()
				if !ok {
					return false
				}
				m.Content, array = parts, true
			case '"':
				s, _, ok := d.stringOrNull()
				if !ok {
					return false
				}
				p := d.carve(1)
				p[0] = compact.Part{Type: compact.PartText, Text: s}
				m.Content = p
			case 'n':
				if !d.null() {
					return false
				}
			default:
				return false
			}
		case "usage":
			if !ms.first(3) {
				return false
			}
			switch d.peek() {
			case '{':
				// A usage of its own, not one beside every message: most
				// messages (user, tool results) have none.
				u := d.usages.next()
				other, ok := d.usage(u)
				if !ok {
					return false
				}
				if other {
					usageRaw = d.b[start:d.i]
				}
				m.Usage = u
			case 'n':
				if !d.null() {
					return false
				}
			default:
				return false
			}
		case "exitCode":
			if !ms.first(4) {
				return false
			}
			v, null, ok := d.intOrNull()
			if !ok {
				return false
			}
			if !null {
				metaOf(m).ExitCode = &v
			}
		case "isError", "cancelled", "excludeFromContext":
			var bit uint
			switch key {
			case "isError":
				bit = 5
			case "cancelled":
				bit = 6
			default:
				bit = 7
			}
			if !ms.first(bit) {
				return false
			}
			b, ok := d.boolOrNull()
			if !ok {
				return false
			}
			switch {
			case bit == 5:
				m.IsError = b
			case !b: // false is the zero value: no MessageMeta for it
			case bit == 6:
				metaOf(m).Cancelled = true
			default:
				metaOf(m).ExcludeFromContext = true
			}
		case "stopReason", "provider", "model", "errorMessage", "toolCallId", "toolName", "command", "output", "customType":
			var bit uint
			var s string
			var ok bool
			switch key {
			case "stopReason":
				bit = 8
			case "provider":
				bit = 9
			case "model":
				bit = 10
			case "errorMessage":
				bit = 11
			case "toolCallId":
				bit = 12
			case "toolName":
				bit = 13
			case "command":
				bit = 14
			case "output":
				bit = 15
			default:
				bit = 16
			}
			if !ms.first(bit) {
				return false
			}
			if s, _, ok = d.stringOrNull(); !ok {
				return false
			}
			switch key {
			case "stopReason":
				m.StopReason = compact.StopReason(s)
			case "provider":
				m.Provider = s
			case "model":
				m.Model = s
			case "errorMessage":
				if s != "" {
					metaOf(m).ErrorMessage = s
				}
			case "toolCallId":
				m.ToolCallID = s
			case "toolName":
				m.ToolName = s
			case "command":
				if s != "" {
					metaOf(m).Command = s
				}
			case "output":
				if s != "" {
					metaOf(m).Output = s
				}
			default:
				if s != "" {
					metaOf(m).CustomType = s
				}
			}
		default:
			if foldsTo(key, messageNames) || !d.skip(0) {
				return false
			}
		}
		if n == len(pend) {
			return false
		}
		pend[n] = member{key, d.b[start:d.i:d.i], len(d.spans) > spans0}
		n++
		return true
	})
	if !ok || !hasRole || role == "" {
		return false
	}
	m.Role = compact.Role(role)
	if role == "hookMessage" { // version 2 name of the custom role
		m.Role = compact.RoleCustom
		f.hookRole = true
	}
	if m.Role == compact.RoleBash {
		// messageExtras keeps the whole content in Extra instead.
		for i := range m.Content {
			m.Content[i].Extra = nil
		}
	}
	// The same choices as messageExtras. An assistant's usage with more
	// than the counts (cost, ...) is kept whole in the usage rather than in
	// an Extra map of the message.
	if usageRaw != nil && m.Role == compact.RoleAssistant {
		m.Usage.Stored = unsafe.String(&usageRaw[0], len(usageRaw))
	}
	extra := 0
	keep := func(mb *member) bool {
		switch {
		case mb.key == "content" && array && m.Role != compact.RoleBash:
			return false
		case mb.key == "usage" && m.Role == compact.RoleAssistant:
			return false // in Usage.Stored (below) when more than the counts
		case messageKeyWritten(m.Role, mb.key):
			return false
		case m.Role == compact.RoleBash && mb.key == "truncated" && string(mb.val) == "false",
			m.Role == compact.RoleCustom && mb.key == "display" && string(mb.val) == "true":
			return false
		}
		return true
	}
	for i := 0; i < n; i++ {
		if pend[i].key == "details" && m.Role == compact.RoleToolResult {
			if pend[i].inPlace {
				return false
			}
			metaOf(m).Details = pend[i].val
		}
		if keep(&pend[i]) {
			if pend[i].inPlace {
				return false // its stored bytes are gone: the reference path keeps them
			}
			extra++
		}
	}
	if extra == 1 {
		for i := 0; i < n; i++ {
			if keep(&pend[i]) {
				m.Extra = d.sharedExtra(pend[i])
			}
		}
	} else if extra > 0 {
		m.Extra = make(map[string]stdjson.RawMessage, extra)
		for i := 0; i < n; i++ {
			if keep(&pend[i]) {
				m.Extra[pend[i].key] = pend[i].val
			}
		}
	}
	f.msg = m
	return true
}

// metaOf returns m.Meta, allocating it the first time a message sets one
// of its fields.
func metaOf(m *compact.Message) *compact.MessageMeta {
	if m.Meta == nil {
		m.Meta = new(compact.MessageMeta)
	}
	return m.Meta
}

// usage decodes the usage object at d.i into u and reports whether it has
// members beyond the modelled counts.
func (d *fastDecoder) usage(u *compact.Usage) (other, ok bool) {
	var us seen
	ok = d.object(func(key string) bool {
		var dst *int
		var bit uint
		switch key {
		case "input":
			dst, bit = &u.Input, 0
		case "output":
			dst, bit = &u.Output, 1
		case "cacheRead":
			dst, bit = &u.CacheRead, 2
		case "cacheWrite":
			dst, bit = &u.CacheWrite, 3
		case "totalTokens":
			dst, bit = &u.Total, 4
		case "cacheWrite1h":
			dst, bit = &u.CacheWrite1h, 5
		default:
			other = true
			return !foldsTo(key, usageNames) && d.skip(0)
		}
		if !us.first(bit) {
			return false
		}
		v, _, ok := d.intOrNull()
		*dst = v
		return ok
	})
	return other, ok
}

// blocks decodes the content array at d.i.
func (d *fastDecoder) blocks() ([]compact.Part, bool) {
	d.i++ // [
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == ']' {
		d.i++
		return nil, true
	}
	base := len(d.scratch)
	for {
		if d.peek() != '{' {
			return nil, false
		}
		p, ok := d.block()
		if !ok {
			return nil, false
		}
		d.scratch = append(d.scratch, p)
		d.ws()
		if d.i >= len(d.b) {
			return nil, false
		}
		if d.b[d.i] == ',' {
			d.i++
			d.ws()
			continue
		}
		if d.b[d.i] != ']' {
			return nil, false
		}
		d.i++
		break
	}
	got := d.scratch[base:]
	parts := d.carve(len(got))
	copy(parts, got)
	clear(got)
	d.scratch = d.scratch[:base]
	return parts, true
}

// block decodes one content block at d.i.
func (d *fastDecoder) block() (compact.Part, bool) {
	var (
		typ, text, thinking, data, mimeType, id, name string
		args                                          []byte
		pend                                          [8]member
		n                                             int
		bs                                            seen
	)
	ok := d.object(func(key string) bool {
		start, spans0 := d.i, len(d.spans)
		var dst *string
		var bit uint
		switch key {
		case "type":
			if !bs.first(0) {
				return false
			}
			s, _, ok := d.stringOrNull()
			typ = s
			return ok
		case "text":
			dst, bit = &text, 1
		case "thinking":
			dst, bit = &thinking, 2
		case "data":
			dst, bit = &data, 3
		case "mimeType":
			dst, bit = &mimeType, 4
		case "id":
			dst, bit = &id, 5
		case "name":
			dst, bit = &name, 6
		case "arguments":
			if !bs.first(7) {
				return false
			}
			raw, ok := d.raw()
			if !ok {
				return false
			}
			args = raw
		default:
			if foldsTo(key, blockNames) || !d.skip(0) {
				return false
			}
		}
		if dst != nil {
			if !bs.first(bit) {
				return false
			}
			s, _, ok := d.stringOrNull()
			if !ok {
				return false
			}
			*dst = s
		}
		if n == len(pend) {
			return false
		}
		pend[n] = member{key, d.b[start:d.i:d.i], len(d.spans) > spans0}
		n++
		return true
	})
	if !ok {
		return compact.Part{}, false
	}
	var p compact.Part
	switch typ {
	case "text":
		p = compact.Part{Type: compact.PartText, Text: text}
	case "thinking":
		p = compact.Part{Type: compact.PartThinking, Thinking: thinking}
	case "image":
		p = compact.Part{Type: compact.PartImage, Image: &compact.Image{Data: data, MimeType: mimeType}}
	case "toolCall":
		if len(args) == 0 {
			args = []byte("{}")
		}
		c := d.calls.next()
		*c = compact.ToolCall{ID: id, Name: name, Arguments: args}
		p = compact.Part{Type: compact.PartToolCall, ToolCall: c}
	default:
		p = compact.Part{Type: compact.PartType(typ), Text: text}
	}
	extra := 0
	for i := 0; i < n; i++ {
		if !partKeyWritten(&p, pend[i].key) {
			if pend[i].inPlace {
				return compact.Part{}, false // as in message
			}
			extra++
		}
	}
	if extra > 0 {
		p.Extra = make(map[string]stdjson.RawMessage, extra)
		for i := 0; i < n; i++ {
			if !partKeyWritten(&p, pend[i].key) {
				p.Extra[pend[i].key] = pend[i].val
			}
		}
	}
	return p, true
}

// carve returns n zeroed parts whose capacity is their length.
func (d *fastDecoder) carve(n int) []compact.Part {
	if n > partChunk/4 {
		return make([]compact.Part, n)
	}
	if cap(d.parts) < n {
		d.partSize = max(grow(d.partSize, 16, partChunk), n)
		d.parts = make([]compact.Part, d.partSize)
	}
	p := d.parts[:n:n]
	d.parts = d.parts[n:]
	return p
}
