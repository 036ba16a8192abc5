package decoders

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/session"
)

// realSessions returns the paths of the two real pi sessions: in
// $COMPACT_TESTDATA/sessions/pi, else in the shared test data beside the
// checkout. The test is skipped when they are missing.
func realSessions(tb testing.TB) []string {
	tb.Helper()
	dir := os.Getenv("COMPACT_TESTDATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "testdata")
	}
	var paths []string
	for _, name := range []string{"large-session.jsonl", "before-compaction.jsonl"} {
		p := filepath.Join(dir, "sessions", "pi", name)
		if _, err := os.Stat(p); err != nil {
			tb.Skipf("real session %s missing (set COMPACT_TESTDATA): %v", p, err)
		}
		paths = append(paths, p)
	}
	return paths
}

// input is a session file to parse, by name.
type input struct {
	name string
	data []byte
}

// repoSessions returns the pi session files of the repository: the
// example, the report fixture and the seed corpus of session.FuzzRead
// (stored in the "go test fuzz v1" format, one []byte value).
func repoSessions(t *testing.T) []input {
	t.Helper()
	var in []input
	for _, p := range []string{"../../examples/sessions/demo.jsonl", "../../report/testdata/small.jsonl"} {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, input{p, data})
	}
	corpus, err := filepath.Glob("../../session/testdata/fuzz/FuzzRead/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range corpus {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		_, val, ok := strings.Cut(strings.TrimSpace(string(raw)), "\n")
		if !ok || !strings.HasPrefix(val, "[]byte(") || !strings.HasSuffix(val, ")") {
			t.Fatalf("%s: not a fuzz corpus file of one []byte", p)
		}
		s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(val, "[]byte("), ")"))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		in = append(in, input{p, []byte(s)})
	}
	return in
}

// allSessions returns the real sessions, the large one named by
// $COMPACT_BIG_SESSION when set, and the repository's sessions.
func allSessions(t *testing.T) []input {
	var in []input
	for _, p := range realSessions(t) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, input{filepath.Base(p), data})
	}
	if big := os.Getenv("COMPACT_BIG_SESSION"); big != "" {
		data, err := os.ReadFile(big)
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, input{filepath.Base(big), data})
	}
	return append(in, repoSessions(t)...)
}

// parsed is what a parse gives that a decoder could change.
type parsed struct {
	Header   session.Header
	Entries  []*compact.Entry
	Leaf     string
	Warnings []string
	Err      string
}

func parseWith(data []byte, c Candidate) parsed {
	// Each parse gets a buffer of its own: sessions point into it.
	s, err := session.ParseWith(bytes.Clone(data), "f.jsonl", session.Options{}, c.Unmarshal)
	if err != nil {
		return parsed{Err: err.Error()}
	}
	return parsed{Header: s.Header(), Entries: s.Entries(), Leaf: s.Leaf(), Warnings: s.Warnings()}
}

// knownDifferences are the parses on which a candidate is expected to
// differ from the hand decoder, with the reason. The test fails when one
// of them stops differing, so that the list stays true.
var knownDifferences = map[[2]string]string{
	// A line with invalid UTF-8 in a member name and "tYpe" for "type":
	// v2's defaults reject the first and do not match the second.
	{"8c4da4b4973edd68", "jsonv2-experiment"}: "invalid UTF-8 is an error, names match by case",
	{"8c4da4b4973edd68", "stdlib-jsonv2"}:     "invalid UTF-8 is an error, names match by case",
}

// Every candidate parses every session to what the hand decoder gives:
// the same header, entries (messages, parts, tool calls, usage, extras),
// leaf and warnings, or an error where the hand decoder fails; but for
// knownDifferences.
func TestSameEntries(t *testing.T) {
	inputs := allSessions(t)
	cands := Candidates()
	for _, in := range inputs {
		want := parseWith(in.data, cands[0])
		for _, c := range cands[1:] {
			t.Run(filepath.Base(in.name)+"/"+c.Name, func(t *testing.T) {
				got := parseWith(in.data, c)
				if why, ok := knownDifferences[[2]string{filepath.Base(in.name), c.Name}]; ok {
					d := diff("parse", reflect.ValueOf(got), reflect.ValueOf(want))
					if d == "" {
						t.Fatalf("expected to differ from the hand decoder (%s), but does not", why)
					}
					t.Logf("differs, as expected (%s): error %q; %s", why, got.Err, d)
					return
				}
				if (got.Err == "") != (want.Err == "") {
					t.Fatalf("error %q, the hand decoder's %q", got.Err, want.Err)
				}
				if got.Err != want.Err {
					// The cause of a malformed line is the library's own
					// message; only its presence must agree.
					t.Logf("error %q, the hand decoder's %q", got.Err, want.Err)
				}
				want := want
				got.Err, want.Err = "", ""
				if d := diff("parse", reflect.ValueOf(got), reflect.ValueOf(want)); d != "" {
					t.Fatalf("differs from the hand decoder: %s", d)
				}
			})
		}
	}
}

