package cline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// element is one member of a top-level JSON array, with the line it starts
// on (1-based) for error messages.
type element struct {
	raw  json.RawMessage
	line int
}

// decodeArray splits data, a JSON array, into its elements. An array cut
// short after at least one whole element (a write that did not finish) is
// returned with a warning; any other syntax error is an error naming the
// line. what names an element in messages ("message", "ui message").
func decodeArray(data []byte, name, what string) ([]element, string, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	dec := json.NewDecoder(bytes.NewReader(data))
	t, err := dec.Token()
	if err != nil {
		return nil, "", fmt.Errorf("%s:%d: not a JSON array: %w", name, lineAt(data, dec.InputOffset()), err)
	}
	if t != json.Delim('[') {
		return nil, "", fmt.Errorf("%s:1: not a JSON array (starts with %v)", name, t)
	}
	var out []element
	for dec.More() {
		start := skipSpace(data, dec.InputOffset())
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if cut(err) && len(out) > 0 {
				return out, fmt.Sprintf("%s:%d: file ends inside %s %d; read the %d before it",
					name, lineAt(data, start), what, len(out)+1, len(out)), nil
			}
			return nil, "", fmt.Errorf("%s:%d: %s %d: %w", name, lineAt(data, start), what, len(out)+1, err)
		}
		var buf bytes.Buffer
		if json.Compact(&buf, raw) == nil && buf.Len() < len(raw) {
			raw = buf.Bytes()
		}
		out = append(out, element{raw: raw, line: lineAt(data, start)})
	}
	if _, err := dec.Token(); err != nil {
		if cut(err) && len(out) > 0 {
			return out, fmt.Sprintf("%s:%d: file ends before the array is closed", name, lineAt(data, int64(len(data)))), nil
		}
		return nil, "", fmt.Errorf("%s:%d: %w", name, lineAt(data, dec.InputOffset()), err)
	}
	return out, "", nil
}

// cut reports whether err means the input ended early.
func cut(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

// skipSpace returns the offset of the first non-space byte at or after off
// (past a separating comma too).
func skipSpace(data []byte, off int64) int64 {
	for off < int64(len(data)) {
		switch data[off] {
		case ' ', '\t', '\r', '\n', ',':
			off++
		default:
			return off
		}
	}
	return off
}

// lineAt returns the 1-based line of byte offset off.
func lineAt(data []byte, off int64) int {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off < 0 {
		off = 0
	}
	return bytes.Count(data[:off], []byte{'\n'}) + 1
}
