package compact

import (
	"encoding/json"
	"strings"
	"testing"
)

// The file tools of Cline and Roo Code reach the file lists.
func TestFileOpsClineTools(t *testing.T) {
	tests := []struct {
		tool, args     string
		read, modified string // comma-separated, sorted
	}{
		{"write_to_file", `{"path":"src/a.ts","content":"x"}`, "", "src/a.ts"},
		{"replace_in_file", `{"path":"src/b.ts","diff":"d"}`, "", "src/b.ts"},
		{"apply_diff", `{"path":"src/c.ts","diff":"d"}`, "", "src/c.ts"},
		{"insert_content", `{"path":"src/d.ts","line":"1","content":"x"}`, "", "src/d.ts"},
		{"search_and_replace", `{"path":"src/e.ts","search":"a","replace":"b"}`, "", "src/e.ts"},
		{"read_file", `{"path":"src/f.ts"}`, "src/f.ts", ""},
		{"read_file", `{"args":"<file>\n<path>src/g.ts</path>\n</file>\n<file><path>src/h.ts</path><line_range>1-9</line_range></file>"}`, "src/g.ts,src/h.ts", ""},
		{"apply_diff", `{"args":"<file><path>src/i.ts</path><diff><content>x</content></diff></file>"}`, "", "src/i.ts"},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			var f FileOps
			f.AddMessage(&Message{Role: RoleAssistant, Content: []Part{{Type: PartToolCall,
				ToolCall: &ToolCall{ID: "c1", Name: tc.tool, Arguments: json.RawMessage(tc.args)}}}})
			read, modified := f.Lists()
			if got := strings.Join(read, ","); got != tc.read {
				t.Errorf("read files %q, want %q", got, tc.read)
			}
			if got := strings.Join(modified, ","); got != tc.modified {
				t.Errorf("modified files %q, want %q", got, tc.modified)
			}
		})
	}
}
