package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// errTooMuch is what cappedWriter panics with when its cap is passed.
var errTooMuch = errors.New("output past the cap")

// cappedWriter keeps what is written until max bytes, then panics, so
// that a command that would write without end fails the test instead of
// hanging it.
type cappedWriter struct {
	b   strings.Builder
	max int
}

func (w *cappedWriter) Write(p []byte) (int, error) {
	if w.b.Len()+len(p) > w.max {
		panic(errTooMuch)
	}
	return w.b.Write(p)
}

// runCapped runs the program like cli.run, with stdout capped at max bytes;
// it reports whether the cap was reached.
func runCapped(t *testing.T, max int, args ...string) (r result, capped bool) {
	t.Helper()
	stdout, stderr := &cappedWriter{max: max}, &cappedWriter{max: max}
	defer func() {
		if v := recover(); v != nil {
			if v != errTooMuch {
				panic(v)
			}
			r, capped = result{code: -1, stdout: stdout.b.String(), stderr: stderr.b.String()}, true
		}
	}()
	a := &app{stdin: strings.NewReader(""), stdout: stdout, stderr: stderr, logger: slog.New(slog.DiscardHandler),
		getenv: func(string) string { return "" }}
	code := a.execute(context.Background(), args)
	return result{code: code, stdout: stdout.b.String(), stderr: stderr.b.String()}, false
}

// A repeated id whose parent links loop used to make "tree --lenient"
// print without end; every entry is now printed once.
func TestTreeLenientCycle(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cycle.jsonl")
	writeFile(t, p, `{"type":"session","version":3,"id":"11111111-2222-4333-8444-555555555555","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/tmp"}
{"type":"message","id":"0000000a","parentId":null,"timestamp":"t","message":{"role":"user","content":"first"}}
{"type":"message","id":"0000000b","parentId":"0000000a","timestamp":"t","message":{"role":"assistant","content":"second"}}
{"type":"message","id":"0000000a","parentId":"0000000b","timestamp":"t","message":{"role":"user","content":"repeated id"}}
{"type":"message","id":"0000000c","parentId":"0000000a","timestamp":"t","message":{"role":"assistant","content":"after"}}
`)
	for _, args := range [][]string{{"tree", "--lenient", p}, {"tree", "--lenient", "--json", p}} {
		r, capped := runCapped(t, 1<<16, args...)
		if capped {
			t.Fatalf("compact %s: more than 64 KiB of output", strings.Join(args, " "))
		}
		if r.code != 0 || !strings.Contains(r.stderr, "cycle") {
			t.Fatalf("compact %s: exit %d, stderr %q", strings.Join(args, " "), r.code, r.stderr)
		}
		for _, text := range []string{"first", "second", "repeated id", "after"} {
			if n := strings.Count(r.stdout, text); n != 1 {
				t.Errorf("compact %s: %q printed %d times:\n%s", strings.Join(args, " "), text, n, r.stdout)
			}
		}
	}
	// Without --lenient the file is refused, naming the line.
	c := newCLI(t)
	if msg := c.fails(1, "tree", p); !strings.Contains(msg, p+":4:") {
		t.Errorf("tree: %q, want line 4 named", msg)
	}
}

// Another agent's transcript is read by the commands that only read; the
// ones that write fail with one line naming the format and compact
// import; with --format pi every command fails naming the format it
// looks like.
func TestForeignFileMessage(t *testing.T) {
	p := filepath.Join(t.TempDir(), "claude.jsonl")
	writeFile(t, p, `{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/p","sessionId":"5d1f","version":"2.0.14","type":"user","message":{"role":"user","content":"hello"},"uuid":"9a2c","timestamp":"t"}`+"\n")
	c := newCLI(t)
	for _, cmd := range []string{"inspect", "tree", "context"} {
		c.ok(cmd, p)
		msg := c.fails(1, cmd, "--format", "pi", p)
		if want := "compact: " + p + ":1: this looks like a Claude Code file (format claude-code), not a pi session file"; !strings.HasPrefix(msg, want) {
			t.Errorf("%s --format pi: %q, want it to start with %q", cmd, msg, want)
		}
	}
	for _, cmd := range []string{"migrate", "run", "prune"} {
		msg := c.fails(1, cmd, p)
		if want := "compact: " + p + ": this is a Claude Code file (format claude-code), not a pi session file"; !strings.HasPrefix(msg, want) || !strings.Contains(msg, "compact import") {
			t.Errorf("%s: %q, want it to start with %q and name compact import", cmd, msg, want)
		}
	}
}

