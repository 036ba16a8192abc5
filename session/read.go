package session

import (
	"bytes"
	"cmp"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

	json "github.com/goccy/go-json"

	"github.com/compactkit/compact"
)

// CurrentVersion is the session format version this package writes.
const CurrentVersion = 3

// Options control how a session file is read.
type Options struct {
	// Lenient skips malformed lines (with a warning) instead of failing,
	// a cut-short line before the last one included, and only warns about
	// repeated ids and parent links that loop. Without it, only the last
	// line may be cut short.
	// Lines are never removed from the file either way, and a session
	// with skipped lines refuses to be rewritten (WriteTo, Migrate).
	Lenient bool
	// Warn receives one-line warnings (torn lines, skipped lines), each
	// starting with file:line.
	// nil discards them; they stay available from Session.Warnings.
	Warn func(msg string)
}

// LineError is a problem with one line of a session file.
type LineError struct {
	File string
	Line int // 1-based
	Err  error
}

// Error returns "file:line: cause".
func (e *LineError) Error() string {
	return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
}

// Unwrap returns the cause, so that errors.Is finds ErrMalformed or
// ErrNotSession through a LineError.
func (e *LineError) Unwrap() error { return e.Err }

// Errors reported by Open and Read, wrapped in a *LineError.
var (
	// ErrNotSession means the first line is not a session header. When
	// the file looks like another format (a Claude Code or Codex
	// transcript, a JSON document, a request body), the error names it.
	ErrNotSession = errors.New("not a pi session file")
	// ErrMalformed means a line is not a valid entry.
	ErrMalformed = errors.New("malformed line")
)

// Header is the first line of a session file.
type Header struct {
	// Version is the format version of the file as stored (1 when absent).
	Version       int
	ID            string
	Timestamp     string
	Cwd           string
	ParentSession string
	// Provider and ModelID are the model named by version 1 headers.
	Provider string
	ModelID  string
}

// record is one entry with the bytes it was read from.
type record struct {
	entry *compact.Entry
	line  int    // 1-based line number in the file, 0 for appended entries
	raw   []byte // the line as stored (no newline)
	// fileIndex is the index among parsed entries with the header at 0,
	// which is what version 1 firstKeptEntryIndex counts.
	fileIndex int
	// assignedID and assignedParent are set when migration gave the
	// entry an id or parent it did not store.
	assignedID, assignedParent bool
	// keptIndex is a version 1 firstKeptEntryIndex that was resolved.
	keptIndex bool
	// hookRole is true for a version 2 message with role hookMessage.
	hookRole bool
	// inPlace is true when the decoder unescaped strings into the line:
	// raw no longer holds the stored bytes, whose IEEE CRC-32 is crc (see
	// Session.storedLines).
	inPlace bool
	crc     uint32
	// parent is the index in Session.records of the entry's parent (the
	// last entry with its ParentID), -1 for a root or a missing parent:
	// walking a path follows it rather than looking ids up.
	parent int32
}

// Read parses a session from r. name is used in errors and warnings.
func Read(r io.Reader, name string, opts Options) (*Session, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return parse(data, name, opts)
}

// Open reads the session file at path. The file is not modified: files of
// older versions are migrated in memory only (see Session.Migrate).
func Open(path string, opts Options) (*Session, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := parseOwned(data, path, opts)
	if err != nil {
		return nil, err
	}
	s.file = path
	s.size = int64(len(data))
	return s, nil
}

// parse reads a session held in memory.
//
// The session keeps data: records hold their lines as slices of it, and
// the fast decoder makes strings and raw values that point into it rather
// than copies (see fast.go). Lines are cut with their capacity at their
// length, so that appending to one cannot write into the next. The
// decoder also writes into data while parsing, and not afterwards: the
// strings with escapes that it can escape back as stored (those with
// JSON.stringify's escapes only, which is how pi writes them) are
// unescaped in place, over their stored bytes, rather than copied out;
// the session keeps where they are (Session.held) so that storedLines can
// rebuild those lines. Read and Open hand over buffers that nothing else
// refers to.
func parse(data []byte, name string, opts Options) (*Session, error) {
	return parseWith(data, name, opts, func() lineDecoder { return &fastDecoder{rebuild: true} })
}

