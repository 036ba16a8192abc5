package jsonrec

import "encoding/json"

// ExtrasRenamed is Extras for a reader that keeps what it does not model
// beside fields of its own: the members of f other than known, nil when
// none, with each member whose name is in reserved (a name the reader's
// output gives a field of its own) kept under prefix + name instead, so
// that it cannot overwrite that field.
func ExtrasRenamed(f map[string]json.RawMessage, reserved map[string]bool, prefix string, known ...string) map[string]json.RawMessage {
	var out map[string]json.RawMessage
outer:
	for k, v := range f {
		for _, kn := range known {
			if k == kn {
				continue outer
			}
		}
		if reserved[k] {
			k = prefix + k
		}
		out = Set(out, k, v)
	}
	return out
}
