package session

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/sharedtest"
)

// FuzzRead checks the reader on arbitrary input: it never panics, fails
// only with a *LineError, and a session it accepts without skipping
// anything is written by WriteTo as a file it accepts again, with the
// same entries, ids, parents and kept ids; writing that again gives the
// same bytes.
func FuzzRead(f *testing.F) {
	seeds := []string{
		"",
		"\n\n",
		v3Header,
		v3Header + "\n",
		v1Header + "\n" + v1MsgLine("user", "a") + "\n" + v1MsgLine("assistant", "b") + "\n" +
			`{"type":"compaction","timestamp":"t","summary":"s","firstKeptEntryIndex":2,"tokensBefore":9}` + "\n" + v1MsgLine("user", "c") + "\n",
		v1Header + "\n" + v1MsgLine("user", "a") + "\n" + `{"type":"mess`,
		v3Header + "\n" + msgLine("00000001", "", "user", "a") + "\n" + msgLine("00000001", "", "user", "dup") + "\n",
		v3Header + "\n" + msgLine("0000000a", "0000000b", "user", "a") + "\n" + msgLine("0000000b", "0000000a", "user", "b") + "\n",
		`{"type":"session","version":2,"id":"x","timestamp":"t","cwd":"/"}` + "\n" +
			`{"type":"message","id":"1","parentId":null,"timestamp":"t","message":{"role":"hookMessage","customType":"h","content":"s","display":true}}` + "\n",
		v3Header + "\r\n" + msgLine("00000001", "", "user", "crlf") + "\r\n",
		v3Header + "\n" + `{"type":"zzz","id":"1","parentId":null,"timestamp":"t","summary":[],"message":5}` + "\n",
		v3Header + "\n" + `{"type":"label","id":"1","parentId":null,"timestamp":"t","targetId":"1","label":"l"}` + "\n" +
			`{"type":"label","id":"2","parentId":"1","timestamp":"t","targetId":"1"}` + "\n",
		v3Header + "\n" + `{"type":"message","id":"1","parentId":null,"timestamp":"t","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"n","arguments":{"a":"\"}"},"x":"\\"}],"usage":{"input":1,"cost":{}}}}` + "\n",
		"\xef\xbb\xbf" + v3Header + "\n",
		v3Header + "\n" + msgLine("00000001", "", "user", "a") + "\n" +
			`{"type":"context_edit","id":"00000002","parentId":"00000001","timestamp":"t","strategy":"mask","edits":[{"targetId":"00000001","content":[{"type":"text","text":"[cleared]"}]}],"tokensFreed":3,"firstChangedId":"00000001"}` + "\n",
		// A repeated id whose parent links loop through the earlier entry.
		v3Header + "\n" + msgLine("0000000a", "", "user", "a") + "\n" + msgLine("0000000b", "0000000a", "user", "b") + "\n" +
			msgLine("0000000a", "0000000b", "user", "dup") + "\n",
		// Two entries glued on one line, and a torn line before the last.
		v3Header + "\n" + msgLine("00000001", "", "user", "a") + msgLine("00000002", "00000001", "user", "b") + "\n" +
			`{"type":"mess` + "\n" + msgLine("00000003", "00000002", "user", "c") + "\n",
		v1Header + "\n" + v1MsgLine("user", "a") + v1MsgLine("assistant", "b") + "\n" +
			`{"type":"compaction","timestamp":"t","summary":"s","firstKeptEntryIndex":3,"tokensBefore":9}` + "\n",
		v3Header + "\n" + msgLine("00000001", "", "user", "a") + `{"type":"message","id":"00000002","par` + "\n",
		v1Header + v1MsgLine("user", "a") + "\n" + v1MsgLine("assistant", "b") + "\n",
		// Other formats.
		`{"parentUuid":null,"sessionId":"s","version":"2.0.14","type":"user","message":{"role":"user","content":"hi"},"uuid":"u"}` + "\n",
		"{\n  \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]\n}\n",
	}
	// A few lines of each fixture, when the fixtures are there (the seeds
	// above run either way).
	dir, _, _ := sharedtest.Lookup()
	for _, name := range sharedtest.PiSessions() {
		data, err := os.ReadFile(filepath.Join(dir, "sessions", "pi", name))
		if err != nil {
			continue
		}
		lines := strings.SplitAfter(string(data), "\n")
		seeds = append(seeds, strings.Join(lines[:6], ""))
		// The first compaction after four entries, its index moved to
		// the third; and the same cut short.
		for _, l := range lines {
			if strings.HasPrefix(l, `{"type":"compaction"`) {
				l = regexp.MustCompile(`"firstKeptEntryIndex":\d+`).ReplaceAllString(l, `"firstKeptEntryIndex":3`)
				seeds = append(seeds, strings.Join(lines[:5], "")+l)
				seeds = append(seeds, strings.Join(lines[:5], "")+l[:len(l)/2])
				break
			}
		}
	}
	for _, c := range oddKeyInputs {
		seeds = append(seeds, c.data)
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, lenient := range []bool{false, true} {
			checkRead(t, data, lenient)
		}
	})
}

