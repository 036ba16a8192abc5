package golden

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFirstDiff(t *testing.T) {
	for _, tc := range []struct{ want, got, diff string }{
		{"a\nb\n", "a\nb\n", ""},
		{"a\nb\n", "a\nc\n", "line 2:\nwant: b\ngot:  c"},
		{"a\n", "a\nb\n", "line 2:\nwant: \ngot:  b"},
		{"a", "a\nb", "2 lines, want 1"},
	} {
		if d := FirstDiff(tc.want, tc.got); d != tc.diff {
			t.Errorf("FirstDiff(%q, %q) = %q, want %q", tc.want, tc.got, d, tc.diff)
		}
	}
}

// With update the file is written (its folder created) and then matches;
// without, it is only read.
func TestCheckUpdate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "testdata", "x.golden")
	Check(t, path, []byte("one\n"), true)
	if b, err := os.ReadFile(path); err != nil || string(b) != "one\n" {
		t.Fatalf("written %q (%v)", b, err)
	}
	Check(t, path, []byte("one\n"), false)
}
