package session

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

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
	// the file's JSON shape shows why (a JSON array, a pretty-printed
	// document), the error says so; agents.OpenSession also names the
	// agent whose file it is.
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