func checkRead(t *testing.T, data []byte, lenient bool) {
	opts := Options{Lenient: lenient}
	s, err := Read(bytes.NewReader(data), "fuzz", opts)
	if err != nil {
		var le *LineError
		if !errors.As(err, &le) || le.Line < 1 {
			t.Fatalf("lenient=%v: error %v (%T) is not a *LineError with a line", lenient, err, err)
		}
		if !errors.Is(err, ErrNotSession) && !errors.Is(err, ErrMalformed) {
			t.Fatalf("lenient=%v: error %v wraps neither ErrNotSession nor ErrMalformed", lenient, err)
		}
		return
	}
	// Nothing the session offers may panic on what Read accepted, and the
	// tree holds every entry exactly once.
	if n := countNodes(s.Tree()); n != len(s.Entries()) {
		t.Fatalf("lenient=%v: the tree has %d nodes for %d entries\ninput %q", lenient, n, len(s.Entries()), data)
	}
	s.Labels()
	c1 := s.Context()
	if len(s.Entries()) > 0 {
		if _, err := s.PathTo(s.Entries()[0].ID); err != nil && !strings.Contains(err.Error(), "cycle") {
			t.Fatalf("PathTo(first entry): %v", err)
		}
	}

	var out bytes.Buffer
	_, err = s.WriteTo(&out)
	if len(s.SkippedLines()) > 0 || s.TornLine() > 0 {
		if err == nil {
			t.Fatalf("lenient=%v: WriteTo succeeded although lines were skipped", lenient)
		}
		return
	}
	if err != nil {
		t.Fatalf("lenient=%v: WriteTo: %v\ninput %q", lenient, err, data)
	}
	written := out.String()
	checkOpenSame(t, data, opts, s, written)
	s2, err := Read(&out, "again", opts)
	if err != nil {
		t.Fatalf("lenient=%v: re-reading the written session: %v\ninput   %q\nwritten %q", lenient, err, data, written)
	}
	if s2.NeedsMigration() || len(s2.SkippedLines()) > 0 || s2.TornLine() > 0 {
		t.Fatalf("written session: version %d, skipped %v, torn %d\n%q", s2.Header().Version, s2.SkippedLines(), s2.TornLine(), written)
	}
	a, b := s.Entries(), s2.Entries()
	if len(a) != len(b) {
		t.Fatalf("%d entries read, %d after writing\ninput   %q\nwritten %q", len(a), len(b), data, written)
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].ParentID != b[i].ParentID || a[i].Kind != b[i].Kind || keptID(a[i]) != keptID(b[i]) {
			t.Fatalf("entry %d: %q<-%q %s kept %q, after writing %q<-%q %s kept %q\ninput   %q\nwritten %q", i,
				a[i].ID, a[i].ParentID, a[i].Kind, keptID(a[i]), b[i].ID, b[i].ParentID, b[i].Kind, keptID(b[i]), data, written)
		}
	}
	if c2 := s2.Context(); !slices.Equal(c1.EntryIDs, c2.EntryIDs) || !reflect.DeepEqual(c1.Messages, c2.Messages) {
		t.Fatalf("the context changed by writing\ninput   %q\nwritten %q", data, written)
	}
	var again bytes.Buffer
	if _, err := s2.WriteTo(&again); err != nil || again.String() != written {
		t.Fatalf("writing the written session again: %v\nfirst  %q\nsecond %q", err, written, again.String())
	}
}

func keptID(e *compact.Entry) string {
	if e.Compaction == nil {
		return ""
	}
	return e.Compaction.FirstKeptID
}

// countNodes counts the nodes of a forest, giving up (with a count that
// cannot match) past a million, so that a tree with a loop fails the test
// instead of hanging it.
func countNodes(roots []*Node) int {
	n := 0
	stack := slices.Clone(roots)
	for len(stack) > 0 && n <= 1e6 {
		nd := stack[len(stack)-1]
		stack = append(stack[:len(stack)-1], nd.Children...)
		n++
	}
	return n
}

// checkOpenSame checks that Open, which unescapes strings into the file's
// bytes rather than into copies (parseOwned), reads what Read read and
// writes what it wrote: the lines it changed are read back from the file.
func checkOpenSame(t *testing.T, data []byte, opts Options, read *Session, written string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := Open(p, opts)
	if err != nil {
		t.Fatalf("Open fails where Read succeeds: %v\ninput %q", err, data)
	}
	if !reflect.DeepEqual(o.Entries(), read.Entries()) {
		t.Fatalf("Open and Read decode differently\ninput %q", data)
	}
	var out bytes.Buffer
	if _, err := o.WriteTo(&out); err != nil || out.String() != written {
		t.Fatalf("Open then WriteTo: %v\nRead's %q\nOpen's %q", err, written, out.String())
	}
}
