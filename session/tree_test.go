package session

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

// treeFile is a version 3 session with two branches off 00000002, and
// label entries in the middle of the first branch:
//
//	1 user - 2 assistant -+- 3 user - L1 (label 1) - 4 assistant - L2 (label 3) - 5 user
//	                      +- 6 user - L3 (label 6)
func treeFile(t *testing.T) string {
	return writeSession(t, v3Header,
		msgLine("00000001", "", "user", "one"),
		msgLine("00000002", "00000001", "assistant", "two"),
		msgLine("00000003", "00000002", "user", "three"),
		`{"type":"label","id":"0000000a","parentId":"00000003","timestamp":"t","targetId":"00000001","label":"start"}`,
		msgLine("00000004", "0000000a", "assistant", "four"),
		`{"type":"label","id":"0000000b","parentId":"00000004","timestamp":"t","targetId":"00000003","label":"question"}`,
		msgLine("00000005", "0000000b", "user", "five"),
		msgLine("00000006", "00000002", "user", "six"),
		`{"type":"label","id":"0000000c","parentId":"00000006","timestamp":"t","targetId":"00000006","label":"other branch"}`,
	)
}

// Branch moves the leaf: the next append is a child of the entry, a new
// branch; the tree then shows both children. Unknown ids are refused.
func TestBranch(t *testing.T) {
	p := treeFile(t)
	s := mustOpen(t, p, Options{})
	if s.Leaf() != "0000000c" {
		t.Fatalf("leaf %q", s.Leaf())
	}
	if err := s.Branch("nope"); !errors.Is(err, compact.ErrNoEntry) {
		t.Errorf("Branch(unknown) = %v, want ErrNoEntry", err)
	}
	before := readFile(t, p)
	if err := s.Branch("00000003"); err != nil {
		t.Fatal(err)
	}
	if s.Leaf() != "00000003" || !slices.Equal(ids(s.Path()), []string{"00000001", "00000002", "00000003"}) {
		t.Errorf("after Branch: leaf %q path %v", s.Leaf(), ids(s.Path()))
	}
	if !bytes.Equal(before, readFile(t, p)) {
		t.Error("Branch wrote to the file")
	}
	e, err := s.AppendMessage(bg, compact.TextMessage(compact.RoleAssistant, "another answer"))
	if err != nil {
		t.Fatal(err)
	}
	if e.ParentID != "00000003" || s.Leaf() != e.ID {
		t.Errorf("appended under %q, leaf %q", e.ParentID, s.Leaf())
	}
	if got := s.Context().EntryIDs; !slices.Equal(got, []string{"00000001", "00000002", "00000003", e.ID}) {
		t.Errorf("context on the new branch %v", got)
	}
	again := mustOpen(t, p, Options{})
	var kids []string
	for _, n := range findNode(again.Tree(), "00000003").Children {
		kids = append(kids, n.Entry.ID)
	}
	if !slices.Equal(kids, []string{"0000000a", e.ID}) {
		t.Errorf("children of 00000003 after re-read: %v", kids)
	}
}

func findNode(nodes []*Node, id string) *Node {
	for _, n := range nodes {
		if n.Entry.ID == id {
			return n
		}
		if f := findNode(n.Children, id); f != nil {
			return f
		}
	}
	return nil
}