// parseOwned is parse for Open, which can read the file again: escaped
// strings are unescaped in place, into data, instead of into copies
// (fastDecoder.overwrite), so that the decoded text costs no memory
// beyond the file's bytes. The lines so changed are marked in their
// records, with a checksum of their stored bytes, and storedLines reads
// them back from the file when the session is written out (Migrate,
// Fork). data is written to while parsing, and not afterwards.
func parseOwned(data []byte, name string, opts Options) (*Session, error) {
	s, err := parseWith(data, name, opts, func() lineDecoder { return &fastDecoder{inPlace: true} })
	if err != nil {
		return nil, err
	}
	s.data = data
	return s, nil
}

// parseWith is parse with the entry lines decoded by the decoders that
// newDecoder makes, one per goroutine (see ParseWith).
func parseWith(data []byte, name string, opts Options, newDecoder func() lineDecoder) (*Session, error) {
	all := data
	s := &Session{name: name, opts: opts, endsWithNewline: len(data) == 0 || data[len(data)-1] == '\n'}
	lineNo := 0
	headerSeen := false
	// Split the lines first: the header is parsed at once, the entries are
	// decoded below, in parallel for large files, into the records that
	// hold their lines, which build then keeps or drops. The lines are
	// counted first (a fast scan) so that the slice is allocated once:
	// growing it by appending would leave four times its size behind as
	// garbage.
	recs := make([]record, 0, bytes.Count(data, []byte{'\n'})+1)
	for len(data) > 0 {
		lineNo++
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i:i], data[i+1:]
		} else {
			line, data = data[:len(data):len(data)], nil
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if !headerSeen {
			h, err := parseHeader(line)
			var rest [][]byte
			if err != nil {
				// The header with the first entries glued after it (a lost
				// newline): the entries are read as lines of their own.
				if parts, tail := splitGlued(line); parts != nil {
					if gh, gerr := parseHeader(parts[0]); gerr == nil {
						h, err, line, rest = gh, nil, parts[0], parts[1:]
						if tail != nil {
							rest = append(rest, tail)
						}
						more := "1 entry"
						if len(rest) > 1 {
							more = fmt.Sprintf("%d entries", len(rest))
						}
						s.warn(fmt.Sprintf("%s:%d: the session header and %s on one line (a lost newline?) read in order; the file keeps the line as is",
							name, lineNo, more))
					}
				}
			}
			if err != nil {
				if ferr := foreignFormat(line, all); ferr != nil {
					err = ferr
				}
				return nil, &LineError{File: name, Line: lineNo, Err: err}
			}
			s.header, s.headerRaw, s.headerLine = h, line, lineNo
			headerSeen = true
			for _, b := range rest {
				recs = append(recs, record{line: lineNo, raw: b})
			}
			continue
		}
		recs = append(recs, record{line: lineNo, raw: line})
	}
	if !headerSeen {
		return nil, &LineError{File: name, Line: 1, Err: fmt.Errorf("%w: the file is empty", ErrNotSession)}
	}
	s.lines = lineNo
	notes, held := decodeLines(recs, newDecoder)
	s.held = held
	if err := s.build(recs, notes); err != nil {
		return nil, err
	}
	return s, nil
}

