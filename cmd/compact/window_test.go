package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestWindowFromTheFile: a window another agent's file records (Codex's
// model_context_window) is used ahead of the registry's, and inspect says
// it came from the file; a flag, or a --model naming another model, still
// wins; and the trigger never lies above the model's input limit.
func TestWindowFromTheFile(t *testing.T) {
	const (
		exec     = "../../agents/codex/testdata/exec-0.135.jsonl" // gpt-5.5, records 258,400
		pomodoro = "../../agents/codex/testdata/pomodoro.jsonl"   // gpt-5-codex, records 272,000
	)
	tests := []struct {
		name      string
		args      []string
		window    int
		source    string
		threshold int
		text      string
	}{
		{"recorded window", []string{exec}, 258400, fromFile, 258400 - 16384, "window    258,400 tokens (from the file)"},
		{"recorded window, another file", []string{pomodoro}, 272000, fromFile, 272000 - 16384, "window    272,000 tokens (from the file)"},
		{"flag wins", []string{"--window", "100000", exec}, 100000, fromFlag, 100000 - 16384, "window    100,000 tokens (from the command line)"},
		{"another model: the registry, under its input limit", []string{"--model", "gpt-5", exec}, 400000, fromRegistry, 272000 - 16384, "threshold 255,616 tokens"},
		{"ratio policy under the input limit", []string{"--model", "gpt-5", "--policy", "ratio", exec}, 400000, fromRegistry, 244800, "window    400,000 tokens (from the registry)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCLI(t)
			var rep inspectReport
			c.okJSON(&rep, append([]string{"--json", "inspect"}, tc.args...)...)
			if rep.Window != tc.window || rep.WindowSource != tc.source || rep.Trigger.Threshold != tc.threshold {
				t.Errorf("window %d from %q, threshold %d; want %d from %q, threshold %d",
					rep.Window, rep.WindowSource, rep.Trigger.Threshold, tc.window, tc.source, tc.threshold)
			}
			if out := c.ok(append([]string{"inspect"}, tc.args...)...); !strings.Contains(out, tc.text) {
				t.Errorf("inspect output lacks %q:\n%s", tc.text, out)
			}
		})
	}
}

// TestReserveRefusalUnderInputLimit: with pi's reserve policy, a reserve
// whose trigger falls below the target is refused with the largest
// reserve that works, measured from the model's input limit, not from its
// larger window. (The default policy scales such a reserve down instead.)
func TestReserveRefusalUnderInputLimit(t *testing.T) {
	file := tinySession(t, "gpt-5", 10)
	cfg := filepath.Join(t.TempDir(), "reserve.json")
	writeFile(t, cfg, `{"policy": "reserve"}`)
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"input limit", []string{"--config", cfg, "--reserve", "200000"}, []string{"--reserve: 200,000 tokens leave a trigger of 72,000 tokens, below the compaction target of 136,000",
			"272,000-token input limit", "at most 136,000 tokens"}},
		{"window below the input limit", []string{"--config", cfg, "--window", "100000", "--reserve", "60000"}, []string{"--reserve: 60,000 tokens leave a trigger of 40,000 tokens, below the compaction target of 50,000",
			"100,000-token window", "at most 50,000 tokens"}},
	} {
		c := newCLI(t)
		contains(t, tc.name, c.fails(exitUsage, append(append([]string{"run", "--dry-run"}, tc.args...), file)...), tc.want...)
	}
}