// A line cut short with lines after it fails every command, naming the
// line and --lenient; with --lenient it is skipped with a warning. Two
// entries glued on one line are read, with a warning naming the line.
func TestTornAndGluedLines(t *testing.T) {
	const header = `{"type":"session","version":3,"id":"11111111-2222-4333-8444-555555555555","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/tmp"}`
	m := func(id, parent, text string) string {
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		return `{"type":"message","id":"` + id + `","parentId":` + p + `,"timestamp":"t","message":{"role":"user","content":"` + text + `"}}`
	}
	dir := t.TempDir()
	torn := filepath.Join(dir, "torn.jsonl")
	writeFile(t, torn, header+"\n"+m("00000001", "", "one")+"\n"+m("00000002", "00000001", "two")[:40]+"\n"+m("00000003", "00000001", "three")+"\n")
	c := newCLI(t)
	for _, cmd := range []string{"inspect", "tree", "context"} {
		msg := c.fails(1, cmd, torn)
		if !strings.HasPrefix(msg, "compact: "+torn+":3: ") || !strings.Contains(msg, "--lenient") {
			t.Errorf("%s: %q, want line 3 and --lenient named", cmd, msg)
		}
	}
	r := c.run("tree", "--lenient", torn)
	if r.code != 0 || !strings.HasPrefix(r.stderr, "compact: warning: "+torn+":3: incomplete line") || !strings.Contains(r.stdout, "three") {
		t.Errorf("tree --lenient: exit %d, stderr %q, stdout %q", r.code, r.stderr, r.stdout)
	}

	glued := filepath.Join(dir, "glued.jsonl")
	writeFile(t, glued, header+"\n"+m("00000001", "", "one")+m("00000002", "00000001", "two")+"\n"+m("00000003", "00000002", "three")+"\n")
	r = c.run("tree", glued)
	if r.code != 0 || r.stderr != "compact: warning: "+glued+":2: 2 entries on one line (a lost newline?) read in order; the file keeps the line as is\n" {
		t.Errorf("tree: exit %d, stderr %q", r.code, r.stderr)
	}
	contains(t, "tree", r.stdout, "one", "two", "* 00000003")
	if strings.Contains(r.stdout, "+") {
		t.Errorf("tree shows a branch in a single chain:\n%s", r.stdout)
	}
}

// A file whose last line was cut short is read with a warning, but run
// and prune refuse to append after it without --lenient (the line would
// end up in the middle, where reading needs --lenient), and say so before
// any summary is written; with --lenient they go ahead.
func TestTornLastLineRefusesAppend(t *testing.T) {
	const header = `{"type":"session","version":3,"id":"11111111-2222-4333-8444-555555555555","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/tmp"}`
	line := func(id, parent, role, text string) string {
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		return `{"type":"message","id":"` + id + `","parentId":` + p + `,"timestamp":"t","message":{"role":"` + role + `","content":"` + text + `"}}`
	}
	var b strings.Builder
	b.WriteString(header + "\n")
	parent := ""
	for i := 1; i <= 40; i++ {
		id := fmt.Sprintf("%08d", i)
		role := "user"
		if i%2 == 0 {
			role = "assistant"
		}
		b.WriteString(line(id, parent, role, strings.Repeat("word ", 2000)) + "\n")
		parent = id
	}
	b.WriteString(line("00000041", parent, "user", "cut")[:50])
	torn := filepath.Join(t.TempDir(), "torn-end.jsonl")
	writeFile(t, torn, b.String())
	before := b.String()
	c := newCLI(t)
	for _, args := range [][]string{{"run", torn}, {"prune", torn, "--strategy", "truncate"}} {
		r := c.run(args...)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		msg := lines[len(lines)-1]
		if r.code != 1 || !strings.HasPrefix(msg, "compact: "+torn+":42: append: ") || !strings.Contains(msg, "--lenient") {
			t.Errorf("%s: exit %d, %q, want line 42 and --lenient named", args[0], r.code, msg)
		}
		if got := string(readFile(t, torn)); got != before {
			t.Fatalf("%s changed the file", args[0])
		}
	}
	r := c.run("run", "--lenient", torn)
	if r.code != 0 || !strings.Contains(r.stdout, "appended compaction entry") {
		t.Fatalf("run --lenient: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestStartProfile: COMPACT_CPUPROFILE writes a profile; a path that
// cannot be created is reported and the command goes on.
func TestStartProfile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cpu.prof")
	var stderr strings.Builder
	stop := startProfile(p, &stderr)
	stop()
	if fi, err := os.Stat(p); err != nil || fi.Size() == 0 || stderr.Len() > 0 {
		t.Errorf("profile %v, %v; stderr %q", fi, err, stderr.String())
	}
	startProfile(filepath.Join(p, "no", "such"), &stderr)()
	if !strings.Contains(stderr.String(), "COMPACT_CPUPROFILE") {
		t.Errorf("stderr %q", stderr.String())
	}
	startProfile("", &stderr)()
}

// TestWriteMemProfile: COMPACT_MEMPROFILE writes the allocation profile;
// a path that cannot be created is reported on stderr.
func TestWriteMemProfile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "mem.prof")
	var stderr strings.Builder
	writeMemProfile(p, &stderr)
	if fi, err := os.Stat(p); err != nil || fi.Size() == 0 || stderr.Len() > 0 {
		t.Errorf("profile %v, %v; stderr %q", fi, err, stderr.String())
	}
	writeMemProfile(filepath.Join(p, "no", "such"), &stderr)
	if !strings.Contains(stderr.String(), "COMPACT_MEMPROFILE") {
		t.Errorf("stderr %q", stderr.String())
	}
	writeMemProfile("", &stderr)
}
