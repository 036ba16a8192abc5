package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// import warns, and still writes the session, when --cwd names no folder
// on this machine (a typo, say): pi would refuse to continue the session
// there. The agent's own folder is not checked: it is the one of the
// machine the file came from.
func TestImportWarnsOfMissingCwd(t *testing.T) {
	const rollout = "../../agents/codex/testdata/pomodoro.jsonl"
	here := t.TempDir()
	tests := []struct {
		name string
		args []string
		warn string // "" for none
	}{
		{"--cwd missing", []string{"--cwd", filepath.Join(here, "gone")}, "--cwd " + filepath.Join(here, "gone") + ": no such folder on this machine"},
		{"--cwd a file", []string{"--cwd", rollout}, "--cwd " + rollout + ": no such folder on this machine"},
		{"the file's own folder", nil, ""},
		{"--cwd here", []string{"--cwd", here}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "imported.jsonl")
			r := newCLI(t).run(append([]string{"import", rollout, "-o", out}, tc.args...)...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if _, err := os.Stat(out); err != nil {
				t.Fatalf("no session written: %v", err)
			}
			got := strings.Contains(r.stderr, "compact: warning: ")
			switch {
			case tc.warn == "" && got:
				t.Errorf("unexpected warning: %s", r.stderr)
			case tc.warn != "" && !strings.Contains(r.stderr, tc.warn):
				t.Errorf("stderr %q, want a warning %q", r.stderr, tc.warn)
			}
		})
	}
}
