package jsonrec

import (
	"encoding/json"
)

// ExtrasRenamed is Extras for a reader that keeps what it does not model
// beside fields of its own: the members of f other than known, nil when
// none, with each member whose name is in reserved (a name the reader's
// output gives a field of its own) kept under prefix + name instead, so
// that it cannot overwrite that field.
func ExtrasRenamed(f map[string]json.RawMessage, reserved map[string]bool, prefix string, known ...string) map[string]json.RawMessage {
	out := Extras(f, known...)
	for k, v := range out {
		if reserved[k] {
			delete(out, k)
			out[prefix+k] = v
		}
	}
	return out
}
