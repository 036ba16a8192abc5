package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact/internal/testing/sharedtest"
)

// TestRunMemoryLog: --memory-log (or the memoryLog key) appends one dated
// section per compaction, never rewriting what is there; a log that
// cannot be written is refused before anything is compacted.
func TestRunMemoryLog(t *testing.T) {
	file := sharedtest.TempCopy(t, demoSession)
	dir := t.TempDir()
	mem := filepath.Join(dir, "memory.md")
	c := newCLI(t)
	out := c.ok("run", "--memory-log", mem, file)
	contains(t, "run --memory-log", out, "summary appended to the memory log "+mem)
	first, err := os.ReadFile(mem)
	if err != nil {
		t.Fatal(err)
	}
	contains(t, "memory log", string(first), " · "+file+" · manual\n", "- tokens: ", "- summarizer: extractive", "### ")

	// The second compaction, through the configuration file, comes after.
	cfg := filepath.Join(dir, "config.json")
	os.WriteFile(cfg, []byte(`{"memoryLog": "`+mem+`"}`), 0o644)
	c.env["COMPACT_CONFIG"] = cfg
	c.ok("run", "--keep-recent", "2000", file)
	second, err := os.ReadFile(mem)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(second), string(first)) || strings.Count(string(second), "\n## ") != 1 || !strings.HasPrefix(string(second), "## ") {
		t.Errorf("the second compaction did not append one section after the first:\n%s", second)
	}

	// A folder that does not exist: refused, the session untouched.
	before, _ := os.ReadFile(file)
	msg := c.fails(2, "run", "--memory-log", filepath.Join(dir, "missing", "memory.md"), file)
	contains(t, "missing folder", msg, "--memory-log", "does not exist")
	after, _ := os.ReadFile(file)
	if string(before) != string(after) {
		t.Error("the session changed although the memory log was refused")
	}
	// --dry-run writes no memory.
	c.ok("run", "--dry-run", "--memory-log", filepath.Join(dir, "dry.md"), file)
	if _, err := os.Stat(filepath.Join(dir, "dry.md")); err == nil {
		t.Error("--dry-run wrote a memory log")
	}
}
