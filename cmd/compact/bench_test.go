package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact/internal/testing/sharedtest"
	"github.com/compactkit/compact/retention/handoff"
)

func TestBenchGenerateAndJSON(t *testing.T) {
	c := newCLI(t)
	dir := filepath.Join(t.TempDir(), "needles")
	out := c.ok("bench", "--generate", dir)
	contains(t, "bench --generate", out, "wrote "+filepath.Join(dir, "needles-1.jsonl"), "needles-3.jsonl")
	var gen generateReport
	c.okJSON(&gen, "bench", "--json", "--generate", dir)
	if len(gen.Generated) != 3 {
		t.Fatalf("--generate --json: %+v", gen)
	}
	file := gen.Generated[0]
	before := readFile(t, file)

	// The JSON shape: one object, its keys as documented.
	var raw map[string]json.RawMessage
	c.okJSON(&raw, "bench", "--json", "--keep-recent", "20000,2000", file)
	for _, k := range []string{"summarizer", "keepRecent", "results"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("bench --json: no %q key in %s", k, strings.Join(keys(raw), ", "))
		}
	}
	var rep benchReport
	c.okJSON(&rep, "bench", "--json", "--keep-recent", "20000,2000", file)
	if rep.Summarizer != "extractive" || len(rep.KeepRecent) != 2 || len(rep.Results) != 4 {
		t.Fatalf("bench --json: %+v", rep)
	}
	var row map[string]json.RawMessage
	if err := json.Unmarshal(mustJSON(t, rep.Results[0]), &row); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"session", "method", "keepRecent", "tokensBefore", "tokensAfter", "files", "errors", "identifiers", "userText", "invariants"} {
		if _, ok := row[k]; !ok {
			t.Errorf("a result has no %q key", k)
		}
	}
	for _, r := range rep.Results {
		if r.Session != file || r.Nothing || r.Files.Missing != nil {
			t.Errorf("row %+v (missing lists need --missing)", r)
		}
		if r.Method == "extractive" && (r.Files.Percent() != 100 || r.Errors.Percent() != 100 || r.Identifiers.Percent() != 100 ||
			r.UserText.Percent() != 100 || !r.Invariants.OK()) {
			t.Errorf("a needle was lost: %+v", r)
		}
	}
	if rep.Results[1].Method != "cheap" {
		t.Errorf("the second row is %q, want the cheap strategies", rep.Results[1].Method)
	}

	out = c.ok("bench", "--keep-recent", "2000", "--missing", file)
	contains(t, "bench", out, file, "keep", "method", "extractive", "cheap", "37/37 100%", "ok")
	if strings.Contains(out, "missing at") {
		t.Errorf("bench --missing lists facts although none was lost:\n%s", out)
	}
	if string(readFile(t, file)) != string(before) {
		t.Error("bench changed the session file")
	}
}

func keys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBenchErrors(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	missing := filepath.Join(dir, "none.jsonl")
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte("{not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		code int
		args []string
		want string
	}{
		{exitUsage, []string{"bench"}, "missing the session FILE arguments"},
		{exitUsage, []string{"bench", "--generate", dir, demoSession}, "--generate DIR takes no FILE arguments"},
		{exitUsage, []string{"bench", "--keep-recent", "0", demoSession}, "--keep-recent must be positive"},
		{exitUsage, []string{"bench", "--keep-recent", "x", demoSession}, "--keep-recent"},
		{exitUsage, []string{"bench", "--summary-model", "m", demoSession}, "--summary-model needs --summarizer"},
		{exitUsage, []string{"bench", "--summarizer", "openai", demoSession}, "needs the summary model"},
		{exitFailure, []string{"bench", missing}, "none.jsonl"},
		{exitFailure, []string{"bench", bad}, "bad.jsonl"},
	} {
		msg := c.fails(tt.code, tt.args...)
		if !strings.Contains(msg, tt.want) {
			t.Errorf("compact %s: %q, want it to name %q", strings.Join(tt.args, " "), msg, tt.want)
		}
	}
}

func TestBenchHelp(t *testing.T) {
	out := newCLI(t).ok("bench", "--help")
	contains(t, "bench --help", out, "--keep-recent", "--summarizer", "--summary-model", "--missing", "--generate", "--suite", "superseded",
		"heredocs", "exited 0", "not \"used well by a", "--json")
}

