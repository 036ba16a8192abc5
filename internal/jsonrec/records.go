package jsonrec

import (
	"encoding/json"

	"github.com/compactkit/compact"
)

// Record is one line of a JSON Lines file read as an object, the part of
// a line record every reader of such a file has; a reader embeds it in
// its own record type beside the members it routes on.
type Record struct {
	// Line is the 1-based line number, for errors and warnings.
	Line int
	// Raw is the line as stored, white space trimmed. It points into the
	// data read; Copy returns bytes of its own.
	Raw []byte
	// Fields holds every member as stored.
	Fields map[string]json.RawMessage
}

// Copy returns a copy of the line's bytes, for an entry that keeps the
// line as its data without holding on to the caller's buffer.
func (r *Record) Copy() json.RawMessage {
	data := make([]byte, len(r.Raw))
	copy(data, r.Raw)
	return data
}

// Records splits data, a JSON Lines file named name, into its lines as
// Lines does, reads each non-empty one as an object (LineObject) and hands
// it to decode, which makes the reader's own record of it: a last line cut
// short is dropped with a warning, any other bad line is an error
// "name:N: ...".
func Records[T any](data []byte, name string, decode func(r Record) (T, error)) (recs []T, warnings []string, err error) {
	return Lines(data, name, func(line []byte, n int) (T, error) {
		fields, err := LineObject(line)
		if err != nil {
			var zero T
			return zero, err
		}
		return decode(Record{Line: n, Raw: line, Fields: fields})
	})
}

// ReadRecords reads data, a JSON Lines file named name, into records with
// decode (see Records) and gives them to build, which makes the
// transcript; the warnings about a last line cut short come first among
// its warnings.
func ReadRecords[T any](data []byte, name string, decode func(r Record) (T, error), build func(recs []T) (*compact.Transcript, error)) (*compact.Transcript, error) {
	recs, warnings, err := Records(data, name, decode)
	if err != nil {
		return nil, err
	}
	t, err := build(recs)
	if err != nil {
		return nil, err
	}
	if len(warnings) > 0 {
		t.Warnings = append(warnings, t.Warnings...)
	}
	return t, nil
}

// Sniff judges the first non-empty line of head, the first bytes of a
// JSON Lines file (see FirstObject), for a detector: an object with
// whole, a line that starts an object but that head ends before its
// newline with cut (by the members it starts with); anything else is
// not the format.
func Sniff(head []byte, whole func(obj map[string]json.RawMessage) bool, cut func(line []byte) bool) bool {
	obj, line, isCut := FirstObject(head)
	switch {
	case isCut:
		return cut(line)
	case obj == nil:
		return false
	}
	return whole(obj)
}
