package jsonrec

import "fmt"

// ArgumentsWarning is the warning a reader gives when Arguments has
// wrapped the arguments of call id, which are not a JSON object; where
// names the file, and the line when known ("name" or "name:LINE").
func ArgumentsWarning(where, id string) string {
	return fmt.Sprintf("%s: tool call %q: arguments are not a JSON object: kept as a string under _raw", where, id)
}
