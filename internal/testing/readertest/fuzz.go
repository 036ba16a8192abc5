package readertest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

// ReadFunc is the shape of every reader's Read: the whole file in
// memory and the name its errors and warnings give.
type ReadFunc func(data []byte, name string) (*compact.Transcript, error)

// Files returns the contents of the files matching pattern (a
// filepath.Glob pattern, relative to the test's package), with their
// names; it fails tb when none matches or one cannot be read.
func Files(tb testing.TB, pattern string) (names []string, data [][]byte) {
	tb.Helper()
	names, err := filepath.Glob(pattern)
	if err != nil || len(names) == 0 {
		tb.Fatalf("no test files match %s (%v)", pattern, err)
	}
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		data = append(data, b)
	}
	return names, data
}

// SeedFiles adds the files matching pattern to f's corpus, each cut to
// its first most bytes when most > 0: the other tests read the whole
// files, and a short seed cut mid-line (a torn last line too) keeps
// each execution fast enough to mutate.
func SeedFiles(f *testing.F, pattern string, most int) {
	f.Helper()
	_, all := Files(f, pattern)
	for _, data := range all {
		if most > 0 {
			data = data[:min(len(data), most)]
		}
		f.Add(data)
	}
}

// FuzzRead fuzzes read with each input named name: it must never
// panic, an error must be one line beginning "name:", and a transcript
// it accepts must import as a pi session.
func FuzzRead(f *testing.F, name string, read ReadFunc) {
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := read(data, name)
		if err != nil {
			if !strings.HasPrefix(err.Error(), name+":") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q is not one line naming the file", err)
			}
			return
		}
		Import(t, tr, "fuzz")
		StableIDs(t, tr, read, data, name)
	})
}

// FuzzLines fuzzes the read of a JSON Lines format (FuzzRead, files named
// "fuzz.jsonl"). The seeds are the first 8 KiB of each testdata/*.jsonl
// file (the other tests read them whole), an empty file, a lone newline
// and the reader's own seeds.
func FuzzLines(f *testing.F, read ReadFunc, seeds ...string) {
	f.Helper()
	SeedFiles(f, "testdata/*.jsonl", 8<<10)
	for _, s := range append([]string{"", "\n"}, seeds...) {
		f.Add([]byte(s))
	}
	FuzzRead(f, "fuzz.jsonl", read)
}

// StableIDs fails t unless the entries of tr, read from data, have
// unique non-empty ids and a second read of data gives each the same id.
func StableIDs(t testing.TB, tr *compact.Transcript, read ReadFunc, data []byte, name string) {
	t.Helper()
	again, err := read(data, name)
	if err != nil {
		t.Fatalf("the second read fails: %v", err)
	}
	if len(again.Entries) != len(tr.Entries) {
		t.Fatalf("%d entries, then %d", len(tr.Entries), len(again.Entries))
	}
	seen := make(map[string]bool, len(tr.Entries))
	for i, e := range tr.Entries {
		switch {
		case e.ID == "" || seen[e.ID]:
			t.Fatalf("entry %d: id %q is empty or repeated", i, e.ID)
		case again.Entries[i].ID != e.ID:
			t.Fatalf("entry %d: id %q, then %q on the second read", i, e.ID, again.Entries[i].ID)
		}
		seen[e.ID] = true
	}
}

// BenchRead reads every file matching pattern with read in each
// iteration; the bytes per second it reports are the reader's
// throughput.
func BenchRead(b *testing.B, pattern string, read ReadFunc) {
	names, all := Files(b, pattern)
	size := 0
	for _, data := range all {
		size += len(data)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		for i, data := range all {
			if _, err := read(data, names[i]); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// FuzzDetectRead fuzzes detect and read with each input named name:
// neither may panic, every message entry of a transcript read must hold
// its message, and the transcript must import as a pi session. What the
// errors say is left to the package's other tests.
func FuzzDetectRead(f *testing.F, name string, detect func([]byte) bool, read ReadFunc) {
	f.Fuzz(func(t *testing.T, data []byte) {
		detect(data)
		tr, err := read(data, name)
		if err != nil {
			return
		}
		for _, e := range tr.Entries {
			if e.Kind == compact.KindMessage && e.Message == nil {
				t.Fatal("message entry without a message")
			}
		}
		Import(t, tr, "fuzz")
		StableIDs(t, tr, read, data, name)
	})
}

// DetectsNone asserts that detect refuses the first 64 KiB of each of
// files and of every file matching one of patterns: the files of other
// formats. A file that does not read fails t.
func DetectsNone(t testing.TB, detect func(head []byte) bool, files []string, patterns ...string) {
	t.Helper()
	for _, pattern := range patterns {
		m, _ := filepath.Glob(pattern)
		files = append(files, m...)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if detect(data[:min(len(data), 64<<10)]) {
			t.Errorf("Detect(%s) = true", f)
		}
	}
}
