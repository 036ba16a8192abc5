package jsonrec

import "reflect"

// KindName names, for an error message, the kind of JSON value that
// decodes into a Go value of type t: "a whole number" for the integer
// types, "a number", "true or false", "text", "a list" for slices and "a
// mapping" for structs and maps; any other type by its Go name.
func KindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "text"
	case reflect.Slice:
		return "a list"
	case reflect.Struct, reflect.Map:
		return "a mapping"
	}
	return t.String()
}
