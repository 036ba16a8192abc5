package jsonrec

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Lines splits data, a JSON Lines file named name, into its lines and
// hands each non-empty one, white space trimmed, to decode with its
// 1-based line number; a leading byte order mark is dropped. A last line
// that decode refuses and that is not valid JSON, with no newline after
// it (a write cut short), is dropped with a warning "name:N: the last
// line is cut short ..."; any other refused line stops the read with
// the error "name:N: " + decode's error, wrapped.
func Lines[T any](data []byte, name string, decode func(line []byte, n int) (T, error)) (recs []T, warnings []string, err error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	n := 0
	for len(data) > 0 {
		n++
		var line []byte
		i := bytes.IndexByte(data, '\n')
		last := i < 0
		if last {
			line, data = data, nil
		} else {
			line, data = data[:i], data[i+1:]
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		r, err := decode(line, n)
		if err != nil {
			if last && !json.Valid(line) {
				warnings = append(warnings, fmt.Sprintf("%s:%d: the last line is cut short (%d bytes, no newline), ignored: %v", name, n, len(line), err))
				break
			}
			return nil, nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		recs = append(recs, r)
	}
	return recs, warnings, nil
}

// FirstObject reads the first non-empty line of head, the first bytes
// of a JSON Lines file possibly cut anywhere (a leading byte order mark
// dropped), as a JSON object: obj holds its members when it is one. When
// it is not, cut reports a line that starts an object but that head ends
// before its newline, so that a detector judges it by its start; line is
// that first line, white space trimmed.
func FirstObject(head []byte) (obj map[string]json.RawMessage, line []byte, cut bool) {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	complete := false
	for len(head) > 0 {
		i := bytes.IndexByte(head, '\n')
		if i < 0 {
			line, head, complete = head, nil, false
		} else {
			line, head, complete = head[:i], head[i+1:], true
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			break
		}
	}
	if len(line) == 0 || line[0] != '{' {
		return nil, line, false
	}
	if err := json.Unmarshal(line, &obj); err != nil {
		return nil, line, !complete
	}
	return obj, line, false
}
