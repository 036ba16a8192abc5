package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/sharedtest"
)

// failingLog lets the first ok appends through and fails the others.
type failingLog struct {
	compact.Log
	ok int
}

var errInjected = errors.New("injected write failure")

func (l *failingLog) Append(ctx context.Context, e *compact.Entry) error {
	if l.ok == 0 {
		return errInjected
	}
	l.ok--
	return l.Log.Append(ctx, e)
}

// TestPrunePartialFailure makes the second pass's append fail: the first
// pass stays in the file, and the output, the JSON report and the error
// line say exactly which entry was written.
func TestPrunePartialFailure(t *testing.T) {
	for _, jsonOut := range []bool{false, true} {
		c := newCLI(t)
		c.wrapLog = func(l compact.Log) compact.Log { return &failingLog{Log: l, ok: 1} }
		file := fixture(t, "large-session.jsonl")
		before := len(open(t, file).Entries())
		args := []string{"prune", "--strategy", "mask,truncate", file}
		if jsonOut {
			args = append(args, "--json")
		}
		r := c.run(args...)
		if r.code != exitFailure {
			t.Fatalf("json %v: exit %d, stderr %q", jsonOut, r.code, r.stderr)
		}
		entries := open(t, file).Entries()
		if len(entries) != before+1 || entries[before].Kind != compact.KindContextEdit {
			t.Fatalf("json %v: %d entries appended, want the one mask pass", jsonOut, len(entries)-before)
		}
		id := entries[before].ID
		contains(t, "error line", r.stderr, "injected write failure", "the pass recorded before the failure stays in the file", id+" (mask)")
		if strings.Contains(r.stderr, "nothing was written") || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("json %v: stderr %q", jsonOut, r.stderr)
		}
		if jsonOut {
			var pr pruneReport
			if err := json.Unmarshal([]byte(r.stdout), &pr); err != nil {
				t.Fatalf("stdout is not the JSON report: %v\n%s", err, r.stdout)
			}
			if len(pr.Passes) != 1 || pr.Passes[0].EntryID != id || !strings.Contains(pr.Error, "injected") {
				t.Errorf("JSON report %+v", pr)
			}
		} else {
			contains(t, "human", r.stdout, "pruned "+file+" in part", "truncate         not recorded:", "appended 1 context_edit entry to "+file+": "+id+" (mask)")
		}
	}

	// A failure on the first pass writes nothing, and says so.
	c := newCLI(t)
	c.wrapLog = func(l compact.Log) compact.Log { return &failingLog{Log: l} }
	file := fixture(t, "large-session.jsonl")
	before := readFile(t, file)
	msg := c.fails(exitFailure, "prune", "--strategy", "mask,truncate", file)
	contains(t, "first pass fails", msg, "nothing was written")
	if string(readFile(t, file)) != string(before) {
		t.Error("the file changed")
	}
}

// TestSettingsOutOfRange checks that settings that make no sense are
// refused with a usage error naming the flag or the configuration key
// and the allowed range.
func TestSettingsOutOfRange(t *testing.T) {
	file := tinySession(t, "claude-sonnet-4-5", 10)
	dir := t.TempDir()
	for _, tc := range []struct {
		name, config string
		args         []string
		want         []string
	}{
		{"window flag", "", []string{"--window", "1000"}, []string{"--window", "at least 1,024", "1,000"}},
		{"window key", `{"window": 512}`, nil, []string{"window-key.json:1: window: must be at least 1,024"}},
		{"reserve flag", "", []string{"--window", "8000", "--reserve", "8000"}, []string{"--reserve", "smaller than the window (8,000 tokens)"}},
		{"reserve key", `{"window": 8000, "reserveTokens": 9000}`, nil, []string{"reserveTokens", "smaller than", "window"}},
		{"keep flag", "", []string{"--window", "8000", "--keep-recent", "8000"}, []string{"--keep-recent", "smaller than the window (8,000 tokens)"}},
		{"keep key", `{"keepRecentTokens": 30000}`, []string{"--window", "20000"}, []string{"keep-key.json:1: keepRecentTokens: 30,000 tokens must be smaller than the window (20,000 tokens)"}},
		{"reserve over registry window", "", []string{"--reserve", "250000"}, []string{"--reserve: 250,000 tokens must be smaller than the 200,000-token context window", "claude-sonnet-4-5"}},
		{"keep key over registry window", `{"keepRecentTokens": 200000}`, nil, []string{":1: keepRecentTokens: 200,000 tokens must be smaller than the 200,000-token context window"}},
		{"trigger above 1", `{"triggerRatio": 1.5}`, nil, []string{"triggerRatio", "(0, 1]", "1.5"}},
		{"target negative", `{"targetRatio": -0.2}`, nil, []string{"targetRatio", "(0, 1]"}},
		{"target zero", `{"targetRatio": 0}`, nil, []string{"targetRatio", "(0, 1]", "got 0"}},
		{"target above trigger", `{"policy": "ratio", "triggerRatio": 0.6, "targetRatio": 0.7}`, nil, []string{":1: targetRatio: 0.7 is above triggerRatio 0.6"}},
		// The default policy scales its reserve down and keeps its target
		// under half the trigger; pi's reserve rule takes them as given.
		{"reserve trigger below target", `{"policy": "reserve"}`, []string{"--window", "8000", "--reserve", "7500"}, []string{"--reserve: 7,500 tokens leave a trigger of 500 tokens, below the compaction target of 4,000", "at most 4,000"}},
		{"reserve key trigger below target", `{"policy": "reserve", "reserveTokens": 150000}`, nil, []string{":1: reserveTokens: 150,000 tokens leave a trigger of 50,000 tokens", "200,000-token window"}},
		{"target ratio over reserve trigger", `{"policy": "reserve", "targetRatio": 0.95}`, nil, []string{"the default reserve (16,384 tokens) leaves a trigger of 183,616 tokens, below the compaction target of 190,000"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCLI(t)
			args := append([]string{"run", "--dry-run"}, tc.args...)
			if tc.config != "" {
				cfg := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
				writeFile(t, cfg, tc.config)
				args = append(args, "--config", cfg)
			}
			contains(t, tc.name, c.fails(exitUsage, append(args, file)...), tc.want...)
		})
	}
	// Values in range still work.
	c := newCLI(t)
	c.ok("inspect", "--window", "1024", file)
	cfg := filepath.Join(dir, "ok.json")
	writeFile(t, cfg, `{"policy": "ratio", "triggerRatio": 0.8, "targetRatio": 0.8}`)
	c.ok("inspect", "--config", cfg, file)
}

