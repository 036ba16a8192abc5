package jsonrec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Below turns the error of a member read by OptString and its kin
// ("field x: ...") into the path below the object that holds it (".x:
// ..."), for the caller to say where that object stands:
// fmt.Errorf("field payload%w", Below(err)) reads "field payload.x: ...".
func Below(err error) error {
	return fmt.Errorf(".%s", strings.TrimPrefix(err.Error(), "field "))
}

// OptString returns the string member key of fields: "" when it is
// absent or null, and an error "field KEY: want a string, have VALUE"
// when it is another kind of value. Unlike String, whose errors follow
// a path, its errors stand on their own after a line number.
func OptString(fields map[string]json.RawMessage, key string) (string, error) {
	raw, ok := fields[key]
	if !ok || IsNull(raw) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("field %s: want a string, have %s", key, Abbrev(raw))
	}
	return s, nil
}

// OptBool is OptString for booleans: false when absent or null.
func OptBool(fields map[string]json.RawMessage, key string) (bool, error) {
	raw, ok := fields[key]
	if !ok || IsNull(raw) {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return false, fmt.Errorf("field %s: want true or false, have %s", key, Abbrev(raw))
	}
	return b, nil
}

// OptInt is OptString for integers: 0 when absent or null.
func OptInt(fields map[string]json.RawMessage, key string) (int, error) {
	raw, ok := fields[key]
	if !ok || IsNull(raw) {
		return 0, nil
	}
	var v int
	if err := json.Unmarshal(raw, &v); err != nil {
		return 0, fmt.Errorf("field %s: want an integer, have %s", key, Abbrev(raw))
	}
	return v, nil
}

// OptObject decodes the member key of fields as a JSON object; ok is
// false when it is absent or null, and any other kind of value is an
// error "field KEY: want an object, have VALUE".
func OptObject(fields map[string]json.RawMessage, key string) (obj map[string]json.RawMessage, ok bool, err error) {
	raw, present := fields[key]
	if !present || IsNull(raw) {
		return nil, false, nil
	}
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, false, fmt.Errorf("field %s: want an object, have %s", key, Abbrev(raw))
	}
	return obj, true, nil
}

// Abbrev returns raw, white space trimmed, cut to its first 40 bytes
// and "..." when longer: a value short enough to quote in an error.
func Abbrev(raw []byte) string {
	const most = 40
	raw = bytes.TrimSpace(raw)
	if len(raw) > most {
		return string(raw[:most]) + "..."
	}
	return string(raw)
}

// LineObject decodes line, one line of a JSON Lines file, as an object
// with its members kept as stored; anything else is the error "not a
// JSON object: ..." (": null" for the JSON null).
func LineObject(line []byte) (map[string]json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if fields == nil {
		return nil, fmt.Errorf("not a JSON object: null")
	}
	return fields, nil
}

// Millis parses an RFC 3339 timestamp into Unix milliseconds, 0 when it
// is empty or does not parse.
func Millis(ts string) int64 {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return 0
	}
	return t.UnixMilli()
}
