package readertest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/session"
)

// SameSession imports tr as a pi session named name and checks that its
// context holds wantContext messages; then it writes tr as a pi session
// file, reads it back and compares it with that session: tr's entries
// (the session may add its own, such as a model_change first) must come
// back with the same ids, parents (or both outside tr), kinds,
// timestamps, encoded messages and compactions, and the context with as
// many messages.
func SameSession(t testing.TB, tr *compact.Transcript, name string, wantContext int) {
	t.Helper()
	s := Import(t, tr, name)
	if n := len(s.Context().Messages); n != wantContext {
		t.Errorf("context has %d messages, want %d", n, wantContext)
	}
	var buf bytes.Buffer
	if err := session.EncodeTranscript(&buf, tr); err != nil {
		t.Fatal(err)
	}
	back, err := session.Read(bytes.NewReader(buf.Bytes()), "roundtrip", session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, e := range tr.Entries {
		ids[e.ID] = true
	}
	own := func(all []*compact.Entry) []*compact.Entry {
		var out []*compact.Entry
		for _, e := range all {
			if ids[e.ID] {
				out = append(out, e)
			}
		}
		return out
	}
	a, b := own(s.Entries()), own(back.Entries())
	if len(a) != len(b) || len(a) != len(tr.Entries) {
		t.Fatalf("round trip: %d entries, FromTranscript %d, transcript %d", len(b), len(a), len(tr.Entries))
	}
	for i := range a {
		sameParent := a[i].ParentID == b[i].ParentID || (!ids[a[i].ParentID] && !ids[b[i].ParentID])
		if a[i].ID != b[i].ID || !sameParent || a[i].Kind != b[i].Kind || a[i].Timestamp != b[i].Timestamp {
			t.Fatalf("round trip: entry %d is %s<-%s %s, was %s<-%s %s", i, b[i].ID, b[i].ParentID, b[i].Kind, a[i].ID, a[i].ParentID, a[i].Kind)
		}
		if a[i].Message != nil {
			ma, err1 := session.EncodeMessage(a[i].Message)
			mb, err2 := session.EncodeMessage(b[i].Message)
			if err1 != nil || err2 != nil || !bytes.Equal(ma, mb) {
				t.Fatalf("round trip: message %s differs (%v %v)", a[i].ID, err1, err2)
			}
		}
		if a[i].Compaction != nil && (b[i].Compaction == nil || a[i].Compaction.Summary != b[i].Compaction.Summary ||
			a[i].Compaction.FirstKeptID != b[i].Compaction.FirstKeptID) {
			t.Fatalf("round trip: compaction %s differs", a[i].ID)
		}
	}
	if n := len(back.Context().Messages); n != len(s.Context().Messages) {
		t.Errorf("round trip: context %d messages, was %d", n, len(s.Context().Messages))
	}
}

// ByID returns the entry of tr with the id, nil when there is none.
func ByID(tr *compact.Transcript, id string) *compact.Entry {
	for _, e := range tr.Entries {
		if e.ID == id {
			return e
		}
	}
	return nil
}

// File returns the contents of the file at path as a string; it fails
// tb when the file cannot be read.
func File(tb testing.TB, path string) string {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// ReadTestdata reads testdata/name with readFile, a reader's ReadFile;
// it fails t when the file does not read.
func ReadTestdata(t testing.TB, readFile func(path string) (*compact.Transcript, error), name string) *compact.Transcript {
	t.Helper()
	tr, err := readFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// Import imports tr as a pi session named name, as "compact import" does;
// it fails t when the transcript does not import.
func Import(t testing.TB, tr *compact.Transcript, name string) *session.Session {
	t.Helper()
	s, err := session.FromTranscript(tr, name, session.Options{})
	if err != nil {
		t.Fatalf("%s does not import as a pi session: %v", name, err)
	}
	return s
}
