package codex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// record is one line of a rollout: its type, timestamp and payload
// decoded, every member kept as stored.
type record struct {
	line   int
	raw    []byte
	fields map[string]json.RawMessage

	typ       string
	timestamp string
	// payload is the payload object; for the bare lines of early
	// rollouts it is the line itself.
	payload map[string]json.RawMessage
	// ptype is payload.type.
	ptype string
}

// parseRecords splits data into lines and decodes each non-empty one. A
// last line that is not valid JSON and has no newline after it (a write
// cut short) is dropped with a warning; any other bad line is an error
// naming the line.
func parseRecords(data []byte, name string) (recs []*record, warnings []string, err error) {
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
		r, err := decodeRecord(line, n)
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

// decodeRecord decodes one line.
func decodeRecord(line []byte, n int) (*record, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if fields == nil {
		return nil, fmt.Errorf("not a JSON object: null")
	}
	r := &record{line: n, raw: line, fields: fields}
	var err error
	if r.typ, err = optString(fields, "type"); err != nil {
		return nil, err
	}
	if r.timestamp, err = optString(fields, "timestamp"); err != nil {
		return nil, err
	}
	if _, ok := fields["payload"]; ok {
		p, ok, err := object(fields, "payload")
		if err != nil {
			return nil, err
		}
		if !ok {
			p = map[string]json.RawMessage{}
		}
		r.payload = p
		if r.ptype, err = optString(p, "type"); err != nil {
			return nil, fmt.Errorf("field payload.%w", trimField(err))
		}
		return r, nil
	}
	// An early rollout's bare line: the item is the line.
	r.payload, r.ptype = fields, r.typ
	return r, nil
}

// trimField turns "field x: ..." into "x: ..." for nesting.
func trimField(err error) error {
	return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "field "))
}

// optString returns the string member key of fields, "" when it is
// absent or null, and an error naming the field when it is another kind
// of value.
func optString(fields map[string]json.RawMessage, key string) (string, error) {
	raw, ok := fields[key]
	if !ok || isNull(raw) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("field %s: want a string, have %s", key, abbrev(raw))
	}
	return s, nil
}

// optBool is optString for booleans.
func optBool(fields map[string]json.RawMessage, key string) (bool, error) {
	raw, ok := fields[key]
	if !ok || isNull(raw) {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return false, fmt.Errorf("field %s: want true or false, have %s", key, abbrev(raw))
	}
	return b, nil
}

// optInt is optString for integers.
func optInt(fields map[string]json.RawMessage, key string) (int, error) {
	raw, ok := fields[key]
	if !ok || isNull(raw) {
		return 0, nil
	}
	var v int
	if err := json.Unmarshal(raw, &v); err != nil {
		return 0, fmt.Errorf("field %s: want an integer, have %s", key, abbrev(raw))
	}
	return v, nil
}

// object decodes the member key as a JSON object; ok is false when it is
// absent or null.
func object(fields map[string]json.RawMessage, key string) (obj map[string]json.RawMessage, ok bool, err error) {
	raw, present := fields[key]
	if !present || isNull(raw) {
		return nil, false, nil
	}
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, false, fmt.Errorf("field %s: want an object, have %s", key, abbrev(raw))
	}
	return obj, true, nil
}

func isNull(raw json.RawMessage) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}

// abbrev returns raw shortened for an error message.
func abbrev(raw []byte) string {
	const max = 40
	raw = bytes.TrimSpace(raw)
	if len(raw) > max {
		return string(raw[:max]) + "..."
	}
	return string(raw)
}

// without returns the members of fields other than the keys, nil when
// none is left.
func without(fields map[string]json.RawMessage, keys ...string) map[string]json.RawMessage {
	var out map[string]json.RawMessage
	for k, v := range fields {
		skip := false
		for _, x := range keys {
			if k == x {
				skip = true
				break
			}
		}
		if skip {
			continue
		}
		if out == nil {
			out = make(map[string]json.RawMessage, len(fields))
		}
		out[k] = v
	}
	return out
}
