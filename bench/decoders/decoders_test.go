package decoders

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/deepdiff"
	"github.com/compactkit/compact/internal/testing/sharedtest"
	"github.com/compactkit/compact/session"
)

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
	for _, p := range sharedtest.PiSessionPaths(t) {
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
					d := deepdiff.Of("parse", got, want)
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
				if d := deepdiff.Of("parse", got, want); d != "" {
					t.Fatalf("differs from the hand decoder: %s", d)
				}
			})
		}
	}
}

// The comparison sees a difference in any field a decoder fills.
func TestDiffFindsChanges(t *testing.T) {
	paths := sharedtest.PiSessionPaths(t)
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
			if d := deepdiff.Of("parse", p, base); d == "" {
				t.Fatal("no difference found")
			}
		})
	}
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
	for _, p := range sharedtest.PiSessionPaths(t) {
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
			if d := deepdiff.Of("parse", got, want); d != "" {
				t.Fatalf("%s, parse %d: %s", filepath.Base(p), i+1, d)
			}
		}
	}
}
