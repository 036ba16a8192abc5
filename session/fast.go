package session

import (
	"bytes"
	"encoding/binary"
	stdjson "encoding/json"
	"hash/crc32"
	"math/bits"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/swar"
)

// This file holds the fast path for entry lines: one pass over the line
// that builds the compact.Entry, its Message with parts, tool calls and
// usage, the Extra maps that messageExtras would fill, and the facts
// migration needs, with no intermediate structs.
//
// The fast path is an optimisation of the reference path (decodeEntry,
// toEntry and messageExtras), never a second definition of the format: it
// accepts only what it can decode exactly as the reference does, and
// gives up on anything else, so that the line goes through the reference
// path. It gives up on invalid JSON, on a value of another type than the
// field's (content as a number, a string where a number is expected), on
// member names that are escaped, not ASCII, repeated, or equal to a known
// field only when case is ignored (Go decoders match names that way), on
// numbers that are not integers of at most 18 digits where the reference
// decodes numbers, on a session header or a missing type, and on nesting
// deeper than maxDepth. FuzzFastDecode checks the two paths agree.
//
// Strings are not copied when they hold neither escapes nor invalid UTF-8:
// they point into the line, and so into the buffer the whole file was read
// into (see parse). Raw values (tool call arguments, extras, details) are
// sub-slices of the line with their capacity cut to their length. This is
// sound because the buffer stays reachable (every record keeps its raw
// line) and no byte a string or raw value points to is written after the
// line is decoded. A decoder made for Open (inPlace) also unescapes the
// strings with escapes into the line, over their stored bytes, instead of
// copying them out (overwrite). Read cannot read its lines again, so its
// decoder (rebuild) unescapes in place only the strings it can escape
// back to their stored bytes: those whose escapes are all the ones
// JSON.stringify writes (canonical, see escape); it copies the others.

// maxDepth bounds the nesting of skipped values; deeper lines go through
// the reference path.
const maxDepth = 200

// Largest sizes of the chunks the decoder allocates from. Chunks start
// small and double up to these, so that a small file costs little.
// Chunks of entries, messages, usages and tool calls hold at most
// chunkBytes: one of the allocator's size classes, which a chunk of 64
// messages (232 bytes each) overshot by 10 %.
const (
	chunkBytes = 16 << 10
	partChunk  = 256
	strChunk   = 64 << 10
	// strOwn is the decoded string size from which a string gets an
	// allocation of its own rather than a piece of a chunk.
	strOwn = strChunk / 4
)

// fastDecoder decodes entry lines on the fast path. It allocates entries,
// messages, parts, tool calls and decoded strings from chunks, which saves
// most of the allocations (and GC work) of one object per value. A decoder
// is used by one goroutine at a time.
type fastDecoder struct {
	b []byte // the line
	i int    // position in b

	entries chunk[compact.Entry]
	msgs    chunk[compact.Message]
	usages  chunk[compact.Usage]
	calls   chunk[compact.ToolCall]
	parts   []compact.Part // free part of the current part chunk
	strs    []byte         // the current string chunk, up to its free part
	// partSize and strSize are the sizes of the last chunks allocated.
	partSize, strSize int

	// extras are the one-member Extra maps made so far, by member: the
	// messages that store the same single unmodelled member (pi's "api"
	// on every assistant message) share one map, where a map each costs
	// some 370 bytes.
	extras map[member1]map[string]stdjson.RawMessage

	// inPlace makes escaped strings be unescaped into the line itself,
	// where they were stored, rather than copied out (see overwrite).
	// spans and journal record the pieces of the current line so changed
	// and their stored bytes, so that a line the fast path gives up on is
	// restored before the reference path reads it; lineCRC is the
	// checksum of the line as stored, taken before its first change.
	inPlace bool
	spans   []span
	journal []byte
	lineCRC uint32

	// rebuild makes the canonical strings (see escape) be unescaped into
	// the line, as inPlace does all of them, but with nothing journaled:
	// their stored bytes are their decoded text escaped again
	// (escapeStored). odd is set by escape when the string being read
	// has an escape JSON.stringify would not write. held collects the
	// spans of the lines decoded, which Session.storedLines rebuilds.
	rebuild bool
	odd     bool
	held    []heldSpan

	scratch []compact.Part // parts of the content array being decoded
	// tmp receives the decoded contents of a string; it is longer than
	// the line, which no decoded string can outgrow but by bytes that
	// are not valid UTF-8 (see str).
	tmp []byte
}

// member1 is a member of an object by value, the key of
// fastDecoder.extras.
type member1 struct{ key, val string }

// Bounds of the Extra maps a decoder shares: members with longer values
// are rarely repeated, and past maxShared distinct members the decoder
// makes maps of their own.
const (
	maxSharedVal = 64
	maxShared    = 256
)

