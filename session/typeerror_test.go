package session

import (
	stdjson "encoding/json"
	"strings"
	"testing"
)

// A member of the wrong kind is named with its path, the kind wanted and
// the value found, with either JSON package, never as invalid JSON or in
// Go's words.
func TestWrongKindNamed(t *testing.T) {
	const header = `{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00Z","cwd":"/w"}`
	entry := func(message string) string {
		return `{"type":"message","id":"a1","parentId":null,"timestamp":"2025-01-01T00:00:00Z","message":` + message + `}`
	}
	tests := []struct {
		name, line, want string
	}{
		{"text a number", entry(`{"role":"user","content":[{"type":"text","text":5}],"timestamp":1}`),
			"s.jsonl:2: malformed line: field message.content[0].text: want text, have number"},
		{"string content, bad timestamp", entry(`{"role":"user","content":"hi","timestamp":"now"}`),
			"s.jsonl:2: malformed line: field message.timestamp: want a number, have string"},
		{"message an array", entry(`[1]`),
			"s.jsonl:2: malformed line: field message: want a mapping, have array"},
		{"usage text", entry(`{"role":"assistant","content":[],"usage":{"input":"x"},"timestamp":1}`),
			"s.jsonl:2: malformed line: field message.usage.input: want a whole number, have string"},
		{"index a fraction", `{"type":"compaction","id":"c1","parentId":null,"timestamp":"2025-01-01T00:00:00Z","summary":"s","firstKeptEntryIndex":3.5}`,
			"s.jsonl:2: malformed line: field firstKeptEntryIndex: want a whole number, have number 3.5"},
	}
	decoders := []struct {
		name      string
		unmarshal func([]byte, any) error
	}{
		{"reference", nil},
		{"encoding/json", stdjson.Unmarshal},
	}
	for _, d := range decoders {
		for _, tc := range tests {
			t.Run(d.name+"/"+tc.name, func(t *testing.T) {
				data := []byte(header + "\n" + tc.line + "\n")
				var err error
				if d.unmarshal == nil {
					_, err = Read(strings.NewReader(string(data)), "s.jsonl", Options{})
				} else {
					_, err = ParseWith(data, "s.jsonl", Options{}, d.unmarshal)
				}
				if err == nil {
					t.Fatal("no error")
				}
				want := tc.want
				if d.unmarshal != nil {
					// encoding/json does not say which element of an array.
					want = strings.ReplaceAll(want, "[0]", "")
				}
				if err.Error() != want {
					t.Errorf("error\n%s\nwant\n%s", err, want)
				}
			})
		}
	}
}
