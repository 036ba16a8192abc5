package session

import (
	"hash/crc32"
	"unsafe"

	"github.com/compactkit/compact/internal/swar"
)

// This file holds the fast decoder's memory: the chunks it hands out
// entries, messages and parts from, and the strings it unescapes in place
// inside a line (held spans), restored when a line falls back to the
// reference path.

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
