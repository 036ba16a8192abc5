package extractive

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/compactkit/compact/internal/jsontext"
)

// argString returns the first non-empty string argument among keys. An
// array of strings (a command vector) is joined with spaces.
//
// Arguments without any array are read with jsontext.TopLevelString,
// which decodes nothing but the strings asked for. Arguments with an
// array (an edit's old text holding "[" is enough) are checked to be
// valid JSON and then read in one pass over their top-level members
// (jsontext.TopLevelValues), rather than decoded into a map of copies of every
// member: the arguments of edits and writes hold whole files.
func argString(args json.RawMessage, keys ...string) string {
	if bytes.IndexByte(args, '[') < 0 {
		for _, k := range keys {
			if v, ok := jsontext.TopLevelString(args, k); ok && strings.TrimSpace(v) != "" {
				return strings.TrimSpace(v)
			}
		}
		return ""
	}
	if !json.Valid(args) {
		return ""
	}
	var buf [8][]byte
	vals := buf[:0]
	if len(keys) > len(buf) {
		vals = make([][]byte, 0, len(keys))
	}
	vals = vals[:len(keys)]
	if !jsontext.TopLevelValues(args, keys, vals) {
		return argStringDecoded(args, keys)
	}
	for _, raw := range vals {
		if raw == nil {
			continue
		}
		if raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
			// Decoding would only copy it.
			if s := strings.TrimSpace(string(raw[1 : len(raw)-1])); s != "" {
				return s
			}
			continue
		}
		if s, ok := stringOrWords(raw); ok {
			return s
		}
	}
	return ""
}

// argStringDecoded is argString for valid arguments whose keys are
// written with escapes: decoding them is the simple way to compare them.
func argStringDecoded(args json.RawMessage, keys []string) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil {
		return ""
	}
	for _, k := range keys {
		if raw, ok := obj[k]; ok {
			if s, ok := stringOrWords(raw); ok {
				return s
			}
		}
	}
	return ""
}

// stringOrWords reads a JSON value that is a non-blank string, or a
// non-empty array of strings joined with spaces, trimmed.
func stringOrWords(raw []byte) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil && strings.TrimSpace(s) != "" {
		return strings.TrimSpace(s), true
	}
	var parts []string
	if json.Unmarshal(raw, &parts) == nil && len(parts) > 0 {
		return strings.TrimSpace(strings.Join(parts, " ")), true
	}
	return "", false
}
