package cline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/compactkit/compact/internal/jsonrec"
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
		return nil, "", fmt.Errorf("%s:%d: not a JSON array: %w", name, jsonrec.Line(data, int(dec.InputOffset())), err)
	}
	if t != json.Delim('[') {
		return nil, "", fmt.Errorf("%s:1: not a JSON array (starts with %v)", name, t)
	}
	var out []element
	for dec.More() {
		start := jsonrec.SkipSpace(data, dec.InputOffset())
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if cut(err) && len(out) > 0 {
				return out, fmt.Sprintf("%s:%d: file ends inside %s %d; read the %d before it",
					name, jsonrec.Line(data, int(start)), what, len(out)+1, len(out)), nil
			}
			return nil, "", fmt.Errorf("%s:%d: %s %d: %w", name, jsonrec.Line(data, int(start)), what, len(out)+1, err)
		}
		var buf bytes.Buffer
		if json.Compact(&buf, raw) == nil && buf.Len() < len(raw) {
			raw = buf.Bytes()
		}
		out = append(out, element{raw: raw, line: jsonrec.Line(data, int(start))})
	}
	if _, err := dec.Token(); err != nil {
		if cut(err) && len(out) > 0 {
			return out, fmt.Sprintf("%s:%d: file ends before the array is closed", name, jsonrec.Line(data, len(data))), nil
		}
		return nil, "", fmt.Errorf("%s:%d: %w", name, jsonrec.Line(data, int(dec.InputOffset())), err)
	}
	return out, "", nil
}

// cut reports whether err means the input ended early.
func cut(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}
