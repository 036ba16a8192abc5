package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact/session"
)

// requestBody is a real request body pi sent (see requestbody/testdata).
const requestBody = "../../requestbody/testdata/pi-anthropic.json"

// TestReadOnlyCommandsReadOtherFormats: the commands that only read
// take another agent's file as it is; the ones that write refuse it and
// point at compact import.
func TestReadOnlyCommandsReadOtherFormats(t *testing.T) {
	c := newCLI(t)
	file := copyFile(t, requestBody)
	before, _ := os.ReadFile(file)
	for _, args := range [][]string{
		{"inspect", file},
		{"context", file},
		{"tree", file},
		{"run", "--dry-run", file},
		{"inspect", "--format", "request-body", file},
	} {
		out := c.ok(args...)
		if out == "" {
			t.Errorf("compact %s printed nothing", strings.Join(args, " "))
		}
	}
	var rep contextReport
	c.okJSON(&rep, "--json", "context", file)
	if len(rep.Messages) != 7 || !strings.Contains(string(rep.Messages[0].Message), "Run the shell steps") {
		t.Errorf("context of the request body: %d messages", len(rep.Messages))
	}
	for _, args := range [][]string{
		{"run", file},
		{"prune", file},
		{"pin", file, "x"},
		{"migrate", file},
	} {
		r := c.run(args...)
		if r.code == 0 || !strings.Contains(r.stderr, "format request-body") || !strings.Contains(r.stderr, "compact import") {
			t.Errorf("compact %s: exit %d, stderr %q; want a refusal naming the format and compact import", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	if r := c.run("run", "--format", "request-body", file); r.code != 2 || !strings.Contains(r.stderr, "--dry-run") {
		t.Errorf("run --format without --dry-run: exit %d, %q", r.code, r.stderr)
	}
	if r := c.run("inspect", "--format", "word", file); r.code != 2 || !strings.Contains(r.stderr, `"word": unknown session format (known: pi, `) {
		t.Errorf("inspect --format word: exit %d, %q", r.code, r.stderr)
	}
	// --format pi makes a foreign file an error of the session reader.
	if r := c.run("inspect", "--format", "pi", file); r.code != 1 || !strings.Contains(r.stderr, "request body") {
		t.Errorf("inspect --format pi: exit %d, %q", r.code, r.stderr)
	}
	after, _ := os.ReadFile(file)
	if string(before) != string(after) {
		t.Error("a command changed the file")
	}
}

func TestImportCommand(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "imported.jsonl")
	var r importReport
	c.okJSON(&r, "--json", "import", requestBody, "-o", out, "--cwd", dir)
	if r.Format != "request-body" || r.Messages != 7 || r.Entries < 9 {
		t.Errorf("import report %+v", r)
	}
	s, err := session.Open(out, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Header().Cwd != dir || s.Header().Version != session.CurrentVersion {
		t.Errorf("header %+v", s.Header())
	}
	// The converted file is a session every command continues.
	c.ok("run", "--keep-recent", "10", out)
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"import", requestBody, "-o", out}, 1, "the file exists"},
		{[]string{"import", requestBody}, 2, `required flag(s) "output" not set`},
		{[]string{"import", requestBody, "-o", filepath.Join(dir, "no", "x.jsonl")}, 2, "does not exist"},
		{[]string{"import", demoSession, "-o", filepath.Join(dir, "y.jsonl")}, 1, "already a pi session"},
		{[]string{"import", filepath.Join(dir, "missing.json"), "-o", filepath.Join(dir, "z.jsonl")}, 1, "no such file"},
	}
	for _, tt := range tests {
		res := c.run(tt.args...)
		if res.code != tt.code || !strings.Contains(res.stderr, tt.want) {
			t.Errorf("compact %s: exit %d, %q; want %d and %q", strings.Join(tt.args, " "), res.code, res.stderr, tt.code, tt.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the folder holds %d files after the failures, want only the import", len(entries))
	}
}

// TestReportReadsOtherFormats: compact report takes another agent's file,
// detected or named by --format.
func TestReportReadsOtherFormats(t *testing.T) {
	c := newCLI(t)
	out := filepath.Join(t.TempDir(), "r.html")
	c.ok("report", "../../codex/testdata/pomodoro.jsonl", "-o", out)
	page, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(page), "pomodoro") {
		t.Fatalf("report of a Codex rollout: %v", err)
	}
	c.ok("report", "--format", "request-body", requestBody, "-o", out)
	if out := c.ok("bench", "--format", "request-body", "--keep-recent", "10", requestBody); !strings.Contains(out, "extractive") {
		t.Errorf("bench --format request-body printed %q", out)
	}
}
