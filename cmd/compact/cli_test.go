package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/sharedtest"
	"github.com/compactkit/compact/session"
)

// TestDemoCommands runs every command, in human and JSON form, on the
// shipped example session.
func TestDemoCommands(t *testing.T) {
	c := newCLI(t)
	file := sharedtest.TempCopy(t, demoSession)
	before := readFile(t, file)

	out := c.ok("inspect", file)
	contains(t, "inspect", out, "claude-sonnet-4-5", "anthropic", "200,000 tokens (from the registry)",
		"reported by the provider on message #", "default policy, threshold 183,616 tokens: would not trigger",
		"by role", "toolResult", "by tool", "read", "bash", "next compaction", "split turn")
	var ir inspectReport
	c.okJSON(&ir, "inspect", "--json", file)
	if ir.Model != "claude-sonnet-4-5" || ir.Window != 200000 || ir.WindowSource != fromRegistry || ir.ModelSource != fromSession {
		t.Errorf("inspect --json: model %q window %d from %q, model from %q", ir.Model, ir.Window, ir.WindowSource, ir.ModelSource)
	}
	if ir.Context.UsageTokens == 0 || ir.Context.LastUsageEntryID == "" || ir.PercentOfWindow == nil {
		t.Errorf("inspect --json: context %+v, percent %v", ir.Context, ir.PercentOfWindow)
	}
	if !ir.Trigger.WindowKnown || ir.Trigger.WouldTrigger || ir.Trigger.Threshold != 200000-16384 {
		t.Errorf("inspect --json: trigger %+v", ir.Trigger)
	}
	if len(ir.ByTool) == 0 || ir.ByTool[0].ResultTokens < ir.ByTool[len(ir.ByTool)-1].ResultTokens {
		t.Errorf("inspect --json: byTool not sorted by tokens: %+v", ir.ByTool)
	}
	next, _ := ir.NextCompaction.(map[string]any)
	if next == nil || next["messagesToSummarize"] == nil {
		t.Errorf("inspect --json: nextCompaction %v", ir.NextCompaction)
	}

	out = c.ok("context", file)
	contains(t, "context", out, "#0 [user] (entry ", "[toolResult bash, error]", "bash({\"command\":", "--full shows everything")
	full := c.ok("context", "--full", file)
	if strings.Contains(full, "--full shows everything") || len(full) <= len(out) {
		t.Error("context --full still shortens messages")
	}
	var cr contextReport
	c.okJSON(&cr, "context", "--json", file)
	if cr.Model != "claude-sonnet-4-5" || len(cr.Messages) != ir.Messages {
		t.Errorf("context --json: model %q, %d messages, inspect said %d", cr.Model, len(cr.Messages), ir.Messages)
	}

	out = c.ok("tree", file)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(open(t, file).Entries()) {
		t.Errorf("tree: %d lines for %d entries", len(lines), len(open(t, file).Entries()))
	}
	chain := regexp.MustCompile(`^[ *] [0-9a-f]{8} `)
	for _, l := range lines {
		if !chain.MatchString(l) {
			t.Errorf("tree: a linear chain must not be indented: %q", l)
		}
	}
	if !strings.HasPrefix(lines[len(lines)-1], "* ") {
		t.Errorf("tree: the leaf is not marked: %q", lines[len(lines)-1])
	}
	contains(t, "tree", out, "[label: ready-for-release]", "model_change", "anthropic/claude-sonnet-4-5")
	var tr treeReport
	c.okJSON(&tr, "tree", "--json", file)
	if len(tr.Entries) != len(lines) || tr.Leaf == "" || !tr.Entries[len(tr.Entries)-1].Leaf {
		t.Errorf("tree --json: %d entries, leaf %q", len(tr.Entries), tr.Leaf)
	}

	out = c.ok("run", "--dry-run", file)
	contains(t, "run --dry-run", out, "dry run of", "nothing was written", "summarizes")
	dry := c.dryRun(file)
	if dry.MessagesToSummarize == 0 || !dry.DryRun || dry.EntryID != "" {
		t.Errorf("run --dry-run --json: %+v", dry)
	}
	unchanged(t, file, before, "inspect, context, tree or a dry run")

	out = c.ok("run", file)
	contains(t, "run", out, "compacted "+file, "tokens before, about", "appended compaction entry", "by extractive")
	if lineCount(t, file) != bytes.Count(before, []byte("\n"))+1 {
		t.Error("run did not append exactly one line")
	}
	if !bytes.HasPrefix(readFile(t, file), before) {
		t.Error("run changed the existing lines")
	}
	// The summary is the first thing the model sees now.
	c.okJSON(&cr, "context", "--json", file)
	var first struct {
		Role    string `json:"role"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(cr.Messages[0].Message, &first); err != nil || first.Role != "compactionSummary" ||
		!strings.Contains(first.Content[0].Text, "<modified-files>") {
		t.Errorf("context --json after run: first message %s", cr.Messages[0].Message)
	}
	contains(t, "context after run", c.ok("context", file), "[compactionSummary, sent as user]", "<summary>")
	contains(t, "tree after run", c.ok("tree", file), "compaction", "keeps from "+dry.FirstKeptEntryID)

	// Right after a compaction there is nothing to do; that is not an error.
	contains(t, "second run", c.ok("run", file), "nothing to compact: ")
	var nothing nothingReport
	c.okJSON(&nothing, "run", "--json", file)
	if !nothing.NothingToCompact || nothing.Reason == "" {
		t.Errorf("run --json with nothing to compact: %+v", nothing)
	}

	// run --json on a fresh copy.
	file2 := sharedtest.TempCopy(t, demoSession)
	var rr runReport
	c.okJSON(&rr, "run", "--json", file2)
	if rr.EntryID == "" || rr.Summary == "" || rr.TokensAfter <= 0 || rr.TokensAfter >= rr.TokensBefore || rr.Summarizer != "extractive" {
		t.Errorf("run --json: entry %q, tokens %d -> %d, summarizer %q", rr.EntryID, rr.TokensBefore, rr.TokensAfter, rr.Summarizer)
	}
	if got := measure(t, file2); got != rr.TokensAfter {
		t.Errorf("measured context after run = %d, run reported %d", got, rr.TokensAfter)
	}

	// fork and migrate.
	forked := filepath.Join(t.TempDir(), "fork.jsonl")
	at := tr.Entries[10].ID
	contains(t, "fork", c.ok("fork", file, "--at", at, "-o", forked), "forked", "(11 entries)")
	if fs := open(t, forked); len(fs.Entries()) != 11 || fs.Leaf() != at {
		t.Errorf("fork: %d entries, leaf %s", len(fs.Entries()), fs.Leaf())
	}
	var fr forkReport
	c.okJSON(&fr, "fork", "--json", file, "--at", at, "-o", forked+"2")
	if fr.Entries != 11 || fr.Output != forked+"2" {
		t.Errorf("fork --json: %+v", fr)
	}
	contains(t, "migrate", c.ok("migrate", file), "already version 3, unchanged")
	var mr migrateReport
	c.okJSON(&mr, "migrate", "--json", file)
	if mr.Migrated || mr.FromVersion != 3 {
		t.Errorf("migrate --json: %+v", mr)
	}
}

// TestRunJSONFields checks the names of the JSON fields that scripts rely
// on.
func TestRunJSONFields(t *testing.T) {
	c := newCLI(t)
	file := sharedtest.TempCopy(t, demoSession)
	var dry map[string]any
	c.okJSON(&dry, "run", "--dry-run", "--json", file)
	for _, k := range []string{"firstKeptEntryIndex", "firstKeptEntryId", "messagesToSummarize", "isSplitTurn",
		"turnPrefixMessages", "tokensBefore", "previousSummary", "readFiles", "modifiedFiles"} {
		if _, ok := dry[k]; !ok {
			t.Errorf("run --dry-run --json has no %q", k)
		}
	}
	var done map[string]any
	c.okJSON(&done, "run", "--json", file)
	for _, k := range []string{"firstKeptEntryIndex", "tokensBefore", "tokensAfter", "summary", "entryId"} {
		if _, ok := done[k]; !ok {
			t.Errorf("run --json has no %q", k)
		}
	}
}

// TestSummaryBudget checks that the summarizer is asked for at most 0.8 x
// the reserve.
func TestSummaryBudget(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{nil, 13107},
		{[]string{"--reserve", "10000"}, 8000},
	} {
		c := newCLI(t)
		var got []int
		c.summarizer = compact.SummarizerFunc(func(ctx context.Context, req *compact.SummaryRequest) (*compact.Summary, error) {
			got = append(got, req.MaxTokens)
			return &compact.Summary{Text: "summary", Summarizer: "test"}, nil
		})
		file := sharedtest.TempCopy(t, demoSession)
		c.ok(append([]string{"run", file}, tc.args...)...)
		if len(got) == 0 {
			t.Fatal("the summarizer was not called")
		}
		// The history gets the whole budget, a split turn's prefix half.
		if got[0] != tc.want || (len(got) > 1 && got[1] != tc.want/2) {
			t.Errorf("%v: MaxTokens %v, want %d (and %d for a turn prefix)", tc.args, got, tc.want, tc.want/2)
		}
	}
}

// TestFailingSummarizer checks that a failed summary leaves the file
// exactly as it was.
func TestFailingSummarizer(t *testing.T) {
	c := newCLI(t)
	c.summarizer = compact.SummarizerFunc(func(ctx context.Context, req *compact.SummaryRequest) (*compact.Summary, error) {
		return nil, errors.New("model unavailable")
	})
	file := sharedtest.TempCopy(t, demoSession)
	msg := c.failsKeeping(file, "run", file)
	contains(t, "error", msg, file, "the file is unchanged", "model unavailable")
	// A cancelled run writes nothing either.
	c.summarizer = compact.SummarizerFunc(func(ctx context.Context, req *compact.SummaryRequest) (*compact.Summary, error) {
		return nil, context.Canceled
	})
	c.failsKeeping(file, "run", file)
}

// TestProgress checks that progress lines appear only for a terminal.
func TestProgress(t *testing.T) {
	c := newCLI(t)
	file := sharedtest.TempCopy(t, demoSession)
	yes := true
	c.progress = &yes
	r := c.run("run", file)
	if r.code != 0 || !strings.Contains(r.stderr, "loading ") || !strings.Contains(r.stderr, "summarizing ") {
		t.Errorf("progress on a terminal: exit %d, stderr %q", r.code, r.stderr)
	}
	c.progress = nil
	file = sharedtest.TempCopy(t, demoSession)
	if r := c.run("run", file); r.stderr != "" {
		t.Errorf("progress written to a non-terminal stderr: %q", r.stderr)
	}
}

// TestErrors checks the exit codes and the one-line messages.
func TestErrors(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	missing := filepath.Join(dir, "nope.jsonl")
	contains(t, "missing file", c.fails(1, "inspect", missing), missing)
	contains(t, "missing file", c.fails(1, "run", missing), missing)

	// A malformed line: the error names the file and line, and run writes
	// nothing.
	demo := string(readFile(t, demoSession))
	lines := strings.SplitAfter(demo, "\n")
	lines[9] = "{\"type\":\"message\",\"id\":\"deadbeef\",oops}\n"
	bad := filepath.Join(dir, "bad.jsonl")
	writeFile(t, bad, strings.Join(lines, ""))
	msg := c.fails(1, "run", bad)
	contains(t, "malformed", msg, bad+":10: malformed line")
	if string(readFile(t, bad)) != strings.Join(lines, "") {
		t.Fatal("run on a malformed file changed it")
	}
	c.fails(1, "inspect", bad)
	// --lenient skips it with a warning.
	r := c.run("inspect", "--lenient", bad)
	if r.code != 0 || !strings.HasPrefix(r.stderr, "compact: warning: ") || !strings.Contains(r.stderr, bad+":10:") {
		t.Errorf("inspect --lenient: exit %d, stderr %q", r.code, r.stderr)
	}

	// Usage errors exit 2.
	contains(t, "unknown flag", c.fails(2, "inspect", "--bogus", demoSession), "unknown flag: --bogus")
	c.fails(2, "inspect")
	c.fails(2, "inspect", demoSession, demoSession)
	c.fails(2, "frobnicate")
	c.fails(2)
	c.fails(2, "fork", demoSession, "-o", filepath.Join(dir, "f.jsonl"))
	c.fails(2, "run", "--keep-recent", "-5", demoSession)
	c.fails(2, "inspect", "--policy", "sometimes", demoSession)
	c.fails(2, "run", "--keep-recent", "many", demoSession)

	// Unknown entry ids.
	contains(t, "unknown leaf", c.fails(1, "inspect", "--leaf", "00000000", demoSession), "--leaf", "00000000")
	c.fails(1, "context", "--leaf", "00000000", demoSession)
	c.fails(1, "run", "--dry-run", "--leaf", "00000000", demoSession)
	c.fails(1, "fork", demoSession, "--at", "00000000", "-o", filepath.Join(dir, "f.jsonl"))

	// fork never overwrites.
	existing := filepath.Join(dir, "existing.jsonl")
	writeFile(t, existing, "keep me\n")
	id := open(t, demoSession).Entries()[5].ID
	contains(t, "fork overwrite", c.fails(1, "fork", demoSession, "--at", id, "-o", existing), existing)
	if string(readFile(t, existing)) != "keep me\n" {
		t.Fatal("fork overwrote an existing file")
	}
}

// TestHelp checks that the help documents flags, defaults, the
// configuration file, the environment and the exit codes, the last three
// only in the program's help.
func TestHelp(t *testing.T) {
	c := newCLI(t)
	root := c.ok("--help")
	contains(t, "compact --help", root, "inspect", "context", "run", "prune", "tree", "fork", "migrate",
		"--json", "--lenient", "--config", "--verbose", "keepRecentTokens", "reserveTokens", "COMPACT_DISABLE_AUTO",
		"COMPACT_CONFIG", "Exit codes", "2  usage error", "models.json", "never triggers",
		"summarizer", "summaryModel", "baseURL", "apiKey", "summaryWindow", "summaryMaxOutput", "timeout", "fallback",
		"OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")
	for cmd, flags := range map[string][]string{
		"inspect": {"--leaf", "--window", "--model", "--reserve", "--keep-recent", "--policy", "(default 16384)", "(default 20000)"},
		"context": {"--leaf", "--full"},
		"run": {"--dry-run", "--keep-recent", "--reserve", "--window", "--model", "--instructions", "--leaf", "0.8 x",
			"--summarizer", "--summary-model", "--base-url", "--summary-window", "--summary-max-output", "--timeout", "--fallback",
			`(default "extractive")`, `(default "none")`, "Retry-After", "written without a model", "target"},
		"prune": {"--strategy", "--target", "--to-target", "--dry-run", "--leaf", "--mask-turns", "--keep-tool-uses", "--clear-inputs",
			"--exclude-tools", "--protect-tools", "--min-free", "strip_images, mask, truncate", "context_edit", "--original", "cache breaks"},
		"tree":    {"--json"},
		"fork":    {"--at", "-o, --output"},
		"migrate": {"version 3"},
	} {
		out := c.ok(cmd, "--help")
		// The configuration, environment and exit codes are described once,
		// in "compact --help" (see TestMessageWording).
		contains(t, cmd+" --help", out, append(flags, `"compact --help"`, "--json", "--lenient", "--config")...)
	}
}

// TestConfig checks the configuration file: where it is found, that
// flags override it, and that unknown keys are refused.
func TestConfig(t *testing.T) {
	dir := t.TempDir()
	file := sharedtest.TempCopy(t, demoSession)
	cfg := filepath.Join(dir, "config.json")
	writeFile(t, cfg, `{"keepRecentTokens": 8000, "reserveTokens": 20000, "policy": "ratio"}`)

	keep := func(c *cli, args ...string) int {
		var r runReport
		c.okJSON(&r, append([]string{"run", "--dry-run", "--json", file}, args...)...)
		return r.KeepRecentTokens
	}
	c := newCLI(t)
	if got := keep(c); got != 20000 {
		t.Errorf("no config: keep %d", got)
	}
	if got := keep(c, "--config", cfg); got != 8000 {
		t.Errorf("--config: keep %d, want 8000", got)
	}
	if got := keep(c, "--config", cfg, "--keep-recent", "12000"); got != 12000 {
		t.Errorf("--keep-recent over the config: keep %d, want 12000", got)
	}
	c.env["COMPACT_CONFIG"] = cfg
	if got := keep(c); got != 8000 {
		t.Errorf("COMPACT_CONFIG: keep %d, want 8000", got)
	}
	var ir inspectReport
	c.okJSON(&ir, "inspect", "--json", file)
	if ir.Trigger.Policy != "ratio" || ir.Trigger.Threshold != 180000 {
		t.Errorf("config policy: %+v", ir.Trigger)
	}

	// The default location under XDG_CONFIG_HOME, then HOME.
	xdg := t.TempDir()
	if err := os.MkdirAll(filepath.Join(xdg, "compact"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(xdg, "compact", "config.json"), `{"keepRecentTokens": 9000}`)
	c = newCLI(t)
	c.env["XDG_CONFIG_HOME"] = xdg
	if got := keep(c); got != 9000 {
		t.Errorf("XDG config: keep %d, want 9000", got)
	}
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".config", "compact"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(home, ".config", "compact", "config.json"), `{"keepRecentTokens": 7000}`)
	c = newCLI(t)
	c.env["HOME"] = home
	if got := keep(c); got != 7000 {
		t.Errorf("~/.config config: keep %d, want 7000", got)
	}
	// A missing default file is fine; a missing named file is not.
	c = newCLI(t)
	c.env["HOME"] = t.TempDir()
	keep(c)
	contains(t, "absent file", c.fails(exitUsage, "inspect", "--config", filepath.Join(dir, "absent.json"), file), "--config: ", "absent.json")

	// Unknown keys name the key.
	writeFile(t, cfg, `{"keepRecentTokens": 8000, "keepRecent": 5}`)
	contains(t, "unknown key", newCLI(t).fails(exitUsage, "inspect", "--config", cfg, file), cfg+":1: keepRecent: unknown key")
	writeFile(t, cfg, `{"models": [{"id": "x", "window": 5}]}`)
	contains(t, "unknown nested key", newCLI(t).fails(exitUsage, "inspect", "--config", cfg, file), cfg+":1: models[0].window: unknown key")
	writeFile(t, cfg, `{"keepRecentTokens": }`)
	contains(t, "bad JSON", newCLI(t).fails(exitUsage, "inspect", "--config", cfg, file), cfg+":1: keepRecentTokens: invalid JSON")
	writeFile(t, cfg, `{"policy": "often"}`)
	contains(t, "bad policy", newCLI(t).fails(exitUsage, "inspect", "--config", cfg, file), cfg+":1: policy: unknown policy")
}

// tinySession writes a small session whose assistant runs on model.
func tinySession(t *testing.T, model string, outputChars int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"type":"session","version":3,"id":"11111111-2222-4333-8444-555555555555","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/tmp"}` + "\n")
	b.WriteString(`{"type":"message","id":"a0000001","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hello","timestamp":1735689601000}}` + "\n")
	fmt.Fprintf(&b, `{"type":"message","id":"a0000002","parentId":"a0000001","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":%q}],"provider":"local","model":%q,"usage":{"input":900,"output":100,"cacheRead":0,"cacheWrite":0,"totalTokens":1000},"stopReason":"stop","timestamp":1735689602000}}`+"\n",
		strings.Repeat("x", outputChars), model)
	path := filepath.Join(t.TempDir(), "tiny.jsonl")
	writeFile(t, path, b.String())
	return path
}

