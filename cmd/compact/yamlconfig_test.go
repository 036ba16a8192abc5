package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact/internal/testing/sharedtest"
)

func TestYAMLConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Run("note shape and other keys", func(t *testing.T) {
		cfg, err := readConfig(write("a.yaml", `# the design note's block
compaction:
  enabled: false
  context_window: 200000
  reserve_tokens: 8000
  keep_recent_tokens: 12000
context_window: 100000
policy: ratio
triggerRatio: 0.8
summarizer: openai
summaryModel: m
timeout: 90s
memoryLog: /tmp/memory.md
listen: 127.0.0.1:9999
models:
  - id: local
    contextWindow: 32768
`))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Window != 200000 || cfg.ReserveTokens != 8000 || cfg.KeepRecentTokens != 12000 || !cfg.DisableAuto ||
			cfg.Policy != "ratio" || cfg.TriggerRatio != 0.8 || cfg.Summarizer != "openai" || time.Duration(cfg.Timeout) != 90*time.Second ||
			cfg.MemoryLog != "/tmp/memory.md" || cfg.Listen != "127.0.0.1:9999" || len(cfg.Models) != 1 || cfg.Models[0].ContextWindow != 32768 {
			t.Errorf("decoded %+v", cfg)
		}
	})
	for _, tc := range []struct {
		name, text string
		window     int
		auto       bool
	}{
		{"top-level context_window", "context_window: 100000\n", 100000, true},
		{"window key", "window: 50000\n", 50000, true},
		{"compaction wins", "context_window: 100000\ncompaction:\n  context_window: 64000\n  enabled: true\n", 64000, true},
		{"none: the registry decides", "compaction:\n  reserve_tokens: 100\n", 0, true},
		{"empty file", "", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := readConfig(write("c.yml", tc.text))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Window != tc.window || cfg.DisableAuto == tc.auto {
				t.Errorf("window %d, auto %v; want %d, %v", cfg.Window, !cfg.DisableAuto, tc.window, tc.auto)
			}
		})
	}
	for _, tc := range []struct {
		name, text, want string
	}{
		{"unknown key", "policy: reserve\n\nreserv_tokens: 5\n", "e.yaml:3: reserv_tokens: unknown key"},
		{"unknown key in the block", "compaction:\n  enabled: true\n  windw: 5\n", "e.yaml:3: compaction.windw: unknown key"},
		{"wrong type", "compaction:\n  reserve_tokens: lots\n", "e.yaml:2:"},
		{"syntax", "policy: [reserve\n", "e.yaml:"},
		{"negative", "compaction:\n  keep_recent_tokens: -1\n", "e.yaml:2: compaction.keep_recent_tokens: must be a positive number of tokens, got -1"},
		{"bad summarizer value", "timeout: soon\n", "e.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readConfig(write("e.yaml", tc.text))
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q, want one line with %q", err, tc.want)
			}
		})
	}
}

// TestYAMLConfigFound: without config.json, config.yaml in the
// configuration folder is read.
func TestYAMLConfigFound(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "compact"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(home, "compact", "config.yaml"), []byte("compaction:\n  context_window: 77777\n"), 0o644)
	c := newCLI(t)
	c.env["XDG_CONFIG_HOME"] = home
	out := c.ok("inspect", sharedtest.TempCopy(t, demoSession))
	contains(t, "inspect with config.yaml", out, "77,777")
	// config.json, when there too, comes first.
	os.WriteFile(filepath.Join(home, "compact", "config.json"), []byte(`{"window": 55555}`), 0o644)
	out = c.ok("inspect", sharedtest.TempCopy(t, demoSession))
	contains(t, "inspect with both", out, "55,555")
}
