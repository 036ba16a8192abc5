package session

import (
	stdjson "encoding/json"
	"unsafe"

	"github.com/compactkit/compact"
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