// build keeps the records of the decoded lines, in order, and drops the
// others (torn or, when lenient, malformed lines) or, for a line that
// holds several entries glued together, puts a record for each in its
// place; then it migrates and indexes them. notes are decodeLines'
// notes on recs, by index.
func (s *Session) build(recs []record, notes []lineNote) error {
	name, opts := s.name, s.opts
	// fileIndex counts the lines pi's loader keeps: every line that parses
	// as JSON, the header included (at 0). Version 1 firstKeptEntryIndex
	// values count the same way. Each entry of a glued line (entries whose
	// newline was lost) counts too, although pi's loader drops such a
	// line: pi wrote the index from the entries it held in memory, where
	// they were separate, so counting them makes later indexes name the
	// entry pi meant.
	fileIndex := 0
	// The records kept are moved down over recs, which they share until
	// glued lines would make them overtake the records not yet read; out
	// then moves to an array of its own.
	out, shared := recs[:0], true
	// kept holds a reference for each record with a stored
	// firstKeptEntryIndex, and keptAt that record's index in out: out may
	// still move, so the references point at their records at the end.
	var (
		kept   []v1Ref
		keptAt []int
	)
	// last is the last non-empty line, the only one that may be torn.
	last := 0
	if len(recs) > 0 {
		last = recs[len(recs)-1].line
	}
	add := func(r record, n *lineNote) {
		fileIndex++
		r.fileIndex = fileIndex
		if n != nil && n.hasKeptIndex {
			r.keptIndex = true
			kept = append(kept, v1Ref{index: n.keptIndex})
			keptAt = append(keptAt, len(out))
		}
		if r.inPlace {
			s.inPlace++
		}
		out = append(out, r)
	}
	for i := range recs {
		r := recs[i] // out may take its place
		var n *lineNote
		if len(notes) > 0 && notes[0].i == i {
			n, notes = &notes[0], notes[1:]
		}
		if n == nil || n.err == nil {
			add(r, n)
			continue
		}
		err := n.err
		// cutShort handles a line (or the end of one) cut short by an
		// interrupted write: only the last line may be, unless lenient.
		cutShort := func(what string) error {
			if r.line != last && !opts.Lenient {
				return &LineError{File: name, Line: r.line, Err: fmt.Errorf("%w: %s (an interrupted write?) followed by more lines; "+
					"read the file with --lenient to skip it (the entries after it may then hang from a missing parent)", ErrMalformed, what)}
			}
			s.tornLine = max(s.tornLine, r.line)
			return nil
		}
		if parts, tail := splitGlued(r.raw); parts != nil {
			glued, gerr := decodeGlued(parts)
			if gerr == nil {
				msg := fmt.Sprintf("%s:%d: %d entries on one line (a lost newline?) read in order", name, r.line, len(parts))
				if tail != nil {
					if err := cutShort("entries on one line, the last one incomplete"); err != nil {
						return err
					}
					complete := "1 complete entry"
					if len(parts) > 1 {
						complete = fmt.Sprintf("%d complete entries", len(parts))
					}
					msg = fmt.Sprintf("%s:%d: %s and an incomplete one on one line (a lost newline, then an interrupted write?): "+
						"the complete ones read in order, the incomplete one ignored", name, r.line, complete)
				}
				if shared && len(out)+len(parts) > i+1 {
					out = append(make([]record, 0, len(recs)+len(parts)), out...)
					shared = false
				}
				for k := range glued {
					g := &glued[k]
					add(record{line: r.line, raw: parts[k]}.decoded(g), &lineNote{keptIndex: g.keptIndex, hasKeptIndex: g.hasKeptIndex})
				}
				s.warn(msg + "; the file keeps the line as is")
				continue
			}
			err = fmt.Errorf("%v; as %d entries glued together: %v", err, len(parts), gerr)
		} else if torn(r.raw) {
			if err := cutShort("incomplete line"); err != nil {
				return err
			}
			if r.line == last {
				s.warn(fmt.Sprintf("%s:%d: incomplete line (an interrupted write?) ignored; the file keeps it", name, r.line))
			} else {
				s.warn(fmt.Sprintf("%s:%d: incomplete line (an interrupted write?) followed by more lines, skipped; the file keeps it", name, r.line))
			}
			continue
		}
		lerr := &LineError{File: name, Line: r.line, Err: fmt.Errorf("%w: %v", ErrMalformed, err)}
		if !opts.Lenient {
			return lerr
		}
		if stdjson.Valid(r.raw) {
			fileIndex++ // pi keeps the line, so it counts
		}
		s.skipped = append(s.skipped, r.line)
		s.warn(lerr.Error() + " (skipped)")
	}
	s.records = make([]*record, len(out))
	for i := range out {
		s.records[i] = &out[i]
	}
	for k, at := range keptAt {
		kept[k].rec = &out[at]
	}
	s.v1Index = kept
	s.nextIndex = fileIndex + 1
	if err := s.migrate(); err != nil {
		return err
	}
	return s.index()
}

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

type v1Ref struct {
	rec   *record
	index int
}

