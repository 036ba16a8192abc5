package readertest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/compactkit/compact"
)

// ToolCalls counts the tool calls of tr's assistant messages by tool name.
func ToolCalls(tr *compact.Transcript) map[string]int {
	n := map[string]int{}
	for _, e := range tr.Entries {
		if e.Message != nil && e.Message.Role == compact.RoleAssistant {
			for _, c := range e.Message.ToolCalls() {
				n[c.Name]++
			}
		}
	}
	return n
}

// ToolResults counts tr's tool result messages by tool name.
func ToolResults(tr *compact.Transcript) map[string]int {
	n := map[string]int{}
	for _, e := range tr.Entries {
		if e.Message != nil && e.Message.Role == compact.RoleToolResult {
			n[e.Message.ToolName]++
		}
	}
	return n
}

// SameCounts reports, as errors of t, every name whose count in got (what
// a reader made) differs from its count in want (what a test counted in
// the file itself, without the reader); what names the counts in the
// message.
func SameCounts(t testing.TB, what string, got, want map[string]int) {
	t.Helper()
	names := map[string]bool{}
	for k := range got {
		names[k] = true
	}
	for k := range want {
		names[k] = true
	}
	var diff []string
	for k := range names {
		if got[k] != want[k] {
			diff = append(diff, k)
		}
	}
	sort.Strings(diff)
	for _, k := range diff {
		t.Errorf("%s %q: the reader made %d, the file holds %d", what, k, got[k], want[k])
	}
	if len(want) == 0 {
		t.Errorf("%s: the file holds none; pick a file that does", what)
	}
}

// SameScan checks tr against a plain scan of the file it was read from:
// the tool calls by name (see SameCounts) and, for each role in roles,
// the number of messages of that role.
func SameScan(t testing.TB, tr *compact.Transcript, calls map[string]int, roles map[compact.Role]int) {
	t.Helper()
	SameCounts(t, "tool calls", ToolCalls(tr), calls)
	got := Roles(tr)
	var names []string
	for r := range roles {
		names = append(names, string(r))
	}
	sort.Strings(names)
	for _, name := range names {
		r := compact.Role(name)
		if got[r] != roles[r] {
			t.Errorf("%d %s messages, the file holds %d", got[r], r, roles[r])
		}
	}
}

// Scan is what a test counts in a file itself, without the reader (see
// SameScan).
type Scan struct {
	// Calls counts the tool calls by tool name.
	Calls map[string]int
	// Roles counts, for each role it names, the messages of that role.
	Roles map[compact.Role]int
	// Check, when set, checks what the counts do not.
	Check func(t *testing.T, tr *compact.Transcript)
}

// RunCounts reads each of files, in testdata, with readFile, a reader's
// ReadFile, in a subtest, and checks the transcript against scan's plain
// count of the same file (see SameScan) and then with its Check.
func RunCounts(t *testing.T, readFile func(path string) (*compact.Transcript, error), files []string, scan func(t *testing.T, path string) Scan) {
	t.Helper()
	for _, file := range files {
		t.Run(file, func(t *testing.T) {
			t.Helper()
			want := scan(t, filepath.Join("testdata", file))
			tr := ReadTestdata(t, readFile, file)
			SameScan(t, tr, want.Calls, want.Roles)
			if want.Check != nil {
				want.Check(t, tr)
			}
		})
	}
}

// JSONFile decodes the JSON file at path into generic values (maps,
// slices, strings, float64s), for a test's own scan of a file.
func JSONFile(tb testing.TB, path string) any {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return v
}

// JSONLines decodes each non-blank line of the file at path into generic
// values, for a test's own scan of a JSONL file.
func JSONLines(tb testing.TB, path string) []map[string]any {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var out []map[string]any
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var v map[string]any
		if err := json.Unmarshal(line, &v); err != nil {
			tb.Fatalf("%s:%d: %v", path, i+1, err)
		}
		out = append(out, v)
	}
	return out
}

// Obj returns v as a JSON object, nil when it is none.
func Obj(v any) map[string]any { m, _ := v.(map[string]any); return m }

// Arr returns v as a JSON array, nil when it is none.
func Arr(v any) []any { a, _ := v.([]any); return a }

// Str returns v as a JSON string, "" when it is none.
func Str(v any) string { s, _ := v.(string); return s }

// Blocks returns the content blocks of an Anthropic-style message
// content: the array's objects, or one text block for a string.
func Blocks(content any) []map[string]any {
	if s, ok := content.(string); ok {
		return []map[string]any{{"type": "text", "text": s}}
	}
	var out []map[string]any
	for _, b := range Arr(content) {
		if m := Obj(b); m != nil {
			out = append(out, m)
		}
	}
	return out
}