// The comparison sees a difference in any field a decoder fills.
func TestDiffFindsChanges(t *testing.T) {
	paths := realSessions(t)
	data, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	base := parseWith(data, Candidates()[0])
	for _, c := range []struct {
		name   string
		change func(p *parsed)
	}{
		{"leaf", func(p *parsed) { p.Leaf += "x" }},
		{"text of a part", func(p *parsed) {
			for _, e := range p.Entries {
				if e.Message != nil && len(e.Message.Content) > 0 {
					e.Message.Content[0].Text += "x"
					return
				}
			}
		}},
		{"an extra", func(p *parsed) {
			for _, e := range p.Entries {
				if e.Message != nil && len(e.Message.Extra) > 0 {
					for k := range e.Message.Extra {
						e.Message.Extra[k] = append(e.Message.Extra[k][:len(e.Message.Extra[k]):len(e.Message.Extra[k])], ' ')
						return
					}
				}
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := parseWith(data, Candidates()[0])
			c.change(&p)
			if d := diff("parse", reflect.ValueOf(p), reflect.ValueOf(base)); d == "" {
				t.Fatal("no difference found")
			}
		})
	}
}

// diff names the first difference between a and b ("" when none),
// walking pointers, structs (unexported fields too), slices and maps.
func diff(path string, a, b reflect.Value) string {
	if a.IsValid() != b.IsValid() {
		return path + ": one side missing"
	}
	if !a.IsValid() {
		return ""
	}
	if a.Type() != b.Type() {
		return fmt.Sprintf("%s: %s vs %s", path, a.Type(), b.Type())
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return path + ": nil on one side"
			}
			return ""
		}
		return diff(path, a.Elem(), b.Elem())
	case reflect.Struct:
		for i := range a.NumField() {
			if d := diff(path+"."+a.Type().Field(i).Name, a.Field(i), b.Field(i)); d != "" {
				return d
			}
		}
		return ""
	case reflect.Slice:
		if a.IsNil() != b.IsNil() {
			return path + ": nil slice on one side"
		}
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: length %d vs %d", path, a.Len(), b.Len())
		}
		for i := range a.Len() {
			if d := diff(fmt.Sprintf("%s[%d]", path, i), a.Index(i), b.Index(i)); d != "" {
				return d
			}
		}
		return ""
	case reflect.Map:
		if a.IsNil() != b.IsNil() {
			return path + ": nil map on one side"
		}
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: %d keys vs %d", path, a.Len(), b.Len())
		}
		for _, k := range a.MapKeys() {
			if d := diff(fmt.Sprintf("%s[%v]", path, k), a.MapIndex(k), b.MapIndex(k)); d != "" {
				return d
			}
		}
		return ""
	case reflect.String:
		if a.String() != b.String() {
			return fmt.Sprintf("%s: %.80q vs %.80q", path, a.String(), b.String())
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
		if a.Float() != b.Float() {
			return fmt.Sprintf("%s: %v vs %v", path, a.Float(), b.Float())
		}
		return ""
	}
	return fmt.Sprintf("%s: cannot compare kind %s", path, a.Kind())
}

// TestListCandidates prints the candidates' names, which run.sh reads, and
// checks that they can serve as one level of a benchmark name.
func TestListCandidates(t *testing.T) {
	seen := map[string]bool{}
	for i, c := range Candidates() {
		if c.Name == "" || strings.ContainsAny(c.Name, "/ \t") || seen[c.Name] {
			t.Errorf("candidate %d: name %q is empty, repeated or has a slash or space", i, c.Name)
		}
		if (i == 0) != (c.Unmarshal == nil) {
			t.Errorf("candidate %d (%s): only the first, the hand decoder, has no Unmarshal", i, c.Name)
		}
		seen[c.Name] = true
		fmt.Printf("candidate %s\n", c.Name)
	}
}

// The floor of BenchmarkParseFloor parses to what the hand decoder gives,
// the second time (from replayed values) as the first.
func TestReplaySame(t *testing.T) {
	for _, p := range realSessions(t) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		want := parseWith(data, Candidates()[0])
		unmarshal := replay()
		for i := range 2 {
			s, err := session.ParseWith(data, "f.jsonl", session.Options{}, unmarshal)
			if err != nil {
				t.Fatal(err)
			}
			got := parsed{Header: s.Header(), Entries: s.Entries(), Leaf: s.Leaf(), Warnings: s.Warnings()}
			if d := diff("parse", reflect.ValueOf(got), reflect.ValueOf(want)); d != "" {
				t.Fatalf("%s, parse %d: %s", filepath.Base(p), i+1, d)
			}
		}
	}
}