// Labels: set, look up, clear with an empty label, see them in the tree,
// and find them again after a re-read.
func TestLabels(t *testing.T) {
	p := treeFile(t)
	s := mustOpen(t, p, Options{})
	want := map[string]string{"00000001": "start", "00000003": "question", "00000006": "other branch"}
	if got := s.Labels(); !mapsEqual(got, want) {
		t.Errorf("labels %v, want %v", got, want)
	}
	if err := s.SetLabel(bg, "00000005", "end"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetLabel(bg, "00000001", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.SetLabel(bg, "00000003", "renamed"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetLabel(bg, "missing", "x"); !errors.Is(err, compact.ErrNoEntry) {
		t.Errorf("SetLabel(unknown) = %v, want ErrNoEntry", err)
	}
	want = map[string]string{"00000003": "renamed", "00000005": "end", "00000006": "other branch"}
	for _, sess := range []*Session{s, mustOpen(t, p, Options{})} {
		if got := sess.Labels(); !mapsEqual(got, want) {
			t.Errorf("labels %v, want %v", got, want)
		}
		if sess.Label("00000001") != "" || sess.Label("00000005") != "end" {
			t.Errorf("Label lookups %q %q", sess.Label("00000001"), sess.Label("00000005"))
		}
		roots := sess.Tree()
		if len(roots) != 1 || roots[0].Entry.ID != "00000001" || roots[0].Label != "" {
			t.Fatalf("tree roots %v", roots)
		}
		for id, l := range want {
			if n := findNode(roots, id); n == nil || n.Label != l {
				t.Errorf("tree node %s has label %q, want %q", id, n.Label, l)
			}
		}
		// Every entry is in the tree exactly once.
		count := 0
		var walk func([]*Node)
		walk = func(ns []*Node) {
			for _, n := range ns {
				count++
				walk(n.Children)
			}
		}
		walk(roots)
		if count != len(sess.Entries()) {
			t.Errorf("tree holds %d nodes, session %d entries", count, len(sess.Entries()))
		}
	}
	// The clearing label entry has no label member, as pi writes it.
	lines := fileLines(t, p)
	if m := canonical(t, []byte(lines[len(lines)-2])); m["targetId"] != "00000001" || m["label"] != nil {
		t.Errorf("clearing label line %s", lines[len(lines)-2])
	}
}

// Tree treats entries whose parent is missing as roots, in file order.
func TestTreeOrphans(t *testing.T) {
	s := mustOpen(t, writeSession(t, v3Header,
		msgLine("00000001", "", "user", "one"),
		msgLine("00000002", "0000dead", "user", "orphan"),
		msgLine("00000003", "00000001", "assistant", "three"),
	), Options{})
	roots := s.Tree()
	if len(roots) != 2 || roots[0].Entry.ID != "00000001" || roots[1].Entry.ID != "00000002" || len(roots[0].Children) != 1 {
		t.Errorf("roots %v", roots)
	}
	if p, err := s.PathTo("00000002"); err != nil || !slices.Equal(ids(p), []string{"00000002"}) {
		t.Errorf("path of the orphan %v, %v", ids(p), err)
	}
}

// In lenient mode, repeated ids and parent links that loop still give a
// forest holding every entry once: a parent id names the last entry with
// it, and a loop is cut at its first entry in file order.
func TestTreeLoops(t *testing.T) {
	cases := []struct {
		name  string
		lines []string
		want  string // the forest, each node as id(text) with its children in brackets
	}{
		{"repeated id closing a loop", []string{
			msgLine("0000000a", "", "user", "a"),
			msgLine("0000000b", "0000000a", "user", "b"),
			msgLine("0000000a", "0000000b", "user", "dup"),
			msgLine("0000000c", "0000000a", "user", "c"),
		}, "0000000a(a) 0000000b(b)[0000000a(dup)[0000000c(c)]]"},
		{"two entries naming each other", []string{
			msgLine("0000000a", "0000000b", "user", "a"),
			msgLine("0000000b", "0000000a", "user", "b"),
		}, "0000000a(a)[0000000b(b)]"},
		{"own parent", []string{
			msgLine("0000000a", "0000000a", "user", "a"),
			msgLine("0000000b", "0000000a", "user", "b"),
		}, "0000000a(a)[0000000b(b)]"},
		{"repeated id without a loop", []string{
			msgLine("0000000a", "", "user", "a"),
			msgLine("0000000a", "", "user", "dup"),
			msgLine("0000000b", "0000000a", "user", "b"),
		}, "0000000a(a) 0000000a(dup)[0000000b(b)]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := mustOpen(t, writeSession(t, append([]string{v3Header}, c.lines...)...), Options{Lenient: true})
			// show gives up below depth 20, so that a loop fails the test
			// rather than overflowing the stack.
			var show func(ns []*Node, depth int) string
			show = func(ns []*Node, depth int) string {
				if depth > 20 {
					return "..."
				}
				var parts []string
				for _, n := range ns {
					p := n.Entry.ID + "(" + n.Entry.Message.Text() + ")"
					if len(n.Children) > 0 {
						p += "[" + show(n.Children, depth+1) + "]"
					}
					parts = append(parts, p)
				}
				return strings.Join(parts, " ")
			}
			if got := show(s.Tree(), 0); got != c.want {
				t.Errorf("tree %s, want %s", got, c.want)
			}
		})
	}
}

// Fork writes a new file with the root-to-entry path (label entries left
// out and re-created at the end for the path's labelled entries), a new
// header pointing at the source, and refuses to overwrite.
func TestFork(t *testing.T) {
	cases := []struct {
		name     string
		at       string
		path     []string // non-label entries of the fork, in order
		labels   map[string]string
		srcLabel map[string]string // labels set on the source before forking
	}{
		{"leaf of the labelled branch", "00000005", []string{"00000001", "00000002", "00000003", "00000004", "00000005"},
			map[string]string{"00000001": "start", "00000003": "question"}, nil},
		{"middle entry", "00000004", []string{"00000001", "00000002", "00000003", "00000004"},
			map[string]string{"00000001": "start", "00000003": "question"}, nil},
		{"other branch", "00000006", []string{"00000001", "00000002", "00000006"},
			map[string]string{"00000001": "start", "00000006": "other branch"}, nil},
		{"at a label entry", "0000000b", []string{"00000001", "00000002", "00000003", "00000004"},
			map[string]string{"00000001": "start", "00000003": "question"}, nil},
		{"label set after the path", "00000002", []string{"00000001", "00000002"},
			map[string]string{"00000001": "start", "00000002": "late"}, map[string]string{"00000002": "late"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := treeFile(t)
			s := mustOpen(t, src, Options{})
			for id, l := range c.srcLabel {
				if err := s.SetLabel(bg, id, l); err != nil {
					t.Fatal(err)
				}
			}
			srcBytes := readFile(t, src)
			out := filepath.Join(t.TempDir(), "fork.jsonl")
			f, err := s.Fork(c.at, out)
			if err != nil {
				t.Fatal(err)
			}
			h := f.Header()
			abs, _ := filepath.Abs(src)
			if h.Version != 3 || h.ParentSession != abs || h.ID == s.Header().ID || h.ID == "" || h.Cwd != s.Header().Cwd {
				t.Errorf("fork header %+v", h)
			}
			var got []string
			labels := map[string]string{}
			for _, e := range f.Entries() {
				if e.Kind == compact.KindLabel {
					labels[e.Metadata().TargetID] = e.Metadata().Label
					continue
				}
				got = append(got, e.ID)
			}
			if !slices.Equal(got, c.path) {
				t.Errorf("fork entries %v, want %v", got, c.path)
			}
			if !mapsEqual(labels, c.labels) || !mapsEqual(f.Labels(), c.labels) {
				t.Errorf("fork labels %v (resolved %v), want %v", labels, f.Labels(), c.labels)
			}
			// The path to the last message is whole: entries whose parent
			// was a label entry left out are linked to the entry before.
			last := c.path[len(c.path)-1]
			if p, err := f.PathTo(last); err != nil || !slices.Equal(ids(p), c.path) {
				t.Errorf("fork path to %s: %v, %v", last, ids(p), err)
			}
			// The labels come last, so the fork's leaf sees the same
			// context as the source at the fork point.
			if !slices.Equal(f.Context().EntryIDs, c.path) {
				t.Errorf("fork context %v", f.Context().EntryIDs)
			}
			if !bytes.Equal(readFile(t, src), srcBytes) {
				t.Error("Fork changed the source file")
			}
			forkBytes := readFile(t, out)
			if _, err := s.Fork(c.at, out); err == nil || !strings.Contains(err.Error(), "exists") {
				t.Errorf("second Fork to the same file: %v, want a refusal", err)
			}
			if !bytes.Equal(readFile(t, out), forkBytes) {
				t.Error("the refused Fork changed the existing file")
			}
			if dir, _ := os.ReadDir(filepath.Dir(out)); len(dir) != 1 {
				t.Errorf("%d files beside the fork, want 1", len(dir))
			}
		})
	}
}

// Forking a version 1 fixture writes a version 3 file whose entries keep
// their ids and whose compactions keep their first kept ids.
func TestForkV1Fixture(t *testing.T) {
	s := mustOpen(t, fixture(t, beforeCompaction), Options{})
	entries := s.Entries()
	at := entries[700]
	out := filepath.Join(t.TempDir(), "fork.jsonl")
	f, err := s.Fork(at.ID, out)
	if err != nil {
		t.Fatal(err)
	}
	if f.NeedsMigration() || f.Header().ParentSession == "" {
		t.Errorf("fork header %+v", f.Header())
	}
	if got := ids(f.Entries()); !slices.Equal(got, ids(entries[:701])) {
		t.Fatalf("fork holds %d entries, want the first 701", len(got))
	}
	for _, e := range f.Entries() {
		if e.Compaction != nil && e.Compaction.FirstKeptID != s.Entry(e.ID).Compaction.FirstKeptID {
			t.Errorf("compaction %s keeps %s", e.ID, e.Compaction.FirstKeptID)
		}
	}
	src, _ := s.PathTo(at.ID)
	if got, want := f.Context(), compact.BuildContext(src); !slices.Equal(got.EntryIDs, want.EntryIDs) {
		t.Error("the fork's context differs from the source's at the fork point")
	}
	if _, err := s.Fork("nope", filepath.Join(t.TempDir(), "x.jsonl")); !errors.Is(err, compact.ErrNoEntry) {
		t.Errorf("Fork(unknown) = %v", err)
	}
}
