package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// run passes the command's exit code on and writes four figures: wall,
// user and system seconds with three decimals, and a peak in KiB.
func TestRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "cost.txt")
	code, err := run(out, []string{"sh", "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; exit 3"})
	if err != nil {
		t.Fatal(err)
	}
	if code != 3 {
		t.Errorf("exit code %d, want 3", code)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	if len(f) != 4 {
		t.Fatalf("cost line %q: want 4 fields", b)
	}
	for i, s := range f[:3] {
		if dot := strings.IndexByte(s, '.'); dot < 0 || len(s)-dot-1 != 3 {
			t.Errorf("field %d %q: want seconds with three decimals", i, s)
		}
	}
	if v, _ := strconv.ParseFloat(f[0], 64); v <= 0 {
		t.Errorf("wall %q: want more than 0", f[0])
	}
	if kib, err := strconv.Atoi(f[3]); err != nil || kib <= 0 {
		t.Errorf("peak %q: want a positive KiB count", f[3])
	}

	if _, err := run(out, []string{filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Error("a command that cannot start gave no error")
	}
}