// TestUnknownWindow checks that a model missing from the registry never
// triggers automatic compaction, and that --window fixes that.
func TestUnknownWindow(t *testing.T) {
	c := newCLI(t)
	file := tinySession(t, "mystery-model-9", 40)
	out := c.ok("inspect", file)
	contains(t, "inspect", out, "mystery-model-9", "window    unknown", "automatic compaction never triggers")
	if strings.Contains(out, "would trigger") {
		t.Errorf("an unknown window must never trigger:\n%s", out)
	}
	var ir inspectReport
	c.okJSON(&ir, "inspect", "--json", file)
	if ir.Window != 0 || ir.WindowSource != fromUnknown || ir.Trigger.WindowKnown || ir.Trigger.WouldTrigger || ir.PercentOfWindow != nil {
		t.Errorf("inspect --json: window %d from %q, trigger %+v", ir.Window, ir.WindowSource, ir.Trigger)
	}
	contains(t, "reason", ir.Trigger.Reason, "never triggers")

	// The default policy keeps at most a fifth of the window: 1100 - 220.
	c.okJSON(&ir, "inspect", "--json", "--window", "1100", "--reserve", "500", file)
	if ir.Window != 1100 || ir.WindowSource != fromFlag || !ir.Trigger.WouldTrigger || ir.Trigger.Threshold != 880 {
		t.Errorf("--window 1100: window %d from %q, trigger %+v", ir.Window, ir.WindowSource, ir.Trigger)
	}
	c.okJSON(&ir, "inspect", "--json", "--model", "claude-sonnet-4-5", file)
	if ir.Window != 200000 || ir.ModelSource != fromFlag || ir.WindowSource != fromRegistry {
		t.Errorf("--model: window %d from %q, model from %q", ir.Window, ir.WindowSource, ir.ModelSource)
	}
	cfg := filepath.Join(t.TempDir(), "c.json")
	writeFile(t, cfg, `{"models": [{"id": "mystery-model-9", "contextWindow": 32768}]}`)
	c.okJSON(&ir, "inspect", "--json", "--config", cfg, file)
	if ir.Window != 32768 || ir.WindowSource != fromConfig {
		t.Errorf("config models: window %d from %q", ir.Window, ir.WindowSource)
	}
}

