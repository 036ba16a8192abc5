package handoff

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/agents"
	"github.com/compactkit/compact/internal/testing/sharedtest"
	"github.com/compactkit/compact/session"
	"github.com/compactkit/compact/summarize/extractive"
)

// openLabelled opens a labelled session, whatever agent wrote it, held in
// memory.
func openLabelled(t *testing.T, name string) *session.Session {
	t.Helper()
	var path string
	switch {
	case strings.HasPrefix(name, "shared:"):
		path = filepath.Join(sharedtest.Dir(t), strings.TrimPrefix(name, "shared:"))
	case strings.HasPrefix(name, "repo:"):
		path = filepath.Join("..", "..", strings.TrimPrefix(name, "repo:"))
	default:
		t.Fatalf("%s: the session must start with shared: or repo:", name)
	}
	f, err := agents.Detect(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.ReadFile == nil {
		s, err := session.Open(path, session.Options{})
		if err != nil {
			t.Fatal(err)
		}
		path := s.Path()
		s, err = session.FromTranscript(&compact.Transcript{Entries: path}, name, session.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	tr, err := f.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := session.FromTranscript(tr, name, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLabels compacts each labelled real session at its cut with the
// offline summarizer and checks the hand-written labels, every one of
// which must pass; the table of
// passes is in the log with -v.
func TestLabels(t *testing.T) {
	ls, err := ReadLabels(filepath.Join("testdata", "labels.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ls.Sessions) < 3 {
		t.Fatalf("%d labelled sessions", len(ls.Sessions))
	}
	var report strings.Builder
	for _, l := range ls.Sessions {
		t.Run(l.Session, func(t *testing.T) {
			s := openLabelled(t, l.Session)
			checks, err := l.CheckPath(context.Background(), s.Path(), extractive.New(extractive.Options{}), 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			pass := 0
			for _, c := range checks {
				mark := "pass"
				if c.Pass {
					pass++
				} else {
					mark = "FAIL"
					t.Errorf("%s %q is missing from the handoff", c.Kind, c.Item.Text)
				}
				fmt.Fprintf(&report, "%s  %-8s %s  %s\n", l.Session, c.Kind, mark, c.Item.Text)
			}
			fmt.Fprintf(&report, "%s: %d/%d\n", l.Session, pass, len(checks))
		})
	}
	t.Logf("\n%s", report.String())
}

// TestLabelCheck: the goal counts under a Goal or Turn Request heading or
// in a kept user message only, the next step under Next Steps or In
// Progress or in any kept message; decisions and files anywhere.
func TestLabelCheck(t *testing.T) {
	l := &Label{Goal: Item{Text: "release v0.8.0", Keys: []string{"release", "v0.8.0"}},
		Next:      []Item{{Text: "publish to npm", Keys: []string{"publish"}}},
		Decisions: []Item{{Text: "a minor bump", Keys: []string{"minor"}}},
		Files:     []Item{{Text: "CHANGELOG.md", Keys: []string{"changelog.md"}}}}
	user := func(s string) *compact.Message { return compact.TextMessage(compact.RoleUser, s) }
	for _, tt := range []struct {
		name string
		ctx  *compact.Context
		want []bool // goal, next, decision, file
	}{
		{"in passing", summaryContext("## Goal\n- themes\n## Progress\n- ran git commit -m 'Release v0.8.0'\n## Critical Context\n- npm run publish, minor, CHANGELOG.md"),
			[]bool{false, false, true, true}},
		{"under their headings", summaryContext("## Goal\n- Release v0.8.0\n## Next Steps\n- publish it"), []bool{true, true, false, false}},
		{"split turn", summaryContext("## Turn Request\n- release v0.8.0\n## Work So Far in This Turn\n### In Progress\n- publish"), []bool{true, true, false, false}},
		{"kept messages", &compact.Context{Messages: []*compact.Message{user("release v0.8.0 please"), compact.TextMessage(compact.RoleAssistant, "Now publish.")}},
			[]bool{true, true, false, false}},
	} {
		var got []bool
		for _, c := range l.Check(tt.ctx) {
			got = append(got, c.Pass)
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestReadLabelsErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ name, data, want string }{
		{"bad json", "{", "bad.json"},
		{"no cut", `{"sessions":[{"session":"repo:x","goal":{"text":"g","keys":["g"]}}]}`, "positive keepRecent"},
		{"no keys", `{"sessions":[{"session":"repo:x","keepRecent":10,"goal":{"text":"g","keys":["g"]},"files":[{"text":"a.go"}]}]}`, `file "a.go" has no key words`},
	} {
		p := filepath.Join(dir, "bad.json")
		if err := os.WriteFile(p, []byte(tt.data), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadLabels(p); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}

// TestShippedLabels: the embedded labels are the testdata file's.
func TestShippedLabels(t *testing.T) {
	want, err := ReadLabels(filepath.Join("testdata", "labels.json"))
	if err != nil {
		t.Fatal(err)
	}
	got := ShippedLabels()
	if len(got.Sessions) != len(want.Sessions) || got.Sessions[0].Session != want.Sessions[0].Session {
		t.Fatalf("shipped labels name %d sessions, the file %d", len(got.Sessions), len(want.Sessions))
	}
}
