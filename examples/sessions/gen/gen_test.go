package main

import (
	"bytes"
	"os"
	"regexp"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/session"
)

const demoPath = "../demo.jsonl"

// TestDemoUpToDate checks that the shipped session is what the generator
// writes, and that the generator is deterministic.
func TestDemoUpToDate(t *testing.T) {
	got := build()
	if !bytes.Equal(got, build()) {
		t.Fatal("two runs of the generator differ")
	}
	want, err := os.ReadFile(demoPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("examples/sessions/demo.jsonl is stale: run go run ./examples/sessions/gen > examples/sessions/demo.jsonl")
	}
}

// TestDemoLoads checks the session against what the example promises: a
// clean version 3 file with usage on every assistant message, a failed
// tool call, and enough history for a default compaction.
func TestDemoLoads(t *testing.T) {
	var warnings []string
	s, err := session.Open(demoPath, session.Options{Warn: func(m string) { warnings = append(warnings, m) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) > 0 || len(s.Warnings()) > 0 {
		t.Fatalf("warnings: %q", warnings)
	}
	if v := s.Header().Version; v != 3 {
		t.Errorf("version %d, want 3", v)
	}
	entries := s.Entries()
	if n := len(entries); n < 40 || n > 80 {
		t.Errorf("%d entries, want 40 to 80", n)
	}
	hex8 := regexp.MustCompile(`^[0-9a-f]{8}$`)
	failed := 0
	tools := map[string]bool{}
	for i, e := range entries {
		if !hex8.MatchString(e.ID) {
			t.Errorf("entry %d: id %q is not 8 hex digits", i, e.ID)
		}
		if i > 0 && e.ParentID != entries[i-1].ID {
			t.Errorf("entry %d: parent %q, want the previous entry %q", i, e.ParentID, entries[i-1].ID)
		}
		m := e.Message
		if m == nil {
			continue
		}
		switch m.Role {
		case compact.RoleAssistant:
			if m.Usage == nil || m.Usage.ContextTokens() == 0 || m.Model != "claude-sonnet-4-5" || m.Provider != "anthropic" {
				t.Errorf("entry %s: assistant message without usage or with another model", e.ID)
			}
			for _, c := range m.ToolCalls() {
				tools[c.Name] = true
			}
		case compact.RoleToolResult:
			if m.IsError {
				failed++
			}
		}
	}
	if failed == 0 {
		t.Error("no failed tool result")
	}
	for _, name := range []string{"read", "edit", "write", "bash"} {
		if !tools[name] {
			t.Errorf("no %s tool call", name)
		}
	}
	plan, err := compact.PlanCompaction(s.Path(), compact.PlanOptions{})
	if err != nil {
		t.Fatalf("a default compaction has nothing to do: %v", err)
	}
	if len(plan.Messages) == 0 {
		t.Error("a default compaction summarizes no history before the cut")
	}
}