// TestDisableAutoEnvWins checks that COMPACT_DISABLE_AUTO overrides the
// configuration file both ways.
func TestDisableAutoEnvWins(t *testing.T) {
	file := tinySession(t, "claude-sonnet-4-5", 10)
	dir := t.TempDir()
	for _, tc := range []struct {
		env, config string
		disabled    bool
	}{
		{"0", `{"disableAuto": true}`, false},
		{"false", `{"disableAuto": true}`, false},
		{"1", `{"disableAuto": false}`, true},
		{"", `{"disableAuto": true}`, true},
	} {
		c := newCLI(t)
		c.env["COMPACT_DISABLE_AUTO"] = tc.env
		cfg := filepath.Join(dir, "c-"+tc.env+".json")
		writeFile(t, cfg, tc.config)
		var ir inspectReport
		c.okJSON(&ir, "inspect", "--json", "--config", cfg, file)
		if ir.Trigger.Disabled != tc.disabled {
			t.Errorf("COMPACT_DISABLE_AUTO=%q with %s: disabled %v", tc.env, tc.config, ir.Trigger.Disabled)
		}
	}
}

// TestVersion checks --version and its build-info fallbacks.
func TestVersion(t *testing.T) {
	out := newCLI(t).ok("--version")
	if !regexp.MustCompile(`^compact \S`).MatchString(out) {
		t.Errorf("--version printed %q", out)
	}
	for _, tc := range []struct {
		bi   *debug.BuildInfo
		want string
	}{
		{nil, "(devel)"},
		{&debug.BuildInfo{Main: debug.Module{Version: ""}}, "(devel)"},
		{&debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}}, "v1.2.0 (commit 0123456789ab, modified)"},
	} {
		got := version(func() (*debug.BuildInfo, bool) { return tc.bi, tc.bi != nil })
		if got != tc.want {
			t.Errorf("version(%+v) = %q, want %q", tc.bi, got, tc.want)
		}
	}
}

// TestMessageWording checks the error prefixes, the wording of unknown
// ids and that each command's help leaves the global block to the
// program's help.
func TestMessageWording(t *testing.T) {
	c := newCLI(t)
	for _, args := range [][]string{{"run"}, {"run", "--bogus", "x"}, {"tree", "a", "b"}} {
		msg := c.fails(exitUsage, args...)
		if strings.Contains(msg, "compact: compact") {
			t.Errorf("compact %v: doubled prefix in %q", args, msg)
		}
		contains(t, "command named", msg, "compact: "+args[0]+": ")
	}

	file := sharedtest.TempCopy(t, demoSession)
	leaf := c.fails(exitFailure, "run", "--leaf", "nosuchid", file)
	at := c.fails(exitFailure, "fork", file, "--at", "nosuchid", "-o", filepath.Join(t.TempDir(), "out.jsonl"))
	if strings.Replace(leaf, "--leaf", "--at", 1) != at {
		t.Errorf("unknown ids worded differently:\n  %s\n  %s", leaf, at)
	}

	root := c.ok("--help")
	contains(t, "compact --help", root, "Configuration file:", "Exit codes:", "Environment:")
	for _, cmd := range []string{"inspect", "context", "run", "prune", "tree", "fork", "migrate"} {
		help := c.ok(cmd, "--help")
		if strings.Contains(help, "Configuration file:") || strings.Contains(help, "Exit codes:\n  0") {
			t.Errorf("compact %s --help repeats the global block", cmd)
		}
		contains(t, cmd+" --help", help, `described`, `"compact --help"`)
	}
}