// TestDisableAuto checks that COMPACT_DISABLE_AUTO=1 is reported, and
// that a manual run still compacts.
func TestDisableAuto(t *testing.T) {
	c := newCLI(t)
	c.env["COMPACT_DISABLE_AUTO"] = "1"
	file := tinySession(t, "claude-sonnet-4-5", 10)
	var ir inspectReport
	c.okJSON(&ir, "inspect", "--json", "--window", "1100", "--reserve", "500", file)
	if !ir.Trigger.Disabled || ir.Trigger.WouldTrigger {
		t.Errorf("disabled: trigger %+v", ir.Trigger)
	}
	contains(t, "reason", ir.Trigger.Reason, "disabled", "COMPACT_DISABLE_AUTO", "would trigger")
	contains(t, "inspect", c.ok("inspect", file), "disabled")

	demo := sharedtest.TempCopy(t, demoSession)
	contains(t, "manual run", c.ok("run", demo), "appended compaction entry")
}

// TestTreeBranches checks that branches, and only branches, are
// indented.
func TestTreeBranches(t *testing.T) {
	file := sharedtest.TempCopy(t, demoSession)
	s := open(t, file)
	ids := s.Entries()
	branchAt := ids[20].ID
	if err := s.Branch(branchAt); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessage(context.Background(), compact.TextMessage(compact.RoleUser, "Try it another way instead.")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessage(context.Background(), compact.TextMessage(compact.RoleUser, "And one more message on the branch.")); err != nil {
		t.Fatal(err)
	}
	out := newCLI(t).ok("tree", file)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	var marks, deeper int
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l[2:], "+ "):
			marks++
		case strings.HasPrefix(l[2:], "  "):
			deeper++
		}
		if strings.Contains(l, branchAt) && !strings.Contains(l, "[2 branches]") {
			t.Errorf("the branch point is not marked: %q", l)
		}
	}
	if marks != 2 {
		t.Errorf("%d branch starts marked, want 2:\n%s", marks, out)
	}
	// The first branch holds the rest of the original chain; the second
	// the two new messages.
	if want := len(ids) - 21 + 2 - 2; deeper != want {
		t.Errorf("%d indented lines, want %d:\n%s", deeper, want, out)
	}
	if !strings.Contains(out, "* ") || !strings.Contains(lines[len(lines)-1], "* ") {
		t.Errorf("the leaf (last appended) is not marked last:\n%s", out)
	}
}

