package compact

import (
	"reflect"
	"testing"
)

// TestMessageMetaIsZero: IsZero holds for the zero MessageMeta and fails
// as soon as any one field is set, so that a field added to MessageMeta
// and forgotten in IsZero fails here.
func TestMessageMetaIsZero(t *testing.T) {
	var zero MessageMeta
	if !zero.IsZero() {
		t.Fatal("the zero MessageMeta is not zero")
	}
	typ := reflect.TypeOf(zero)
	for i := 0; i < typ.NumField(); i++ {
		var m MessageMeta
		f := reflect.ValueOf(&m).Elem().Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("x")
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		default:
			t.Fatalf("field %s: kind %s not covered by this test", typ.Field(i).Name, f.Kind())
		}
		if m.IsZero() {
			t.Errorf("MessageMeta with %s set is zero", typ.Field(i).Name)
		}
	}
}
