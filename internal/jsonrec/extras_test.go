package jsonrec

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestExtrasRenamed(t *testing.T) {
	f := map[string]json.RawMessage{"type": json.RawMessage(`"text"`), "text": json.RawMessage(`"hi"`), "id": json.RawMessage(`7`), "cache": json.RawMessage(`{}`)}
	reserved := map[string]bool{"id": true, "text": true}
	tests := []struct {
		name  string
		known []string
		want  map[string]json.RawMessage
	}{
		{"known left out, reserved renamed", []string{"type", "text"}, map[string]json.RawMessage{"x_id": json.RawMessage(`7`), "cache": json.RawMessage(`{}`)}},
		{"nothing known", nil, map[string]json.RawMessage{"type": json.RawMessage(`"text"`), "x_text": json.RawMessage(`"hi"`), "x_id": json.RawMessage(`7`), "cache": json.RawMessage(`{}`)}},
		{"all known", []string{"type", "text", "id", "cache"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ExtrasRenamed(f, reserved, "x_", tc.known...); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ExtrasRenamed = %v, want %v", got, tc.want)
			}
		})
	}
}