// migrate brings version 1 and 2 entries to version 3 in memory: ids and
// parent links for entries that have none, firstKeptEntryIndex resolved to
// an id, and the hookMessage role renamed (done while decoding).
//
// Ids given to version 1 entries are derived from the session id and the
// entry's position, so every read of the file gives the same ids and an
// entry appended later can refer to them.
func (s *Session) migrate() error {
	// Each step applies only to the versions pi migrates with it: ids,
	// parent links and firstKeptEntryIndex for version 1, the hookMessage
	// role for versions 1 and 2. Newer files are left as stored, so that
	// writing them back gives the same bytes.
	for _, r := range s.records {
		if s.header.Version >= 2 {
			r.assignedParent = false
			r.keptIndex = false
		}
		if s.header.Version >= CurrentVersion {
			r.hookRole = false
		}
	}
	if s.header.Version >= 2 {
		s.v1Index = nil
		return nil
	}
	var taken idSet
	missing := 0
	for _, r := range s.records {
		if r.entry.ID == "" {
			missing++
			continue
		}
		if taken.stored == nil {
			taken.stored = make(map[string]bool)
		}
		taken.stored[r.entry.ID] = true
	}
	taken.derived = newSet32(missing)
	// The derived ids share one buffer, written once and never again.
	var ids []byte
	prefix := idPrefix(s.header.ID)
	prev := ""
	for _, r := range s.records {
		e := r.entry
		if e.ID == "" {
			if cap(ids)-len(ids) < 8 {
				ids = make([]byte, 0, 8*len(s.records))
			}
			id, v := derivedID(prefix, r.fileIndex, &taken)
			n := len(ids)
			ids = append(ids, id[:]...)
			e.ID = unsafe.String(&ids[n], 8)
			taken.derived.add(v)
			r.assignedID = true
		}
		if r.assignedParent {
			e.ParentID = prev
		}
		prev = e.ID
	}
	for _, ref := range s.v1Index {
		// Records read from the file are in file index order.
		i, found := slices.BinarySearchFunc(s.records, ref.index, func(r *record, index int) int { return cmp.Compare(r.fileIndex, index) })
		if !found {
			return &LineError{File: s.name, Line: ref.rec.line,
				Err: fmt.Errorf("%w: field firstKeptEntryIndex: %d names no entry", ErrMalformed, ref.index)}
		}
		ref.rec.entry.Compaction.FirstKeptID = s.records[i].entry.ID
	}
	s.v1 = true
	return nil
}

// FNV-1a, which derivedID hashes with.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// idPrefix returns the state of derivedID's hash after the session id and
// the zero byte that follows it, the same for every entry of a session.
func idPrefix(sessionID string) uint64 {
	h := uint64(fnvOffset)
	for i := 0; i < len(sessionID); i++ {
		h = (h ^ uint64(sessionID[i])) * fnvPrime
	}
	return h * fnvPrime // the zero byte
}

// idSet is the set of ids that migrate has met: the ids stored in the
// file, by string (a version 1 file, the only kind migrate gives ids to,
// normally stores none), and the ids derived so far, by the number their
// eight hex digits spell, which hashes faster than the string.
type idSet struct {
	stored  map[string]bool
	derived set32
}

// has reports whether the derived id id, whose digits spell v, is taken.
func (t *idSet) has(id [8]byte, v uint32) bool {
	return t.derived.has(v) || t.stored[string(id[:])]
}

// set32 is a set of hash values: open addressing in a table of at least
// twice as many slots as values, indexed by the value's low bits (the
// values are hashes already), with linear probing. A map[uint32] did
// the same at twice the cost, half of it making and clearing its table.
type set32 struct {
	slots []uint32 // a value, or empty
	zero  bool     // whether 0, which marks an empty slot, is in the set
	n     int
}

const empty32 = 0

// newSet32 returns a set with room for n values before it grows.
func newSet32(n int) set32 {
	size := 16
	for size < 2*n {
		size *= 2
	}
	return set32{slots: make([]uint32, size)}
}

func (s *set32) has(v uint32) bool {
	if v == empty32 {
		return s.zero
	}
	mask := uint32(len(s.slots) - 1)
	for i := v & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case v:
			return true
		case empty32:
			return false
		}
	}
}

func (s *set32) add(v uint32) {
	if v == empty32 {
		s.zero = true
		return
	}
	if 2*(s.n+1) > len(s.slots) {
		old, zero := s.slots, s.zero
		*s = newSet32(2 * (s.n + 1))
		s.zero = zero
		for _, w := range old {
			if w != empty32 {
				s.insert(w)
			}
		}
	}
	s.insert(v)
}

// insert puts v, not empty32, in the set, which has room for it.
func (s *set32) insert(v uint32) {
	mask := uint32(len(s.slots) - 1)
	for i := v & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case v:
			return
		case empty32:
			s.slots[i] = v
			s.n++
			return
		}
	}
}

