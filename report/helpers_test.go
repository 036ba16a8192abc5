package report

import (
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/sharedtest"
	"github.com/compactkit/compact/session"
)

// smallSession is a hand-written session with every kind of event the
// report shows: compactions of each reason (threshold, overflow, manual,
// none), a context edit, a compaction on another branch, an aborted call
// and a failed one (no usable usage), and strings that need escaping.
const smallSession = "testdata/small.jsonl"

// smallInput is the input of the golden page: small.jsonl against a
// small window, so that the chart's lines and points are apart.
func smallInput(t *testing.T) Input {
	t.Helper()
	s := openSession(t, smallSession)
	h := s.Header()
	return Input{File: "small.jsonl", SessionID: h.ID, Cwd: h.Cwd, Entries: s.Entries(), Path: s.Path(),
		Model:  compact.ModelInfo{ID: "claude-sonnet-4-5", Provider: "anthropic", ContextWindow: 6000},
		Policy: compact.Reserve{Tokens: 1000}}
}

// openSession loads a session file or fails the test.
func openSession(t testing.TB, path string) *session.Session {
	t.Helper()
	s, err := session.Open(path, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// realSession loads one of the real pi sessions.
func realSession(t testing.TB, name string) *session.Session {
	t.Helper()
	return openSession(t, sharedtest.PiSession(t, name))
}

// indexOf returns the path index of the entry id, failing the test when
// it is not on the path.
func indexOf(t *testing.T, path []*compact.Entry, id string) int {
	t.Helper()
	for i, e := range path {
		if e.ID == id {
			return i
		}
	}
	t.Fatalf("entry %s is not on the path", id)
	return -1
}