// TestGroupDigits checks the thousands separators added to sentences
// that come from the library.
func TestGroupDigits(t *testing.T) {
	eachCase(t, "groupDigits", groupDigits, map[string]string{
		"kept part reduced from ~19945 to ~5275 tokens so that the context fits under 15000": "kept part reduced from ~19,945 to ~5,275 tokens so that the context fits under 15,000",
		"all 12 messages fit in the 20000 tokens kept verbatim.":                             "all 12 messages fit in the 20,000 tokens kept verbatim.",
		"entry 1234abcd, file x/20260/y, 3.14159, v1.2345, 12,345 and 0123 and 987":          "entry 1234abcd, file x/20260/y, 3.14159, v1.2345, 12,345 and 0123 and 987",
		"the 272000-token input limit, not model-20000-tokenizer":                            "the 272,000-token input limit, not model-20000-tokenizer",
	})
	// The headroom adjustment in the human output of run (the default
	// policy's target on a 30,000-token window: half its trigger of
	// 24,000).
	c := newCLI(t)
	out := c.ok("run", "--window", "30000", sharedtest.TempCopy(t, demoSession))
	if !regexp.MustCompile(`adjusted: kept part reduced from ~\d{1,3}(,\d{3})* to ~\d{1,3}(,\d{3})* tokens so that the context fits under 12,000`).MatchString(out) {
		t.Errorf("run output:\n%s", out)
	}
}

// TestFirstKeptIndexV1 checks, on a version 1 file, that the JSON and
// the human output give the same firstKeptEntryIndex (counted from 0
// without the header, as session.Index), and that the human output says
// how it counts, since the index stored in a version 1 compaction line
// counts the header and so is one more.
func TestFirstKeptIndexV1(t *testing.T) {
	c := newCLI(t)
	file := fixture(t, "large-session.jsonl")
	dry := c.dryRun(file)
	human := c.ok("run", "--dry-run", file)
	contains(t, "human plan", human, fmt.Sprintf("keeps entry %s (entry index %d, from 0, header not counted)", dry.FirstKeptEntryID, dry.FirstKeptEntryIndex))

	var rr runReport
	c.okJSON(&rr, "run", "--json", file)
	if rr.FirstKeptEntryIndex != dry.FirstKeptEntryIndex || rr.FirstKeptEntryIndex != open(t, file).Index(rr.FirstKeptEntryID) {
		t.Errorf("run --json: index %d, dry run %d", rr.FirstKeptEntryIndex, dry.FirstKeptEntryIndex)
	}
	contains(t, "tree", c.ok("tree", file), fmt.Sprintf("keeps from %s (#%d) on", rr.FirstKeptEntryID, rr.FirstKeptEntryIndex))
	lines := strings.Split(strings.TrimSpace(string(readFile(t, file))), "\n")
	var stored struct {
		FirstKeptEntryIndex int `json:"firstKeptEntryIndex"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &stored); err != nil {
		t.Fatal(err)
	}
	if stored.FirstKeptEntryIndex != rr.FirstKeptEntryIndex+1 {
		t.Errorf("stored version 1 index %d, reported %d: want one more (the header counts)", stored.FirstKeptEntryIndex, rr.FirstKeptEntryIndex)
	}
}

// TestNoTempNamesInErrors checks that the temporary file a write goes
// through never reaches an error line.
func TestNoTempNamesInErrors(t *testing.T) {
	eachCase(t, "hideTempNames", hideTempNames, map[string]string{
		"open /d/.s.jsonl.tmp-123456: permission denied":     "open a temporary file beside /d/s.jsonl: permission denied",
		"rename .s.jsonl.tmp-42 s.jsonl: file exists":        "rename a temporary file beside s.jsonl s.jsonl: file exists",
		"write /a/b/.x.jsonl.tmp-9: no space left on device": "write a temporary file beside /a/b/x.jsonl: no space left on device",
		"createtemp /a/.x.jsonl.tmp-*: not a directory":      "createtemp a temporary file beside /a/x.jsonl: not a directory",
		"s.jsonl: --at \"x.tmp-1\": no such entry":           "s.jsonl: --at \"x.tmp-1\": no such entry",
	})
	// A file where the output's directory should be: creating the
	// temporary file fails.
	dir := filepath.Join(t.TempDir(), "notadir")
	writeFile(t, dir, "x")
	c := newCLI(t)
	file := sharedtest.TempCopy(t, demoSession)
	at := open(t, file).Entries()[2].ID
	msg := c.fails(exitFailure, "fork", file, "--at", at, "-o", filepath.Join(dir, "out.jsonl"))
	if strings.Contains(msg, ".tmp-") {
		t.Errorf("error names a temporary file: %s", msg)
	}
}