// derivedID returns an 8-hex-digit id for the entry at fileIndex of the
// session whose idPrefix is prefix, unique among taken, and the number
// its digits spell: the low 32 bits of the FNV-1a hash of the session id,
// a zero byte and the decimal index, followed by a zero byte and a
// decimal salt from the second try on.
func derivedID(prefix uint64, fileIndex int, taken *idSet) (id [8]byte, v uint32) {
	var num [20]byte
	for salt := 0; ; salt++ {
		h := prefix
		for _, c := range strconv.AppendInt(num[:0], int64(fileIndex), 10) {
			h = (h ^ uint64(c)) * fnvPrime
		}
		if salt > 0 {
			h *= fnvPrime
			for _, c := range strconv.AppendInt(num[:0], int64(salt), 10) {
				h = (h ^ uint64(c)) * fnvPrime
			}
		}
		v = uint32(h)
		const digits = "0123456789abcdef"
		for i, w := 7, v; i >= 0; i, w = i-1, w>>4 {
			id[i] = digits[w&15]
		}
		if !taken.has(id, v) {
			return id, v
		}
	}
}

// index builds the id map, the leaf and the labels, and checks ids.
func (s *Session) index() error {
	s.pos = make(map[string]int, len(s.records))
	s.labels = make(map[string]string)
	// unique is true while no id is used twice: every record is then the
	// one its id names, which spares looking ids up below.
	unique := true
	for i, r := range s.records {
		e := r.entry
		if e.ID == "" {
			return &LineError{File: s.name, Line: r.line, Err: fmt.Errorf("%w: field id: missing", ErrMalformed)}
		}
		// One map operation: an id used before leaves the map's size
		// as it was (and the later entry wins).
		n := len(s.pos)
		if s.pos[e.ID] = i; len(s.pos) == n {
			err := &LineError{File: s.name, Line: r.line, Err: fmt.Errorf("%w: field id: %q is used by an earlier entry", ErrMalformed, e.ID)}
			if !s.opts.Lenient {
				return err
			}
			s.warn(err.Error() + " (the later entry wins)")
			unique = false
		}
		s.leaf = e.ID
		if e.Kind == compact.KindLabel {
			if m := e.Metadata(); m.Label != "" {
				s.labels[m.TargetID] = m.Label
			} else {
				delete(s.labels, m.TargetID)
			}
		}
	}
	for i, r := range s.records {
		if c := r.entry.Compaction; c != nil && c.FirstKeptID != "" {
			if _, ok := s.pos[c.FirstKeptID]; !ok {
				// pi keeps nothing then: the summary stands for all that
				// came before the compaction. Worth saying, not refusing.
				s.warn(fmt.Sprintf("%s:%d: compaction entry %q keeps from entry %q, which the file does not hold: nothing before the compaction is in the context, only its summary",
					s.name, r.line, r.entry.ID, c.FirstKeptID))
			}
		}
		// An entry's parent is most often the entry before it.
		if unique && i > 0 && r.entry.ParentID != "" && s.records[i-1].entry.ID == r.entry.ParentID {
			r.parent = int32(i - 1)
			continue
		}
		r.parent = s.parentOf(r.entry)
	}
	return s.checkCycles(unique)
}

// parentOf returns the index in records of e's parent, -1 if none.
func (s *Session) parentOf(e *compact.Entry) int32 {
	if e.ParentID == "" {
		return -1
	}
	if j, ok := s.pos[e.ParentID]; ok {
		return int32(j)
	}
	return -1
}

// checkCycles fails when parent links loop (an entry that is its own
// ancestor): pi walks parent links without a guard and would hang on such
// a file, and no path through the loop has a root. In lenient mode the
// loop is only reported. unique says that no id is used twice.
func (s *Session) checkCycles(unique bool) error {
	const (
		unseen = iota
		open
		done
	)
	// An id stands for the record s.pos gives, the last one with the id,
	// as in Entry.
	state := make([]uint8, len(s.records))
	var chain []int
	for i, r := range s.records {
		chain = chain[:0]
		j, ok := i, true
		if !unique {
			j, ok = s.pos[r.entry.ID]
		}
		for ok && state[j] == unseen {
			state[j] = open
			chain = append(chain, j)
			p := s.records[j].parent
			j, ok = int(p), p >= 0
		}
		if ok && state[j] == open {
			line, id := s.records[j].line, s.records[j].entry.ID
			err := &LineError{File: s.name, Line: line, Err: fmt.Errorf("%w: field parentId: the parent links from entry %q form a cycle", ErrMalformed, id)}
			if !s.opts.Lenient {
				return err
			}
			s.warn(err.Error())
		}
		for _, c := range chain {
			state[c] = done
		}
	}
	return nil
}

func (s *Session) warn(msg string) {
	s.warnings = append(s.warnings, msg)
	if s.opts.Warn != nil {
		s.opts.Warn(msg)
	}
}
