package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigErrors checks that every mistake in the configuration file,
// a flag or an environment variable is one line naming the file, line
// and key (or the flag or variable), suggests the known key for a near
// miss, and exits with the usage code 2.
func TestConfigErrors(t *testing.T) {
	file := tinySession(t, "claude-sonnet-4-5", 10)
	for _, tc := range []struct {
		name, config, text string
		args               []string
		env                map[string]string
		// want is the start of the line after "compact: "; FILE stands
		// for the configuration file's path.
		want string
		// whole: the line is want and nothing more.
		whole bool
		// notWant must not be in the line.
		notWant string
	}{
		{name: "YAML unknown key, near miss", config: "c.yaml", text: "policy: reserve\ncompaction:\n  reserv_tokens: 5\n",
			want: `FILE:3: compaction.reserv_tokens: unknown key; did you mean "reserve_tokens"?`, whole: true},
		{name: "YAML unknown top-level key, near miss in another spelling", config: "c.yaml", text: "# settings\nkeepRecentTokenz: 9000\n",
			want: `FILE:2: keepRecentTokenz: unknown key; did you mean "keepRecentTokens"?`, whole: true},
		{name: "JSON unknown key, near miss", config: "c.json", text: "{\n  \"policy\": \"ratio\",\n  \"triggerRatoi\": 0.8\n}\n",
			want: `FILE:3: triggerRatoi: unknown key; did you mean "triggerRatio"?`, whole: true},
		{name: "JSON unknown nested key, near miss", config: "c.json", text: "{\"models\": [\n {\"id\": \"a\", \"contextWindow\": 5000},\n {\"id\": \"b\", \"contextWindw\": 5000}\n]}\n",
			want: `FILE:3: models[1].contextWindw: unknown key; did you mean "contextWindow"?`, whole: true},
		{name: "YAML key in another case", config: "c.yaml", text: "Window: 50000\n",
			want: `FILE:1: Window: unknown key; did you mean "window"?`, whole: true},
		{name: "YAML unknown key, no near miss", config: "c.yaml", text: "window: 50000\nfrobnicate: 1\n",
			want: "FILE:2: frobnicate: unknown key (known keys here: policy, ", notWant: "did you mean"},
		{name: "JSON unknown key, no near miss", config: "c.json", text: "{\"frobnicate\": 1}",
			want: "FILE:1: frobnicate: unknown key (known keys here: policy, ", notWant: "did you mean"},
		{name: "YAML wrong type", config: "c.yaml", text: "policy: reserve\ncompaction:\n  context_window: lots\n",
			want: `FILE:3: compaction.context_window: "lots" is not a whole number`, whole: true},
		{name: "JSON repeated key", config: "c.json", text: "{\n  \"window\": 50000,\n  \"window\": 60000\n}\n",
			want: "FILE:3: window: key already written on line 2", whole: true},
		{name: "JSON repeated key in another case", config: "c.json", text: "{\"window\": 50000,\n\"Window\": 60000}\n",
			want: "FILE:2: Window: key already written on line 1", whole: true},
		{name: "JSON repeated nested key", config: "c.json", text: "{\"models\": [\n {\"id\": \"a\", \"contextWindow\": 5000},\n {\"id\": \"b\", \"contextWindow\": 5000, \"id\": \"c\"}\n]}\n",
			want: "FILE:3: models[1].id: key already written on line 3", whole: true},
		{name: "JSON wrong type", config: "c.json", text: "{\n  \"window\": \"big\"\n}\n",
			want: "FILE:2: window: want a whole number, got string", whole: true},
		{name: "JSON wrong duration", config: "c.json", text: "{\n  \"summarizer\": \"openai\",\n  \"timeout\": \"soon\"\n}\n",
			want: `FILE:3: timeout: "soon" is not a duration such as "90s" or "2m"`, whole: true},
		{name: "YAML negative window", config: "c.yaml", text: "policy: reserve\nwindow: -5\n",
			want: "FILE:2: window: must be at least 1,024 tokens, got -5", whole: true},
		{name: "YAML negative window in the block", config: "c.yaml", text: "compaction:\n  enabled: true\n  context_window: -5\n",
			want: "FILE:3: compaction.context_window: must be at least 1,024 tokens, got -5", whole: true},
		{name: "JSON apiKey of the wrong type keeps its problem", config: "c.json", text: "{\n  \"apiKey\": 5\n}\n",
			want: "FILE:2: apiKey: want text, got number", whole: true},
		{name: "YAML key shaped like a secret is redacted", config: "c.yaml", text: "sk-proj-abcdefghijklmnop: 1\n",
			want: "FILE:1: REDACTED: unknown key", notWant: "abcdefghijklmnop"},
		{name: "JSON negative window", config: "c.json", text: "{\n  \"window\": -5\n}\n",
			want: "FILE:2: window: must be at least 1,024 tokens, got -5", whole: true},
		{name: "JSON negative reserve", config: "c.json", text: "{\"keepRecentTokens\": 100,\n\"reserveTokens\": -1}\n",
			want: "FILE:2: reserveTokens: must be a positive number of tokens, got -1", whole: true},
		{name: "YAML bad summarizer", config: "c.yaml", text: "window: 50000\nsummarizer: gpt\n",
			want: `FILE:2: summarizer: "gpt": want extractive, openai or anthropic`, whole: true},
		{name: "YAML unknown policy", config: "c.yaml", text: "window: 50000\npolicy: often\n",
			want: `FILE:2: policy: unknown policy "often"; want default, reserve, ratio or input`, whole: true},
		{name: "YAML ratio out of range", config: "c.yaml", text: "policy: ratio\ntriggerRatio: 1.5\n",
			want: "FILE:2: triggerRatio: must be in (0, 1], got 1.5", whole: true},
		{name: "YAML syntax", config: "c.yaml", text: "window: 50000\npolicy: [ratio\n",
			want: "FILE:2: policy: "},
		{name: "JSON syntax", config: "c.json", text: "{\n  \"window\": 50000,\n  \"policy\": \"ratio\",,\n}\n",
			want: "FILE:3: policy: invalid JSON: "},
		{name: "flag window", args: []string{"--window", "-5"},
			want: "--window: must be at least 1,024 tokens, got -5", whole: true},
		{name: "flag not a number", args: []string{"--window", "abc"},
			want: `--window: "abc" is not a whole number`, whole: true},
		{name: "flag not a whole number", args: []string{"--reserve", "1.5"},
			want: `--reserve: "1.5" is not a whole number`, whole: true},
		{name: "flag not a yes or no", args: []string{"--json=maybe"},
			want: `--json: "maybe" is not true or false`, whole: true},
		{name: "flag policy", args: []string{"--policy", "often"},
			want: `--policy: unknown policy "often"; want default, reserve, ratio or input`, whole: true},
		{name: "flag missing file", args: []string{"--config", "absent.yaml"},
			want: "--config: open absent.yaml: "},
		{name: "variable not a yes or no", env: map[string]string{"COMPACT_DISABLE_AUTO": "maybe"},
			want: `COMPACT_DISABLE_AUTO: "maybe" is not 1, true, yes, on (automatic compaction off) or 0, false, no, off (on)`, whole: true},
		{name: "variable missing file", env: map[string]string{"COMPACT_CONFIG": "absent.yaml"},
			want: "COMPACT_CONFIG: open absent.yaml: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCLI(t)
			for k, v := range tc.env {
				c.env[k] = v
			}
			args := append([]string{"inspect"}, tc.args...)
			want := tc.want
			if tc.config != "" {
				cfg := filepath.Join(t.TempDir(), tc.config)
				writeFile(t, cfg, tc.text)
				args = append(args, "--config", cfg)
				want = strings.ReplaceAll(want, "FILE", cfg)
			}
			r := c.run(append(args, file)...)
			if r.code != exitUsage {
				t.Errorf("exit %d, want %d (stderr %q)", r.code, exitUsage, r.stderr)
			}
			line, ok := strings.CutSuffix(r.stderr, "\n")
			if !ok || strings.Contains(line, "\n") {
				t.Errorf("stderr is not one line: %q", r.stderr)
			}
			msg, _ := strings.CutPrefix(line, "compact: ")
			if tc.whole && msg != want || !strings.HasPrefix(msg, want) {
				t.Errorf("stderr\n%q\nwant\n%q", msg, want)
			}
			if tc.notWant != "" && strings.Contains(msg, tc.notWant) {
				t.Errorf("stderr %q has %q", msg, tc.notWant)
			}
		})
	}
}