// sharedExtra returns an Extra map holding only mb: the one made for the
// same member earlier when there is one.
func (d *fastDecoder) sharedExtra(mb member) map[string]stdjson.RawMessage {
	if len(mb.val) > maxSharedVal {
		return map[string]stdjson.RawMessage{mb.key: mb.val}
	}
	k := member1{mb.key, unsafe.String(unsafe.SliceData(mb.val), len(mb.val))}
	if x, ok := d.extras[k]; ok {
		return x
	}
	x := map[string]stdjson.RawMessage{mb.key: mb.val}
	if len(d.extras) < maxShared {
		if d.extras == nil {
			d.extras = make(map[member1]map[string]stdjson.RawMessage)
		}
		d.extras[k] = x
	}
	return x
}

// chunk hands out pointers to the elements of slices allocated a few at a
// time: 8, then twice as many each time up to chunkBytes.
type chunk[T any] struct{ buf []T }

// next returns a new zero element.
func (c *chunk[T]) next() *T {
	if len(c.buf) == cap(c.buf) {
		var zero T
		largest := max(chunkBytes/int(unsafe.Sizeof(zero)), 8)
		c.buf = make([]T, 0, grow(cap(c.buf), 8, largest))
	}
	c.buf = c.buf[:len(c.buf)+1]
	return &c.buf[len(c.buf)-1]
}

// grow returns the size of the chunk after one of size last: twice as
// big, at least least and at most largest.
func grow(last, least, largest int) int {
	return min(max(2*last, least), largest)
}

// decode decodes one line through the fast path when it can, else
// through the reference path.
func (d *fastDecoder) decode(line []byte) decodedLine {
	if out, ok := d.fast(line); ok {
		if d.rebuild {
			for _, sp := range d.spans {
				d.held = append(d.held, heldSpan{&line[sp.start], sp.n})
			}
		}
		return out
	}
	d.restore()
	return decodeLine(line)
}

// heldSpans returns the spans of the strings a rebuild decoder unescaped
// into the lines it decoded.
func (d *fastDecoder) heldSpans() []heldSpan { return d.held }

// span is a piece of a line unescaped in place: start and length in the
// line (its stored bytes are the same length in the journal).
type span struct{ start, n int }

// heldSpan is a string unescaped into a line by a rebuild decoder: p is
// its first byte, n the length of its decoded text. The stored bytes
// there are the first n bytes of that text escaped again (escapeStored);
// those after them are as stored.
type heldSpan struct {
	p *byte
	n int
}

// at is the address of the span's first byte. The buffer it lies in is
// on the heap, which Go never moves.
func (h heldSpan) at() uintptr { return uintptr(unsafe.Pointer(h.p)) }

// overwrite writes s, a string decoded from the line's bytes at start,
// over those bytes and returns it as a string pointing there. Unescaping
// never makes a string longer (the lines with bytes that are not UTF-8,
// which can, are copied instead), so it fits within its own quotes: no
// copy is made and the decoded text costs no memory beyond the file's
// buffer. The line is changed, so its record is marked (decodedLine
// inPlace), and Session reads it back from the file (Open) or rebuilds it
// (Read) when it needs the stored bytes (storedLines).
func (d *fastDecoder) overwrite(start int, s []byte) string {
	if !d.rebuild {
		if len(d.spans) == 0 {
			d.lineCRC = crc32.ChecksumIEEE(d.b)
		}
		d.journal = append(d.journal, d.b[start:start+len(s)]...)
	}
	d.spans = append(d.spans, span{start, len(s)})
	copy(d.b[start:], s)
	return unsafe.String(&d.b[start], len(s))
}

// restore puts back the stored bytes of the pieces of the current line
// that overwrite changed.
func (d *fastDecoder) restore() {
	if d.rebuild {
		for _, sp := range d.spans {
			text := d.b[sp.start : sp.start+sp.n]
			restoreStored(text, text, d.tmp)
		}
	} else {
		off := 0
		for _, sp := range d.spans {
			off += copy(d.b[sp.start:sp.start+sp.n], d.journal[off:off+sp.n])
		}
	}
	d.spans, d.journal = d.spans[:0], d.journal[:0]
}

// restoreStored writes to dst the stored bytes that a rebuild decoder
// wrote text, a canonical string's decoded text, over: the first
// len(text) bytes of the text escaped again. dst may be text itself.
// scratch is space for the escaped text; it is returned, grown if it was
// short, for the next call.
func restoreStored(dst, text, scratch []byte) []byte {
	scratch = escapeStored(scratch[:0], text)
	copy(dst[:len(text)], scratch)
	return scratch
}

