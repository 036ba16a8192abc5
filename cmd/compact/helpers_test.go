package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/sharedtest"
	"github.com/compactkit/compact/session"
	"github.com/compactkit/compact/summarize"
)

// demoSession is the example shipped with the repository.
const demoSession = "../../examples/sessions/demo.jsonl"

// result is what one invocation printed and returned.
type result struct {
	code           int
	stdout, stderr string
}

// cli runs the program in-process with a controlled environment. The
// environment is empty unless set, so no configuration file of the user
// running the tests is read.
type cli struct {
	t          *testing.T
	env        map[string]string
	summarizer compact.Summarizer
	progress   *bool
	// tune is passed to the app as its tuneSummarize hook.
	tune func(*summarize.Options)
	// wrapLog is passed to the app as its wrapLog hook.
	wrapLog func(compact.Log) compact.Log
	// now is passed to the app as its clock.
	now func() time.Time
}

func newCLI(t *testing.T) *cli { return &cli{t: t, env: map[string]string{}} }

func (c *cli) run(args ...string) result {
	c.t.Helper()
	return c.runCtx(context.Background(), args...)
}

// runCtx runs the program with ctx as the context of the command, the
// way main passes the one cancelled by Ctrl-C.
func (c *cli) runCtx(ctx context.Context, args ...string) result {
	var stdout, stderr bytes.Buffer
	a := &app{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, logger: slog.New(slog.DiscardHandler),
		getenv: func(k string) string { return c.env[k] }, summarizer: c.summarizer, progress: c.progress, tuneSummarize: c.tune, wrapLog: c.wrapLog, now: c.now}
	code := a.execute(ctx, args)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// ok runs the command and fails the test unless it exits 0 without
// writing to stderr.
func (c *cli) ok(args ...string) string {
	c.t.Helper()
	r := c.run(args...)
	if r.code != 0 || r.stderr != "" {
		c.t.Fatalf("compact %s: exit %d, stderr %q", strings.Join(args, " "), r.code, r.stderr)
	}
	return r.stdout
}

// okJSON runs the command and decodes its JSON output into v.
func (c *cli) okJSON(v any, args ...string) {
	c.t.Helper()
	out := c.ok(args...)
	dec := json.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(v); err != nil {
		c.t.Fatalf("compact %s: output is not one JSON object: %v\n%s", strings.Join(args, " "), err, out)
	}
	if dec.More() {
		c.t.Fatalf("compact %s: more than one JSON value", strings.Join(args, " "))
	}
}

// dryRun returns the plan of "run --dry-run --json" on file.
func (c *cli) dryRun(file string) runReport {
	c.t.Helper()
	var r runReport
	c.okJSON(&r, "run", "--dry-run", "--json", file)
	return r
}

// fails runs the command and checks the exit code and that stderr holds
// exactly one line starting with "compact: ".
func (c *cli) fails(code int, args ...string) string {
	c.t.Helper()
	r := c.run(args...)
	if r.code != code {
		c.t.Fatalf("compact %s: exit %d, want %d (stderr %q)", strings.Join(args, " "), r.code, code, r.stderr)
	}
	if !strings.HasPrefix(r.stderr, "compact: ") || strings.Count(r.stderr, "\n") != 1 || !strings.HasSuffix(r.stderr, "\n") {
		c.t.Fatalf("compact %s: stderr is not one 'compact: ' line: %q", strings.Join(args, " "), r.stderr)
	}
	return strings.TrimSuffix(r.stderr, "\n")
}

// failsKeeping runs the command, which must fail with exit code 1
// (exitFailure) and leave file as it was, and returns the error line.
func (c *cli) failsKeeping(file string, args ...string) string {
	c.t.Helper()
	before := readFile(c.t, file)
	msg := c.fails(exitFailure, args...)
	if !bytes.Equal(before, readFile(c.t, file)) {
		c.t.Fatalf("compact %s failed but changed %s", strings.Join(args, " "), file)
	}
	return msg
}

// fixture copies a real session into a temporary directory.
func fixture(t *testing.T, name string) string {
	t.Helper()
	return sharedtest.TempCopy(t, sharedtest.PiSession(t, name))
}

// eachFixture runs f in a subtest for each real pi session, with a new
// CLI and a copy of the session that f may change.
func eachFixture(t *testing.T, f func(t *testing.T, c *cli, file string)) {
	t.Helper()
	sharedtest.EachPiSession(t, func(t *testing.T, name string) {
		f(t, newCLI(t), fixture(t, name))
	})
}

// unchanged stops the test when the file at path no longer holds
// before, saying that what (a command, a run) changed it.
func unchanged(t *testing.T, path string, before []byte, what string) {
	t.Helper()
	if !bytes.Equal(before, readFile(t, path)) {
		t.Fatal(what + " changed the file")
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// lineCount counts the newline-terminated lines of a file.
func lineCount(t *testing.T, path string) int {
	t.Helper()
	return bytes.Count(readFile(t, path), []byte("\n"))
}

// open loads a session for checks, failing on any warning.
func open(t *testing.T, path string) *session.Session {
	t.Helper()
	s, err := session.Open(path, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if w := s.Warnings(); len(w) > 0 {
		t.Fatalf("%s: warnings %q", path, w)
	}
	return s
}

// measure is the size of the context at the session's leaf.
func measure(t *testing.T, path string) int {
	t.Helper()
	return compact.Measure(open(t, path).Context()).Tokens
}

// contains fails unless every want is in s.
func contains(t *testing.T, what, s string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("%s does not contain %q:\n%s", what, w, s)
		}
	}
}

// eachCase checks f, named name in the messages, on each input of cases
// against the output given for it.
func eachCase(t *testing.T, name string, f func(string) string, cases map[string]string) {
	t.Helper()
	for in, want := range cases {
		if got := f(in); got != want {
			t.Errorf("%s(%q)\n = %q\nwant %q", name, in, got, want)
		}
	}
}
