// Package sharedtest finds the session files that tests of several
// packages share: the real agent sessions written by other tools, kept
// outside the repository in a folder beside the clone
// (../shared/testdata from the module root) or wherever the
// COMPACT_TESTDATA environment variable names, and the demo session
// shipped in the repository (examples/sessions/demo.jsonl). TempCopy and
// DemoCopy give a test or an example a copy it may write.
//
// Every package's tests find the folder through this one rule, so that a
// test in a nested package does not count "../" by hand and all of them
// treat a missing folder the same way: skipped when the folder is simply
// not there, a failure when COMPACT_TESTDATA names a folder that is not
// there (CI names it, and a typo there must not turn into a silent skip).
package sharedtest

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Env is the environment variable that names the shared test data folder.
const Env = "COMPACT_TESTDATA"

// Lookup returns the shared test data folder and whether Env named it.
// Without Env it is ../shared/testdata beside the module root (the folder
// of the go.mod of github.com/compactkit/compact at or above the working
// directory, so that the nested module bench/decoders finds it too). The
// error says why the folder holds no pi sessions; dir is returned either
// way, for messages.
func Lookup() (dir string, explicit bool, err error) {
	dir = os.Getenv(Env)
	explicit = dir != ""
	if !explicit {
		root, rerr := moduleRoot()
		if rerr != nil {
			return "", false, rerr
		}
		dir = filepath.Join(root, "..", "shared", "testdata")
	}
	if _, err := os.Stat(filepath.Join(dir, "sessions", "pi")); err != nil {
		return dir, explicit, err
	}
	return dir, explicit, nil
}

// Dir returns the shared test data folder. It skips the test when the
// folder is not beside the clone, and fails it when Env names a folder
// without pi sessions.
func Dir(tb testing.TB) string {
	tb.Helper()
	dir, explicit, err := Lookup()
	if err != nil {
		if explicit {
			tb.Fatalf("%s=%s: %v", Env, dir, err)
		}
		tb.Skipf("real sessions not found in %s (put ../shared beside the clone or set %s): %v", dir, Env, err)
	}
	return dir
}

// PiSessions returns the names of the real pi sessions in the shared
// folder (sessions/pi): large-session.jsonl (1,018 entries, no
// compaction) and before-compaction.jsonl (1,002 entries, two
// compactions written by pi). Tests that run on every real session range
// over it.
func PiSessions() []string {
	return []string{"large-session.jsonl", "before-compaction.jsonl"}
}

// EachPiSession runs fn as a subtest of t named after each real pi
// session (see PiSessions); fn gets the session's name.
func EachPiSession(t *testing.T, fn func(t *testing.T, name string)) {
	t.Helper()
	for _, name := range PiSessions() {
		t.Run(name, func(t *testing.T) { fn(t, name) })
	}
}

// BenchEnv is the environment variable that names the session files the
// benchmarks run on, separated like PATH (":" on Unix).
// scripts/bench-vs-pi.sh sets it so that pi and compact time the same
// files.
const BenchEnv = "COMPACT_BENCH_FILES"

// BenchFiles returns the session files the benchmarks run on: those
// BenchEnv lists, else the real pi sessions (see PiSessions and
// PiSession).
func BenchFiles(tb testing.TB) []string {
	tb.Helper()
	if list := os.Getenv(BenchEnv); list != "" {
		return filepath.SplitList(list)
	}
	return PiSessionPaths(tb)
}

// PiSessionPaths returns the paths of the real pi sessions (see
// PiSessions), found as PiSession finds each.
func PiSessionPaths(tb testing.TB) []string {
	tb.Helper()
	names := PiSessions()
	paths := make([]string, len(names))
	for i, name := range names {
		paths[i] = PiSession(tb, name)
	}
	return paths
}

// EachBenchFile runs fn as a sub-benchmark of b named after the base name
// of each of BenchFiles; fn gets the file's path.
func EachBenchFile(b *testing.B, fn func(b *testing.B, path string)) {
	b.Helper()
	for _, path := range BenchFiles(b) {
		b.Run(filepath.Base(path), func(b *testing.B) { fn(b, path) })
	}
}

// PiSession returns the path of the real pi session file name (such as
// "before-compaction.jsonl"). Like Dir, it skips the test when the file
// is missing from a folder found beside the clone, and fails it when the
// folder was named by Env. The file is shared by every test: read it, or
// copy it before writing.
func PiSession(tb testing.TB, name string) string {
	tb.Helper()
	p := filepath.Join(Dir(tb), "sessions", "pi", name)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv(Env) != "" {
			tb.Fatalf("%s: %v", Env, err)
		}
		tb.Skipf("real session %s missing (set %s): %v", name, Env, err)
	}
	return p
}

// DemoPath returns the path of the demo session shipped in the
// repository, examples/sessions/demo.jsonl. Tests must not write it: see
// TempCopy.
func DemoPath(tb testing.TB) string {
	tb.Helper()
	p, err := demoPath()
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// TempCopy copies the file src into a new temporary folder of the test,
// under the same base name, and returns the copy's path: a session the
// test may write without touching the original.
func TempCopy(tb testing.TB, src string) string {
	tb.Helper()
	p, err := copyInto(tb.TempDir(), src)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// DemoCopy is TempCopy of the demo session for testable examples, which
// have no testing.TB: it copies the demo into a new temporary folder and
// returns the copy's path and a function that removes the folder. It
// stops the program with log.Fatal when the copy cannot be made, as
// tb.Fatal stops a test.
func DemoCopy() (path string, remove func()) {
	src, err := demoPath()
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "compact-example-")
	if err != nil {
		log.Fatal(err)
	}
	if path, err = copyInto(dir, src); err != nil {
		os.RemoveAll(dir)
		log.Fatal(err)
	}
	return path, func() { os.RemoveAll(dir) }
}

// demoPath returns the path of examples/sessions/demo.jsonl.
func demoPath() (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "examples", "sessions", "demo.jsonl"), nil
}

// copyInto copies the file src into the folder dir, under the same base
// name, and returns the copy's path.
func copyInto(dir, src string) (string, error) {
	data, err := os.ReadFile(src)
	if err != nil {
		return "", fmt.Errorf("sharedtest: %w", err)
	}
	dst := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		return "", fmt.Errorf("sharedtest: %w", err)
	}
	return dst, nil
}

// modulePath is the path of the module whose root holds examples/ and
// sits beside ../shared; nested modules (bench/decoders) are passed over.
const modulePath = "github.com/compactkit/compact"

// moduleRoot returns the folder of this module's go.mod: the nearest one
// at or above the working directory that declares modulePath.
func moduleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("sharedtest: %w", err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && declares(data, modulePath) {
			return dir, nil
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("sharedtest: %w", err)
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("sharedtest: no go.mod of %s at or above %s", modulePath, wd)
		}
	}
}

// declares reports whether the go.mod text gomod declares the module path.
func declares(gomod []byte, path string) bool {
	for line := range strings.Lines(string(gomod)) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" && strings.Trim(f[1], `"`) == path {
			return true
		}
	}
	return false
}
