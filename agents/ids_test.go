package agents

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/compactkit/compact/session"
)

// TestStableIDs: every reader gives the entries of a file the same ids
// on every read, and so does the session made from its transcript (the
// model_change entry put first included), so that an id printed by one
// run of "compact context" names the same entry in the next.
func TestStableIDs(t *testing.T) {
	for _, f := range readers(t) {
		paths, err := filepath.Glob(filepath.Join(f.dir, "testdata", "*"))
		if err != nil {
			t.Fatal(err)
		}
		read := 0
		for _, path := range paths {
			if fi, err := os.Stat(path); err != nil || fi.IsDir() && (f.DetectDir == nil || !f.DetectDir(path)) {
				continue
			}
			ids := func() (transcript, sess []string) {
				tr, err := f.Read(path, "")
				if err != nil {
					return nil, nil
				}
				for _, e := range tr.Entries {
					transcript = append(transcript, e.ID)
				}
				s, err := session.FromTranscript(tr, path, session.Options{Lenient: true})
				if err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				for _, e := range s.Entries() {
					sess = append(sess, e.ID)
				}
				return transcript, sess
			}
			t1, s1 := ids()
			if t1 == nil {
				continue // not this format's file (or a bad-input sample)
			}
			read++
			t2, s2 := ids()
			for _, pair := range []struct {
				what string
				a, b []string
			}{{"transcript", t1, t2}, {"session", s1, s2}} {
				if len(pair.a) != len(pair.b) {
					t.Errorf("%s %s: %d ids, then %d", path, pair.what, len(pair.a), len(pair.b))
					continue
				}
				for i := range pair.a {
					if pair.a[i] == "" || pair.a[i] != pair.b[i] {
						t.Errorf("%s %s: entry %d has id %q, then %q on the second read", path, pair.what, i, pair.a[i], pair.b[i])
						break
					}
				}
			}
		}
		if read == 0 {
			t.Errorf("format %s: no sample file read in %s/testdata", f.Name, f.dir)
		}
	}
}
