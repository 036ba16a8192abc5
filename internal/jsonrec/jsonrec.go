// Package jsonrec holds the few JSON helpers the readers of other agents'
// files share (requestbody, sweagent, openhands, claudecode, codex): a
// file read whole and handed to a reader (ReadFile), the
// members and array elements of a document with the byte offsets that
// give errors their line numbers, the lines of a JSON Lines file and the
// line records read from them (Record, Records, ReadRecords; Sniff for a
// detector's look at the first line), and the reads of loosely typed
// members that keep what a reader does not model.
//
// It uses the standard library's json.Decoder, whose InputOffset is what
// the offsets are made of.
package jsonrec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Member is one member of a JSON object: its key, its value as stored and
// the byte offset where the value starts in the document.
type Member struct {
	Key   string
	Value json.RawMessage
	Off   int
}

// Element is one element of a JSON array: its bytes as stored and the
// byte offset where it starts in the document.
type Element struct {
	Raw json.RawMessage
	Off int
}

// Object returns the members, in order, of the JSON object data holds
// (nothing but white space may follow it). Errors begin with the line
// they point at: "LINE: ...", so that a caller prefixes the file name.
func Object(data []byte) ([]Member, error) {
	var out []Member
	err := document(data, '{', "object", func(dec *json.Decoder) error {
		tok, err := dec.Token()
		if err != nil {
			return syntax(data, dec, err)
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return syntax(data, dec, err)
		}
		out = append(out, Member{Key: key, Value: v, Off: int(dec.InputOffset()) - len(v)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Array returns the elements of the JSON array raw, the value of the
// member named what, which starts at byte base of its document data.
// Errors read "LINE: what: message", LINE pointing into data.
func Array(data []byte, what string, raw json.RawMessage, base int) ([]Element, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("%d: %s: %w", Line(data, base), what, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, fmt.Errorf("%d: %s: not an array", Line(data, base), what)
	}
	var out []Element
	for dec.More() {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%d: %s: %w", Line(data, base+int(dec.InputOffset())), what, err)
		}
		out = append(out, Element{Raw: v, Off: base + int(dec.InputOffset()) - len(v)})
	}
	return out, nil
}

// EachElement hands each of elems, the elements of the array member key
// of document data (see Array), with its index to fn, in order, and stops
// at the first error, returned as "LINE: key[i]" followed by fn's error
// (a path inside the element: ".content: ...", or ": ..."), LINE the line
// the element starts on.
func EachElement(data []byte, key string, elems []Element, fn func(i int, e Element) error) error {
	for i, e := range elems {
		if err := fn(i, e); err != nil {
			return fmt.Errorf("%d: %s[%d]%w", Line(data, e.Off), key, i, err)
		}
	}
	return nil
}

// ArrayDocument returns the elements of the JSON array data holds (nothing
// but white space may follow it), with errors as Object's.
func ArrayDocument(data []byte) ([]Element, error) {
	var out []Element
	err := document(data, '[', "array", func(dec *json.Decoder) error {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return syntax(data, dec, err)
		}
		out = append(out, Element{Raw: v, Off: int(dec.InputOffset()) - len(v)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// document reads the JSON document data, which must be one value opened
// by open ('{' or '[', a JSON what) with nothing but white space after
// it, handing the decoder to next for each member or element until the
// value closes. Errors are as Object's.
func document(data []byte, open json.Delim, what string, next func(dec *json.Decoder) error) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return syntax(data, dec, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != open {
		return fmt.Errorf("%d: not a JSON %s", Line(data, int(dec.InputOffset())), what)
	}
	for dec.More() {
		if err := next(dec); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return syntax(data, dec, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%d: data after the JSON %s", Line(data, int(dec.InputOffset())), what)
	}
	return nil
}

// syntax turns a decoder error into "LINE: message".
func syntax(data []byte, dec *json.Decoder, err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("%d: truncated JSON: %w", Line(data, len(data)), io.ErrUnexpectedEOF)
	}
	off := int(dec.InputOffset())
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off = int(se.Offset)
	}
	return fmt.Errorf("%d: invalid JSON: %w", Line(data, off), err)
}

// Line returns the 1-based line of byte offset off in data.
func Line(data []byte, off int) int {
	off = max(0, min(off, len(data)))
	return 1 + bytes.Count(data[:off], []byte{'\n'})
}

// SkipSpace returns the offset of the first byte of data at or after
// off that is neither white space nor a comma separating array elements:
// where a json.Decoder's next value starts.
func SkipSpace(data []byte, off int64) int64 {
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

// Fields decodes raw as an object into its members; an error says
// ": not a JSON object", to follow a path.
func Fields(raw json.RawMessage) (map[string]json.RawMessage, error) {
	var f map[string]json.RawMessage
	if err := json.Unmarshal(raw, &f); err != nil || f == nil {
		return nil, errors.New(": not a JSON object")
	}
	return f, nil
}

// String reads the string member key of f into dst. A missing or null
// member leaves dst as it is; any other type is an error ".key: not a
// string", to follow a path.
func String(f map[string]json.RawMessage, key string, dst *string) error {
	raw, ok := f[key]
	if !ok || IsNull(raw) {
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf(".%s: not a string", key)
	}
	return nil
}

// Extras returns the members of f other than known, nil when none.
func Extras(f map[string]json.RawMessage, known ...string) map[string]json.RawMessage {
	var out map[string]json.RawMessage
outer:
	for k, v := range f {
		for _, kn := range known {
			if k == kn {
				continue outer
			}
		}
		out = Set(out, k, v)
	}
	return out
}

// Merge returns a with b's members added (b's win on a shared key): a
// new map when a has members, b itself when a has none.
func Merge(a, b map[string]json.RawMessage) map[string]json.RawMessage {
	if len(a) == 0 {
		return b
	}
	out := make(map[string]json.RawMessage, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// Set sets m[k] = v and returns m, made when nil.
func Set(m map[string]json.RawMessage, k string, v json.RawMessage) map[string]json.RawMessage {
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	m[k] = v
	return m
}

// IsNull reports whether raw is the JSON null.
func IsNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// IsEmpty reports whether raw is missing, null, "", [] or {}.
func IsEmpty(raw json.RawMessage) bool {
	switch string(bytes.TrimSpace(raw)) {
	case "", "null", `""`, "[]", "{}":
		return true
	}
	return false
}

// SplitDataURL splits "data:<mime>[;...];base64,<data>" into its media
// type and base64 data; ok is false for any other URL.
func SplitDataURL(url string) (mime, data string, ok bool) {
	rest, found := strings.CutPrefix(url, "data:")
	if !found {
		return "", "", false
	}
	meta, data, found := strings.Cut(rest, ",")
	if !found {
		return "", "", false
	}
	params := strings.Split(meta, ";")
	if params[len(params)-1] != "base64" {
		return "", "", false
	}
	mime = params[0]
	if mime == "" {
		mime = "text/plain"
	}
	return mime, data, true
}

// Arguments turns a tool call's arguments string into the JSON object
// the transcript stores: "" is {}, a JSON object is kept as is, and
// anything else is wrapped as {"_raw": s} with ok false, so that the
// caller can warn.
func Arguments(s string) (args json.RawMessage, ok bool) {
	t := strings.TrimSpace(s)
	if t == "" {
		return json.RawMessage("{}"), true
	}
	if strings.HasPrefix(t, "{") && json.Valid([]byte(t)) {
		return json.RawMessage(t), true
	}
	out, _ := json.Marshal(map[string]string{"_raw": s})
	return out, false
}

// Keys reads the top-level keys of the JSON object that head, the first
// bytes of a file possibly cut anywhere, begins with, calling visit with
// each key and the first byte of its value ('[', '{', '"', 't', 'f',
// 'n', a digit or '-'; 0 when the head ends first). visit returns false
// to stop. Keys reports false when head does not begin with an object.
func Keys(head []byte, visit func(key string, first byte) bool) bool {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	dec := json.NewDecoder(bytes.NewReader(head))
	tok, err := dec.Token()
	if d, ok := tok.(json.Delim); err != nil || !ok || d != '{' {
		return false
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return true
		}
		key, ok := tok.(string)
		if !ok {
			return true
		}
		rest := bytes.TrimLeft(head[dec.InputOffset():], " \t\r\n:")
		var first byte
		if len(rest) > 0 {
			first = rest[0]
		}
		if !visit(key, first) || !skip(dec) {
			return true
		}
	}
}

// skip reads past one JSON value; false when the input ends or is not
// JSON there.
func skip(dec *json.Decoder) bool {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
		if depth == 0 {
			return true
		}
	}
}
