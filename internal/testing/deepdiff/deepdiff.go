// Package deepdiff names the first difference between two values, where
// reflect.DeepEqual only says that there is one: the tests that compare
// two decoders of the same input (session's fast and reference paths, the
// JSON libraries in bench/decoders) report the path of the field that
// differs.
package deepdiff

import (
	"bytes"
	"fmt"
	"reflect"
)

// Of is Values of two values of any type.
func Of(path string, a, b any) string {
	return Values(path, reflect.ValueOf(a), reflect.ValueOf(b))
}

// Values returns a description of the first difference between a and b,
// "" when they are deeply equal. It walks structs (unexported fields
// included), pointers, slices and maps like reflect.DeepEqual, but names
// the path of what differs, starting from path
// ("decoded.Message.Content[2].Text: ..."), which is what a failing
// comparison of two decoders' outputs needs.
// Floats compare as numbers, except that NaN equals NaN. Kinds it does
// not walk (funcs, channels) are reported as a difference.
func Values(path string, a, b reflect.Value) string {
	if a.IsValid() != b.IsValid() {
		return fmt.Sprintf("%s: one value is missing", path)
	}
	if !a.IsValid() {
		return ""
	}
	if a.Type() != b.Type() {
		return fmt.Sprintf("%s: type %s vs %s", path, a.Type(), b.Type())
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return fmt.Sprintf("%s: nil %v vs nil %v", path, a.IsNil(), b.IsNil())
			}
			return ""
		}
		return Values(path, a.Elem(), b.Elem())
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			if d := Values(path+"."+a.Type().Field(i).Name, a.Field(i), b.Field(i)); d != "" {
				return d
			}
		}
		return ""
	case reflect.Slice:
		if a.IsNil() != b.IsNil() {
			return fmt.Sprintf("%s: nil %v vs nil %v", path, a.IsNil(), b.IsNil())
		}
		if a.Type().Elem().Kind() == reflect.Uint8 {
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				return fmt.Sprintf("%s: %s", path, Strings(string(a.Bytes()), string(b.Bytes())))
			}
			return ""
		}
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: length %d vs %d", path, a.Len(), b.Len())
		}
		for i := 0; i < a.Len(); i++ {
			if d := Values(fmt.Sprintf("%s[%d]", path, i), a.Index(i), b.Index(i)); d != "" {
				return d
			}
		}
		return ""
	case reflect.Map:
		if a.IsNil() != b.IsNil() {
			return fmt.Sprintf("%s: nil %v vs nil %v", path, a.IsNil(), b.IsNil())
		}
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: %d keys (%v) vs %d keys (%v)", path, a.Len(), a.MapKeys(), b.Len(), b.MapKeys())
		}
		for _, k := range a.MapKeys() {
			bv := b.MapIndex(k)
			if !bv.IsValid() {
				return fmt.Sprintf("%s: key %v only on one side", path, k)
			}
			if d := Values(fmt.Sprintf("%s[%v]", path, k), a.MapIndex(k), bv); d != "" {
				return d
			}
		}
		return ""
	case reflect.String:
		if x, y := a.String(), b.String(); x != y {
			return fmt.Sprintf("%s: %s", path, Strings(x, y))
		}
		return ""
	case reflect.Bool:
		if a.Bool() != b.Bool() {
			return fmt.Sprintf("%s: %v vs %v", path, a.Bool(), b.Bool())
		}
		return ""
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if a.Int() != b.Int() {
			return fmt.Sprintf("%s: %d vs %d", path, a.Int(), b.Int())
		}
		return ""
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if a.Uint() != b.Uint() {
			return fmt.Sprintf("%s: %d vs %d", path, a.Uint(), b.Uint())
		}
		return ""
	case reflect.Float32, reflect.Float64:
		// Compared as numbers (-0 equals 0), except that NaN equals NaN.
		if fa, fb := a.Float(), b.Float(); fa != fb && !(fa != fa && fb != fb) {
			return fmt.Sprintf("%s: %v vs %v", path, fa, fb)
		}
		return ""
	}
	return fmt.Sprintf("%s: cannot compare values of kind %s", path, a.Kind())
}

// Strings describes how two different strings differ: in full when
// short, else their lengths and the text around the first byte where
// they differ.
func Strings(a, b string) string {
	if len(a)+len(b) < 400 {
		return fmt.Sprintf("%q vs %q", a, b)
	}
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-40)
	return fmt.Sprintf("lengths %d and %d, first difference at byte %d: ...%q vs ...%q", len(a), len(b), i,
		a[from:min(len(a), i+40)], b[from:min(len(b), i+40)])
}
