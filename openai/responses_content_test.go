package openai

import (
	"encoding/json"
	"reflect"
	"testing"
)

// ResponsesContent decodes an array of text and image items at once and
// any other array item by item; both must give the same parts, the same
// placeholders and errors naming the same item.
func TestResponsesContentPaths(t *testing.T) {
	for _, tc := range []struct {
		raw     string
		texts   []string
		unknown []string
		err     string
	}{
		{`[{"type":"input_text","text":"a"},{"type":"output_text","text":"b"}]`, []string{"a", "b"}, nil, ""},
		{`[{"type":"input_text","text":"a"},{"type":"input_file","file_id":"f"}]`, []string{"a", "[input_file]"}, []string{"input_file"}, ""},
		{`[{"type":"input_text","text":"a"},{"type":"text","text":1}]`, nil, nil, "[1].text: want a string, have 1"},
		{`[{"type":"input_file"},{"type":"text","text":1}]`, nil, nil, "[1].text: want a string, have 1"},
		{`[{"type":"input_text","text":"a"},null]`, nil, nil, "[1]: want an object"},
		{`[{"type":"input_text","text":"a"},3]`, nil, nil, "[1]: want an object"},
		{`[{"text":"a"}]`, nil, nil, "[0].type: missing"},
	} {
		parts, unknown, err := ResponsesContent(json.RawMessage(tc.raw))
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: error %v, want %q", tc.raw, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.raw, err)
			continue
		}
		var texts []string
		for _, p := range parts {
			texts = append(texts, p.Text)
		}
		if !reflect.DeepEqual(texts, tc.texts) || !reflect.DeepEqual(unknown, tc.unknown) {
			t.Errorf("%s: texts %q unknown %q, want %q %q", tc.raw, texts, unknown, tc.texts, tc.unknown)
		}
	}
}