// TestNearest checks the suggestion for a misspelt key.
func TestNearest(t *testing.T) {
	known := []string{"policy", "reserveTokens", "window", "model", "models", "context_window", "reserve_tokens"}
	for _, tc := range []struct{ key, want string }{
		{"windw", "window"},
		{"Window", "window"},
		{"reserv_tokens", "reserve_tokens"},
		{"reservetokens", "reserveTokens"},
		{"modle", "model"},
		{"modelz", "model"},
		{"context-window", "context_window"},
		{"polcy", "policy"},
		{"frobnicate", ""},
		{"wi", ""},   // too short to guess from
		{"xy", ""},   // as far from every key as its length
		{"keep", ""}, // a prefix is not a misspelling
	} {
		if got := nearest(tc.key, known); got != tc.want {
			t.Errorf("nearest(%q) = %q, want %q", tc.key, got, tc.want)
		}
	}
}

// FuzzReadConfig feeds arbitrary bytes to both configuration decoders:
// they never panic, and every error is a usage error with a configError
// that names a line within the file and prints as one line.
func FuzzReadConfig(f *testing.F) {
	for _, s := range []string{
		"{\"window\": 5000}", "{\"models\": [{\"id\": \"a\", \"contextWindw\": 1}]}", "{\"window\": \"x\"}", "{,}", "",
		"compaction:\n  context_window: 5000\n", "policy: [ratio\n", "a: b: c\n", "- 1\n- 2\n", "models:\n  - id: x\n    windw: 3\n",
		"timeout: soon\n", "? complex\n: key\n", "&a x: *a\n", "{\"timeout\": 5}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// A lone CR ends a line for the YAML scanner.
		lines := 1 + strings.Count(string(data), "\n") + strings.Count(string(data), "\r")
		for _, decode := range []func([]byte) (fileConfig, error){decodeJSON, decodeYAML} {
			cfg, err := decode(data)
			if err == nil {
				err = checkConfig(cfg)
			}
			if err == nil {
				continue
			}
			var ue *usageError
			var ce *configError
			if !errors.As(err, &ue) || !errors.As(err, &ce) {
				t.Fatalf("%q: error %v (%T) is not a usage error about the configuration", data, err, err)
			}
			if ce.line < 0 || ce.line > lines {
				t.Errorf("%q: line %d of %d", data, ce.line, lines)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("%q: not one line: %q", data, err)
			}
		}
	})
}
