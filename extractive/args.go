package extractive

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/compactkit/compact"
)

// argString returns the first non-empty string argument among keys. An
// array of strings (a command vector) is joined with spaces.
//
// Arguments without any array are read with compact.TopLevelString,
// which decodes nothing but the strings asked for. Arguments with an
// array (an edit's old text holding "[" is enough) are checked to be
// valid JSON and then read in one pass over their top-level members
// (topLevelValues), rather than decoded into a map of copies of every
// member: the arguments of edits and writes hold whole files.
func argString(args json.RawMessage, keys ...string) string {
	if bytes.IndexByte(args, '[') < 0 {
		for _, k := range keys {
			if v, ok := compact.TopLevelString(args, k); ok && strings.TrimSpace(v) != "" {
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
	if !topLevelValues(args, keys, vals) {
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

// topLevelValues sets vals[i] to the raw value of the member keys[i] of
// the JSON object raw, which must be valid JSON; a key present more than
// once takes its last value, as decoding into a map does. Values of
// absent keys stay nil; when raw is no object, all do. It returns false
// when a member's key is written with an escape, which it does not
// decode.
func topLevelValues(raw []byte, keys []string, vals [][]byte) bool {
	i := skipBlank(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return true
	}
	i++
	for {
		i = skipBlank(raw, i)
		if i >= len(raw) || raw[i] != '"' {
			return true // "}" of the object: valid JSON has nothing else here
		}
		kend := skipJSONString(raw, i)
		key := raw[i+1 : kend-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return false
		}
		i = skipBlank(raw, kend) + 1 // past the ':'
		i = skipBlank(raw, i)
		vend := skipJSONValue(raw, i)
		for k, want := range keys {
			if string(key) == want {
				vals[k] = raw[i:vend]
			}
		}
		i = skipBlank(raw, vend)
		if i < len(raw) && raw[i] == ',' {
			i++
		}
	}
}

// skipJSONValue returns the end of the valid JSON value that starts at
// raw[i].
func skipJSONValue(raw []byte, i int) int {
	switch raw[i] {
	case '"':
		return skipJSONString(raw, i)
	case '{', '[':
		depth := 0
		for ; i < len(raw); i++ {
			switch raw[i] {
			case '"':
				i = skipJSONString(raw, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return len(raw)
	}
	for ; i < len(raw); i++ {
		switch raw[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
	}
	return i
}

// skipJSONString returns the end of the valid JSON string that starts at
// raw[i]: just past the first quote not escaped by an odd run of
// backslashes.
func skipJSONString(raw []byte, i int) int {
	for j := i + 1; ; {
		q := bytes.IndexByte(raw[j:], '"')
		if q < 0 {
			return len(raw)
		}
		q += j
		n := 0
		for k := q - 1; k > i && raw[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
}

func skipBlank(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
}
