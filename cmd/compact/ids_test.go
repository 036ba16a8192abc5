package main

import (
	"path/filepath"
	"testing"
)

// TestIDsAcrossRuns: an entry id that one run of "compact context"
// prints for another agent's file names the same entry in the next run
// (--leaf), and in the pi session "compact import" makes of the file
// (fork --at, pin): readers derive ids from the file, not at random.
func TestIDsAcrossRuns(t *testing.T) {
	for _, file := range []string{
		"../../agents/codex/testdata/pomodoro.jsonl",
		"../../agents/sweagent/testdata/function-calling.traj",
		"../../agents/requestbody/testdata/pi-chat.json",
		"../../agents/openhands/testdata/basic_interactions.json",
	} {
		t.Run(filepath.Base(file), func(t *testing.T) {
			c := newCLI(t)
			var first contextReport
			c.okJSON(&first, "--json", "context", file)
			if len(first.Messages) < 2 {
				t.Fatalf("%d messages", len(first.Messages))
			}
			id := first.Messages[1].EntryID

			var again contextReport
			c.okJSON(&again, "--json", "context", "--leaf", id, file)
			if again.Leaf != id || len(again.Messages) != 2 || again.Messages[1].EntryID != id {
				t.Errorf("context --leaf %s: leaf %s, %d messages", id, again.Leaf, len(again.Messages))
			}
			var whole contextReport
			c.okJSON(&whole, "--json", "context", "--leaf", first.Leaf, file)
			if whole.Leaf != first.Leaf || len(whole.Messages) != len(first.Messages) {
				t.Errorf("context --leaf %s (the first run's leaf): leaf %s, %d messages, want %d", first.Leaf, whole.Leaf, len(whole.Messages), len(first.Messages))
			}

			dir := t.TempDir()
			imported := filepath.Join(dir, "imported.jsonl")
			c.ok("import", file, "-o", imported)
			c.ok("fork", imported, "--at", id, "-o", filepath.Join(dir, "fork.jsonl"))
			c.ok("pin", imported, id)
		})
	}
}
