package jsonrec

import "fmt"

// ArgumentsWarning is the warning a reader gives when Arguments has
// wrapped the arguments of call id, which are not a JSON object; where
// names the file, and the line when known ("name" or "name:LINE"). A
// mapping that does not know where it reads (openai's, whose callers
// prefix the file) passes "" and gets the warning without a place.
func ArgumentsWarning(where, id string) string {
	w := fmt.Sprintf("tool call %q: arguments are not a JSON object: kept as a string under _raw", id)
	if where == "" {
		return w
	}
	return where + ": " + w
}