// TestReadmeConfigExample decodes the configuration examples of the
// command reference, docs/cli.md, so that the documented keys stay the
// real ones, and checks that the README keeps its two set-up commands.
func TestReadmeConfigExample(t *testing.T) {
	readme := string(readFile(t, "../../README.md"))
	_, rest, ok := strings.Cut(string(readFile(t, "../../docs/cli.md")), "## Configuration file")
	if !ok {
		t.Fatal("docs/cli.md has no configuration section")
	}
	var examples []fileConfig
	for {
		var example string
		var found bool
		if _, rest, found = strings.Cut(rest, "```json\n"); !found {
			break
		}
		if example, rest, found = strings.Cut(rest, "```"); !found {
			t.Fatal("docs/cli.md has an unterminated JSON example")
		}
		path := filepath.Join(t.TempDir(), "config.json")
		writeFile(t, path, example)
		cfg, err := readConfig(path)
		if err != nil {
			t.Fatal(err)
		}
		examples = append(examples, cfg)
	}
	if len(examples) != 3 {
		t.Fatalf("docs/cli.md has %d JSON configuration examples, want 3", len(examples))
	}
	if cfg := examples[2]; cfg.Listen != "127.0.0.1:8787" || cfg.AnthropicUpstream == "" || cfg.OpenAIUpstream == "" || cfg.Store == "" {
		t.Errorf("decoded %+v", cfg.proxyConfig)
	}
	if cfg := examples[0]; cfg.KeepRecentTokens != 20000 || len(cfg.Models) != 1 || cfg.Models[0].ContextWindow != 32768 {
		t.Errorf("decoded %+v", cfg)
	}
	if cfg := examples[1]; cfg.Summarizer != summarizerOpenAI || cfg.SummaryWindow != 32768 || time.Duration(cfg.Timeout) != 5*time.Minute ||
		cfg.Fallback != fallbackExtractive {
		t.Errorf("decoded %+v", cfg.summarizerConfig)
	}
	if !strings.Contains(readme, "cp examples/sessions/demo.jsonl /tmp/demo.jsonl && go run ./cmd/compact run /tmp/demo.jsonl") ||
		!strings.Contains(readme, "go test ./...") {
		t.Error("README lost its two set-up commands")
	}
}

