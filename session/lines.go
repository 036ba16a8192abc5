package session

import (
	"bytes"
	"cmp"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	json "github.com/goccy/go-json"

	"github.com/compactkit/compact"
)

// This file turns a session file's bytes into decoded lines: splitting
// the lines, decoding them (in parallel on large files), lines glued
// together by a lost newline, a torn last line, and the header.

// decodedLine is the outcome of decoding one line: the entry and the few
// facts about the stored form that migration needs (the wire structs
// themselves are dropped at once, which keeps the live heap small).
type decodedLine struct {
	e   *compact.Entry
	err error
	// keptIndex is a stored firstKeptEntryIndex; hasKeptIndex says
	// whether there was one.
	keptIndex    int
	hasKeptIndex bool
	// noParent is true when the line has no parentId member.
	noParent bool
	// hookRole is true for a message stored with role hookMessage.
	hookRole bool
	// inPlace is true when strings were unescaped into the line, which no
	// longer holds the stored bytes; crc is the IEEE CRC-32 of those.
	inPlace bool
	crc     uint32
}

// parallelBytes is the file size from which lines are decoded by several
// goroutines. On two vCPUs, decoding the 974 KB large-session on two
// goroutines took BenchmarkParse (when Read still copied escaped strings
// out) from 1.17-1.21 ms to 0.98-1.08 and BenchmarkLoad from 1.48-1.61
// to 1.11-1.24 (interleaved, default GOGC; with GOGC=400, 1.05 to 0.69
// ms: in a loop that loads and drops sessions the collector takes much
// of what the second core gives). Smaller files were not measured: one
// goroutine decodes them in under 0.6 ms, and a second one's start and
// buffers weigh more in that. (This was 2 MiB while the first plan after
// a two-goroutine load seemed to cost more; it was the runtime's
// scavenger at work during the timed plan, see compact's
// BenchmarkPlanFirst.)
const parallelBytes = 512 << 10

// runsPerWorker is how many runs of lines decodeLines cuts per worker.
const runsPerWorker = 8

// lineNote is what decoding a line found beyond the facts a record
// keeps, for the few lines that have more: the error of a line that is
// not a valid entry, or a stored firstKeptEntryIndex (version 1).
type lineNote struct {
	i            int // the line's index in the records decoded
	err          error
	keptIndex    int
	hasKeptIndex bool
}

// decoded returns r with the entry and the facts of d.
func (r record) decoded(d *decodedLine) record {
	r.entry = d.e
	r.assignedParent = d.noParent
	r.hookRole = d.hookRole
	r.inPlace, r.crc = d.inPlace, d.crc
	return r
}

// decodeRecords decodes the lines of recs[from:to] with d into their
// records and appends the notes on them to notes.
func decodeRecords(d lineDecoder, recs []record, from, to int, notes []lineNote) []lineNote {
	for i := from; i < to; i++ {
		r := &recs[i]
		dl := d.decode(r.raw)
		*r = r.decoded(&dl)
		if dl.err != nil || dl.hasKeptIndex {
			notes = append(notes, lineNote{i: i, err: dl.err, keptIndex: dl.keptIndex, hasKeptIndex: dl.hasKeptIndex})
		}
	}
	return notes
}

