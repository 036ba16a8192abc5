// Package golden compares what a test produced with a golden file, the
// expected output kept under testdata, and rewrites the file instead when
// the test runs with -update, so that a deliberate change is recorded and
// shows in the diff of the commit. Each test package declares its own
// -update flag and passes its value.
package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Check compares got with the golden file at path. With update set it
// first writes got to path (creating the folder), so that the comparison
// passes and the change is left for review. A missing file or a
// difference fails the test: the message names the first line that
// differs, both sides cut at 300 bytes, or the two lengths in lines when
// one is a prefix of the other.
func Check(tb testing.TB, path string, got []byte, update bool) {
	tb.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := FirstDiff(string(want), string(got)); diff != "" {
		tb.Errorf("output differs from %s (run go test -update after checking the change): %s", path, diff)
	}
}

// FirstDiff describes where got first differs from want, line by line:
// "line N:" with both lines (cut at 300 bytes), or the two lengths in
// lines when one is a prefix of the other; "" when they are equal.
func FirstDiff(want, got string) string {
	if want == got {
		return ""
	}
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range min(len(w), len(g)) {
		if w[i] != g[i] {
			return fmt.Sprintf("line %d:\nwant: %.300s\ngot:  %.300s", i+1, w[i], g[i])
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(g), len(w))
}