// escapeStored appends text to dst escaped as JSON.stringify escapes a
// string's contents (without the quotes): a quote, a backslash and the
// control characters are escaped, with their two-byte forms where JSON
// has one and as \u00xx (lower-case) otherwise; every other byte is
// written as it is. A string whose escapes are all of these forms
// (canonical, see escape) is stored as the escaped form of its decoded
// text.
func escapeStored(dst, text []byte) []byte {
	const hex = "0123456789abcdef"
	for len(text) > 0 {
		i := swar.Index(text)
		dst = append(dst, text[:i]...)
		if i == len(text) {
			break
		}
		switch c := text[i]; c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			if c < 0x20 {
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
			} else {
				dst = append(dst, c) // not ASCII: as it is
			}
		}
		text = text[i+1:]
	}
	return dst
}

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
var usageNames = []string{"input", "output", "cacheRead", "cacheWrite", "totalTokens"}

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
	typ, id, parentID, timestamp                     string
	summary, firstKeptID, fromID, provider, modelID  string
	thinkingLevel, targetID, label, name, customType string
	hasParent, hasLabel, hasKeptIndex, fromHook      bool
	keptIndex, tokensBefore, tokensAfter             int
	details, content, data                           []byte
	msg                                              *compact.Message
	hookRole                                         bool
	seen                                             seen
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
	switch kind {
	case compact.KindMessage:
		if f.msg == nil {
			return decodedLine{}, false
		}
		e.Message = f.msg
	case compact.KindCompaction:
		c := &compact.Compaction{Summary: f.summary, FirstKeptID: f.firstKeptID, TokensBefore: f.tokensBefore,
			TokensAfter: f.tokensAfter, FromHook: f.fromHook}
		compactionDetails(c, f.details)
		e.Compaction = c
		out.keptIndex, out.hasKeptIndex = f.keptIndex, f.hasKeptIndex
	case compact.KindBranchSummary:
		e.Meta = &compact.EntryMeta{TargetID: f.fromID}
		if f.summary != "" {
			e.Message = compact.TextMessage(compact.RoleBranchSummary, f.summary)
		}
	case compact.KindCustomMessage:
		parts, err := customContent(f.content)
		if err != nil {
			return decodedLine{}, false
		}
		e.Meta = &compact.EntryMeta{CustomType: f.customType}
		e.Message = &compact.Message{Role: compact.RoleCustom, Content: parts, Meta: &compact.MessageMeta{CustomType: f.customType}}
	case compact.KindModelChange:
		e.Meta = &compact.EntryMeta{Provider: f.provider, ModelID: f.modelID}
	case compact.KindThinkingLevelChange:
		e.Meta = &compact.EntryMeta{ThinkingLevel: f.thinkingLevel}
	case compact.KindLabel:
		e.Meta = &compact.EntryMeta{TargetID: f.targetID}
		if f.hasLabel {
			e.Meta.Label = f.label
		}
	case compact.KindSessionInfo:
		e.Meta = &compact.EntryMeta{Name: f.name}
	case compact.KindCustom:
		e.Meta = &compact.EntryMeta{CustomType: f.customType}
		if len(f.data) > 0 {
			e.Meta.Data = f.data
		}
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
		str, bit = &f.summary, 3
	case "firstKeptEntryId":
		str, bit = &f.firstKeptID, 4
	case "fromId":
		str, bit = &f.fromID, 5
	case "provider":
		str, bit = &f.provider, 6
	case "modelId":
		str, bit = &f.modelID, 7
	case "thinkingLevel":
		str, bit = &f.thinkingLevel, 8
	case "targetId":
		str, bit = &f.targetID, 9
	case "name":
		str, bit = &f.name, 10
	case "customType":
		str, bit = &f.customType, 11
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
			f.label, f.hasLabel = s, !null
		}
		return ok
	case "firstKeptEntryIndex", "tokensBefore", "tokensAfter", "version":
		var dst *int
		switch key {
		case "firstKeptEntryIndex":
			dst, bit = &f.keptIndex, 16
		case "tokensBefore":
			dst, bit = &f.tokensBefore, 17
		case "tokensAfter":
			dst, bit = &f.tokensAfter, 18
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
		f.fromHook = b
		return ok
	case "details", "content", "data":
		dst, bit := &f.details, uint(21)
		switch key {
		case "content":
			dst, bit = &f.content, 22
		case "data":
			dst, bit = &f.data, 24
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

// keep copies a decoded string out of d.tmp.
func (d *fastDecoder) keep(s []byte) string {
	if len(s) == 0 {
		return ""
	}
	dst := append(d.strSpace(len(s)), s...)
	d.strUsed(dst)
	return unsafe.String(&dst[0], len(dst))
}

// strSpace returns an empty slice with room for n bytes, at the free end
// of the string chunk unless n is large.
func (d *fastDecoder) strSpace(n int) []byte {
	if n > strOwn {
		return make([]byte, 0, n)
	}
	if cap(d.strs)-len(d.strs) < n {
		d.strSize = max(grow(d.strSize, 1<<10, strChunk), n)
		d.strs = make([]byte, 0, d.strSize)
	}
	return d.strs[len(d.strs):len(d.strs)]
}

// strUsed records that s, written to a slice from strSpace, is in use:
// when it lies in the string chunk, the chunk's free part starts after it.
func (d *fastDecoder) strUsed(s []byte) {
	end := len(d.strs)
	if len(s) > 0 && end < cap(d.strs) && unsafe.SliceData(s) == &d.strs[:end+1][end] {
		d.strs = d.strs[:end+len(s)]
	}
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