// TestContextOriginal checks that "context" shows a context edit's
// replacement and "context --original" the stored message.
func TestContextOriginal(t *testing.T) {
	c := newCLI(t)
	file := sharedtest.TempCopy(t, demoSession)
	s, err := session.Open(file, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var target *compact.Entry
	for _, e := range s.Path() {
		if e.IsContextMessage() && e.Message.Role == compact.RoleToolResult && len(e.Message.Text()) > 200 {
			target = e
			break
		}
	}
	if target == nil {
		t.Fatal("the example has no long tool result")
	}
	marker := "[output cleared for the test; original in entry " + target.ID + "]"
	edit := &compact.Entry{Kind: compact.KindContextEdit, Edit: &compact.ContextEdit{Strategy: "test",
		Edits: []compact.Edit{{TargetID: target.ID, Content: []compact.Part{{Type: compact.PartText, Text: marker}}}}}}
	if err := s.Append(context.Background(), edit); err != nil {
		t.Fatal(err)
	}
	first := strings.SplitN(target.Message.Text(), "\n", 2)[0]
	edited := c.ok("context", "--full", file)
	contains(t, "edited context", edited, marker)
	if strings.Contains(edited, first) {
		t.Errorf("the edited context still shows the stored output %q", first)
	}
	orig := c.ok("context", "--full", "--original", file)
	contains(t, "original context", orig, first)
	if strings.Contains(orig, marker) {
		t.Error("--original shows the replacement")
	}
}
