// Package sharedtest finds the shared test data: real agent sessions
// written by other tools, kept outside the repository in a folder beside
// the clone (../shared/testdata from the module root) or wherever the
// COMPACT_TESTDATA environment variable names.
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
	"os"
	"path/filepath"
	"testing"
)

// Env is the environment variable that names the shared test data folder.
const Env = "COMPACT_TESTDATA"

// Lookup returns the shared test data folder and whether Env named it.
// Without Env it is ../shared/testdata beside the module root, the first
// folder at or above the working directory that holds a go.mod. The
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

// moduleRoot returns the nearest folder at or above the working directory
// that holds a go.mod file.
func moduleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("sharedtest: %w", err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("sharedtest: %w", err)
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("sharedtest: no go.mod at or above %s", wd)
		}
	}
}