// TestBenchFixtures runs the command on the real sessions at the default
// budgets: the extractive summarizer meets its goals at 20,000 tokens.
func TestBenchFixtures(t *testing.T) {
	c := newCLI(t)
	var files []string
	for _, name := range sharedtest.PiSessions() {
		files = append(files, fixture(t, name))
	}
	var rep benchReport
	c.okJSON(&rep, append([]string{"bench", "--json"}, files...)...)
	if len(rep.Results) != 2*2*3 {
		t.Fatalf("%d rows", len(rep.Results))
	}
	for _, r := range rep.Results {
		if r.Method != "extractive" || r.KeepRecent != 20000 {
			continue
		}
		if r.Files.Percent() < 100 || r.Errors.Percent() < 80 || r.Identifiers.Percent() < 80 || r.UserText.Percent() < 100 || r.Ratio() > 25 {
			t.Errorf("%s: goals not met: %+v", r.Session, r)
		}
	}
	// --missing names what the cheap strategies lost: masked tool output
	// takes the error lines with it.
	out := c.ok("bench", "--keep-recent", "20000", "--missing", files[0])
	contains(t, "bench --missing", out, "missing at keep 20,000 (cheap):", "    error: ")
	if strings.Contains(out, "(extractive):") {
		t.Errorf("the extractive summarizer lost facts at 20,000 on %s:\n%s", files[0], out)
	}
}

// TestBenchOtherAgent benches a Claude Code transcript: the command reads
// the session's entries only, whatever file they came from.
func TestBenchOtherAgent(t *testing.T) {
	c := newCLI(t)
	file := sharedtest.TempCopy(t, "../../agents/claudecode/testdata/pomodoro.jsonl")
	before := readFile(t, file)
	var rep benchReport
	c.okJSON(&rep, "bench", "--json", "--keep-recent", "2000", file)
	if len(rep.Results) != 2 || rep.Results[0].Nothing || rep.Results[0].SpanMessages == 0 || rep.Results[0].UserText.Total == 0 {
		t.Fatalf("bench of a Claude Code transcript: %+v", rep)
	}
	if r := rep.Results[0]; r.Files.Percent() != 100 || r.UserText.Percent() != 100 || !r.Invariants.OK() {
		t.Errorf("extractive on a Claude Code transcript: %+v", r)
	}
	if string(readFile(t, file)) != string(before) {
		t.Error("bench changed the transcript")
	}
}

// TestBenchModelSummarizer benches a model summarizer through the flags
// "compact run" uses for it: the rows are named after the model; the
// planted errors the fake model does not repeat are in the record
// appended to its summary, and missing with --no-ledger.
func TestBenchModelSummarizer(t *testing.T) {
	m := newFakeModel(t, summarizerOpenAI)
	c := newCLI(t)
	c.env[keyVar(summarizerOpenAI)] = "test-key"
	dir := filepath.Join(t.TempDir(), "needles")
	c.ok("bench", "--generate", dir)
	file := filepath.Join(dir, "needles-2.jsonl")
	var rep benchReport
	c.okJSON(&rep, "bench", "--json", "--missing", "--keep-recent", "20000", "--summarizer", summarizerOpenAI,
		"--base-url", m.baseURL(), "--summary-model", "m", "--summary-window", "128000", file)
	if rep.Summarizer != "m" || len(rep.Results) != 2 || rep.Results[0].Method != "m" {
		t.Fatalf("bench with a model: %+v", rep)
	}
	r := rep.Results[0]
	if len(m.seen()) == 0 || r.SummaryTokens == 0 {
		t.Errorf("the model was not asked: %+v", r)
	}
	// The record appended to the model's summary quotes every error
	// line; the fake's own text quotes none and no identifier.
	if r.Errors.Found != r.Errors.Total || r.Errors.Total < 3 || r.Identifiers.Percent() == 100 {
		t.Errorf("hybrid summary: errors %+v, identifiers %+v", r.Errors, r.Identifiers)
	}
	var alone benchReport
	c.okJSON(&alone, "bench", "--json", "--missing", "--keep-recent", "20000", "--summarizer", summarizerOpenAI,
		"--base-url", m.baseURL(), "--summary-model", "m", "--summary-window", "128000", "--no-ledger", file)
	if r := alone.Results[0]; r.Errors.Found != 0 || len(r.Errors.Missing) != r.Errors.Total || r.Identifiers.Percent() == 100 {
		t.Errorf("the model's summary alone: errors %+v, identifiers %+v", r.Errors, r.Identifiers)
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatal(err)
	}
}