// decodeLines decodes the line of every record into it, and returns the
// notes on them in order and the spans rebuild decoders unescaped in
// place, by address; the lines of large files are decoded concurrently,
// by one goroutine per available CPU. Lines are independent, so the
// result is the same as decoding them in order.
func decodeLines(recs []record, newDecoder func() lineDecoder) ([]lineNote, []heldSpan) {
	total, longest := 0, 0
	for i := range recs {
		total += len(recs[i].raw)
		longest = max(longest, len(recs[i].raw))
	}
	// A decoder that can size its scratch space for the longest line
	// allocates it once rather than growing it line by line.
	newDecoder = func(newDecoder func() lineDecoder) func() lineDecoder {
		return func() lineDecoder {
			d := newDecoder()
			if r, ok := d.(reserver); ok {
				r.reserve(longest)
			}
			return d
		}
	}(newDecoder)
	workers := runtime.GOMAXPROCS(0)
	if total < parallelBytes || workers < 2 || len(recs) < 2*workers {
		d := newDecoder()
		notes := decodeRecords(d, recs, 0, len(recs), nil)
		return notes, heldBy(d)
	}
	// Cut the lines into runs of similar size in bytes, a few per worker,
	// which the workers take in turn: a worker that meets cheaper lines
	// (fewer escapes, say) takes more runs instead of waiting for the
	// others. The calling goroutine is one of the workers.
	per := total/(workers*runsPerWorker) + 1
	var ends []int
	acc := 0
	for i := range recs {
		acc += len(recs[i].raw)
		if acc >= per || i == len(recs)-1 {
			ends = append(ends, i+1)
			acc = 0
		}
	}
	var (
		taken atomic.Int32
		mu    sync.Mutex
		notes []lineNote
		held  []heldSpan
	)
	work := func() {
		d := newDecoder()
		var mine []lineNote
		for {
			k := int(taken.Add(1)) - 1
			if k >= len(ends) {
				break
			}
			from := 0
			if k > 0 {
				from = ends[k-1]
			}
			mine = decodeRecords(d, recs, from, ends[k], mine)
		}
		spans := heldBy(d)
		if len(mine) > 0 || len(spans) > 0 {
			mu.Lock()
			notes = append(notes, mine...)
			held = append(held, spans...)
			mu.Unlock()
		}
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	slices.SortFunc(notes, func(a, b lineNote) int { return cmp.Compare(a.i, b.i) })
	// Each run's spans are in order; the runs came in any order.
	slices.SortFunc(held, func(a, b heldSpan) int { return cmp.Compare(a.at(), b.at()) })
	return notes, held
}

// heldBy returns the spans d unescaped in place, if it keeps any.
func heldBy(d lineDecoder) []heldSpan {
	if h, ok := d.(interface{ heldSpans() []heldSpan }); ok {
		return h.heldSpans()
	}
	return nil
}

// decodeLine parses one entry line into its wire form and domain entry:
// the reference path, which fastDecoder.decode takes for the lines its
// fast path does not handle.
func decodeLine(line []byte) decodedLine {
	return decodeLineWith(line, json.Unmarshal)
}

// decodeLineWith is decodeLine with the wire structs decoded by unmarshal.
func decodeLineWith(line []byte, unmarshal func([]byte, any) error) decodedLine {
	w, err := decodeEntry(line, unmarshal)
	if err != nil {
		return decodedLine{err: err}
	}
	var e *compact.Entry
	switch w.Type {
	case "":
		err = errors.New("field type: missing")
	case "session":
		err = errors.New("a second session header")
	default:
		e, err = w.toEntry()
	}
	if err != nil {
		return decodedLine{err: err}
	}
	if e.Kind == compact.KindMessage {
		messageExtras(line, e.Message)
	}
	d := decodedLine{e: e, noParent: w.ParentID == nil, hookRole: w.Message != nil && w.Message.Role == "hookMessage"}
	if w.FirstKeptEntryIndex != nil && e.Compaction != nil {
		d.keptIndex, d.hasKeptIndex = *w.FirstKeptEntryIndex, true
	}
	return d
}

// splitGlued cuts a line holding several complete JSON objects one after
// the other (an entry whose newline was lost, followed by the next) into
// those objects, each with its capacity at its length. The last object
// may be cut short (an interrupted write): it is then returned as tail,
// and not among the parts. It returns nil parts unless the line is two or
// more objects, the last possibly cut short, and nothing else (whitespace
// between them aside).
func splitGlued(line []byte) (parts [][]byte, tail []byte) {
	dec := stdjson.NewDecoder(bytes.NewReader(line))
	start := 0
	for {
		var v stdjson.RawMessage
		if err := dec.Decode(&v); err != nil {
			rest := bytes.TrimLeft(line[start:], " \t\r\n")
			switch {
			case err == io.EOF:
			case len(parts) > 0 && len(rest) > 0 && rest[0] == '{' && torn(rest):
				tail = rest
			default:
				return nil, nil
			}
			break
		}
		end := int(dec.InputOffset())
		part := bytes.TrimLeft(line[start:end], " \t\r\n")
		if len(part) == 0 || part[0] != '{' {
			return nil, nil
		}
		off := end - len(part)
		parts = append(parts, line[off:end:end])
		start = end
	}
	if len(parts) < 2 && tail == nil {
		return nil, nil
	}
	return parts, tail
}

// decodeGlued decodes the objects of a glued line as entries. It fails,
// naming the object, when one of them is not a valid entry.
func decodeGlued(parts [][]byte) ([]decodedLine, error) {
	var d fastDecoder
	out := make([]decodedLine, len(parts))
	for k, p := range parts {
		out[k] = d.decode(p)
		if err := out[k].err; err != nil {
			return nil, fmt.Errorf("entry %d: %w", k+1, err)
		}
	}
	return out, nil
}

// torn reports whether a line that failed to parse is the remains of an
// interrupted write: its JSON is cut short. Only the last line may be
// torn without an error: a torn line with lines after it (which is also
// what a file looks like after an append followed a crash, since appends
// start on a fresh line) may hide lost entries and needs Lenient.
func torn(line []byte) bool {
	var v any
	err := stdjson.Unmarshal(line, &v)
	var syn *stdjson.SyntaxError
	cutShort := err != nil && (errors.Is(err, io.ErrUnexpectedEOF) || (errors.As(err, &syn) && syn.Offset >= int64(len(line))) ||
		err.Error() == "unexpected end of JSON input")
	return cutShort
}

func parseHeader(line []byte) (Header, error) {
	if bytes.HasPrefix(line, []byte("\xef\xbb\xbf")) {
		// pi writes none; JSON does not allow one before the header.
		return Header{}, fmt.Errorf("%w: the file starts with a byte order mark (bytes EF BB BF) before the header; remove those 3 bytes", ErrNotSession)
	}
	var w wireEntry
	if err := stdjson.Unmarshal(line, &w); err != nil {
		if field, want, have, ok := typeError(err); ok {
			return Header{}, fmt.Errorf("%w: field %s of the header: want %s, have %s", ErrNotSession, field, want, have)
		}
		return Header{}, fmt.Errorf("%w: the first line is not JSON (%v)", ErrNotSession, err)
	}
	if w.Type != "session" {
		return Header{}, fmt.Errorf("%w: the first line has type %q, want \"session\"", ErrNotSession, w.Type)
	}
	if w.ID == "" {
		return Header{}, fmt.Errorf("%w: field id: missing in the session header", ErrNotSession)
	}
	v := w.Version
	switch {
	case v == 0:
		v = 1
	case v < 0:
		return Header{}, fmt.Errorf("%w: field version: %d is no session format version (pi writes 1 to %d)", ErrNotSession, v, CurrentVersion)
	}
	return Header{Version: v, ID: w.ID, Timestamp: w.Timestamp, Cwd: w.Cwd, ParentSession: w.ParentSession,
		Provider: w.Provider, ModelID: w.ModelID}, nil
}