// TestBenchSuite runs the handoff suite through the command: one row per
// family, length and cycle, the JSON report, and the usage errors.
func TestBenchSuite(t *testing.T) {
	c := newCLI(t)
	out := c.ok("bench", "--suite", "--seeds", "2")
	contains(t, "bench --suite", out, "summarizer extractive, 2 seeds per row", "family", "items", "final decision",
		"superseded shown as current", "roles", "after/before", "context grew", "constraint  500", "references  80,000  3")
	rows := len(handoff.Families) * len(handoff.DefaultSizes) * handoff.DriftCycles
	if got := strings.Count(out, "\n"); got != 2+rows {
		t.Errorf("bench --suite: %d lines, want %d:\n%s", got, 2+rows, out)
	}
	var raw map[string]json.RawMessage
	c.okJSON(&raw, "bench", "--suite", "--json", "--seeds", "1")
	for _, k := range []string{"summarizer", "sizes", "seeds", "cycles", "rows", "cases"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("bench --suite --json: no %q key in %s", k, strings.Join(keys(raw), ", "))
		}
	}
	var rep handoff.Report
	c.okJSON(&rep, "bench", "--suite", "--json")
	if rep.Summarizer != "extractive" || rep.Seeds != handoff.DefaultSeeds || len(rep.Rows) != rows ||
		len(rep.Cases) != len(handoff.Families)*len(handoff.DefaultSizes)*handoff.DefaultSeeds {
		t.Fatalf("bench --suite --json: %s, %d seeds, %d rows, %d cases", rep.Summarizer, rep.Seeds, len(rep.Rows), len(rep.Cases))
	}
	for _, r := range rep.Rows {
		if r.Grew != 0 || r.Items.Total == 0 || r.Ratio <= 0 {
			t.Errorf("row %+v", r)
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--suite", demoSession}, "--suite takes no FILE arguments"},
		{[]string{"bench", "--suite", "--generate", t.TempDir()}, "--suite takes no FILE arguments and no --generate"},
		{[]string{"bench", "--suite", "--keep-recent", "500"}, "--suite takes no --keep-recent"},
		{[]string{"bench", "--suite", "--summary-model", "m"}, "--summary-model needs --summarizer"},
		{[]string{"bench", "--suite", "--seeds", "0"}, "--seeds must be a positive number"},
		{[]string{"bench", "--seeds", "2", demoSession}, "--seeds goes with --suite"},
	} {
		if msg := c.fails(exitUsage, tt.args...); !strings.Contains(msg, tt.want) {
			t.Errorf("compact %s: %q, want it to name %q", strings.Join(tt.args, " "), msg, tt.want)
		}
	}
}

// TestBenchNothingToGain: a session whose provider reported a prompt far
// smaller than its messages look would compact into a context estimated
// larger; the engine records nothing ("nothing to gain"), so bench shows
// the budget with nothing to compact, and no row that grew.
func TestBenchNothingToGain(t *testing.T) {
	c := newCLI(t)
	const usage = `"usage":{"input":3,"output":144,"cacheRead":52234,"cacheWrite":1849,"totalTokens":54230`
	data := string(readFile(t, demoSession))
	i := strings.LastIndex(data, usage)
	if i < 0 {
		t.Fatal("the demo's last usage report is not where the test expects it")
	}
	data = data[:i] + `"usage":{"input":3,"output":144,"cacheRead":0,"cacheWrite":0,"totalTokens":147` + data[i+len(usage):]
	file := filepath.Join(t.TempDir(), "small-report.jsonl")
	writeFile(t, file, data)
	var rep benchReport
	c.okJSON(&rep, "bench", "--json", "--keep-recent", "2000", file)
	if r := rep.Results[0]; !r.Nothing || !strings.Contains(r.Reason, "nothing to gain: the context would be") {
		t.Errorf("row %+v", r)
	}
}

// TestBenchLabels: each labelled session (by the shipped labels, or by
// --labels FILE instead) is checked as a handoff at its cut, beside the
// recall rows; a session without a label gets none; a bad labels file is
// an error naming the flag.
func TestBenchLabels(t *testing.T) {
	c := newCLI(t)
	labels := filepath.Join("..", "..", "retention", "handoff", "testdata", "labels.json")
	labelled := filepath.Join("..", "..", "agents", "claudecode", "testdata", "pomodoro.jsonl")
	file := sharedtest.TempCopy(t, demoSession)
	var rep benchReport
	c.okJSON(&rep, "bench", "--json", "--keep-recent", "20000", "--labels", labels, labelled, file)
	if len(rep.Handoff) != 1 || !strings.HasSuffix(rep.Handoff[0].Session, "pomodoro.jsonl") || rep.Handoff[0].KeepRecent != 2000 {
		t.Fatalf("handoff reports %+v", rep.Handoff)
	}
	h := rep.Handoff[0]
	if len(h.Checks) != 7 || h.Checks[0].Kind != "goal" || !h.Checks[0].Pass || h.Passed < 1 {
		t.Errorf("checks %+v", h.Checks)
	}
	// Without --labels, the shipped labels.
	out := c.ok("bench", "--keep-recent", "20000", labelled)
	contains(t, "bench with the shipped labels", out, "handoff at keep 2,000: ", "label checks pass", "pass goal     add smooth transitions")
	// --labels replaces them: a file that labels another session only.
	other := filepath.Join(t.TempDir(), "other.json")
	writeFile(t, other, `{"sessions":[{"session":"repo:x/other.jsonl","keepRecent":100,"goal":{"text":"g","keys":["g"]}}]}`)
	if out := c.ok("bench", "--keep-recent", "20000", "--labels", other, labelled); strings.Contains(out, "handoff at keep") {
		t.Errorf("--labels naming another session still checked this one:\n%s", out)
	}

	bad := filepath.Join(t.TempDir(), "labels.json")
	writeFile(t, bad, `{"sessions":[{"session":"x.jsonl"}]}`)
	msg := c.fails(1, "bench", "--labels", bad, file)
	contains(t, "bad labels", msg, "--labels", "needs a session, a positive keepRecent and a goal")
}
