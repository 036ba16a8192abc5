package main

import (
	"flag"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact/internal/testing/golden"
	"github.com/compactkit/compact/retention"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// near reports whether a dollar figure is known and equals want.
func near(got *float64, want float64) bool { return got != nil && math.Abs(*got-want) < 1e-12 }

// TestBenchCostTable pins the text table with its cost columns: the
// offline summarizer and the cheap strategies cost nothing, the savings
// are priced at the session model's prices (the generated sessions name
// claude-sonnet-4-5: $0.30 a million read from the cache).
func TestBenchCostTable(t *testing.T) {
	c := newCLI(t)
	dir := filepath.Join(t.TempDir(), "needles")
	c.ok("bench", "--generate", dir)
	file := filepath.Join(dir, "needles-1.jsonl")
	out := c.ok("bench", "--keep-recent", "20000,2000", file)
	golden.Check(t, "testdata/bench-cost.txt", []byte(strings.ReplaceAll(out, file, "needles-1.jsonl")), *update)
}

// TestBenchCostJSON checks every figure of --json against the prices by
// hand, for the offline summarizer, for a model priced in the config and
// for a model without prices (its cost unknown: null, "?" in the table).
func TestBenchCostJSON(t *testing.T) {
	c := newCLI(t)
	dir := filepath.Join(t.TempDir(), "needles")
	c.ok("bench", "--generate", dir)
	file := filepath.Join(dir, "needles-2.jsonl")

	var rep benchReport
	c.okJSON(&rep, "bench", "--json", "--keep-recent", "2000", "--model", "claude-opus-4-5", file)
	for _, r := range rep.Results {
		e := r.Cost
		if e == nil {
			t.Fatalf("%s: no cost", r.Method)
		}
		removed := r.TokensBefore - r.TokensAfter
		// Opus 4.5: $5 input, $0.50 cache read, $6.25 cache write.
		saved, rewrite := float64(removed)*0.50/1e6, float64(r.TokensAfter)*(6.25-0.50)/1e6
		if !near(e.Compaction, 0) || e.TokensRemoved != removed || !near(e.SavedCached, saved) ||
			!near(e.SavedUncached, float64(removed)*5/1e6) || !near(e.Rewrite, rewrite) || e.BreakEven != int(math.Ceil(rewrite/saved)) {
			t.Errorf("%s: %+v, want free, %d removed, $%v saved, $%v rewrite", r.Method, e, removed, saved, rewrite)
		}
	}

	// A model summarizer: its usage at its prices from the config's
	// models (the fake answers every call with 1,200 tokens in, 150 out).
	m := newFakeModel(t, summarizerOpenAI)
	c.env[keyVar(summarizerOpenAI)] = "test-key"
	cfg := filepath.Join(t.TempDir(), "config.json")
	writeFile(t, cfg, `{"models": [{"id": "m", "contextWindow": 128000, "prices": {"input": 1, "output": 5, "source": "test", "date": "2026-11-27"}}]}`)
	args := []string{"bench", "--keep-recent", "20000", "--summarizer", summarizerOpenAI, "--base-url", m.baseURL(), "--summary-model", "m", file}
	var priced benchReport
	c.okJSON(&priced, append([]string{"--config", cfg, "--json"}, args...)...)
	calls := len(m.seen())
	r := priced.Results[0]
	if want := float64(calls) * (fakeInputTokens*1 + fakeOutputTokens*5) / 1e6; calls == 0 || !near(r.Cost.Compaction, want) ||
		r.Cost.Usage != (retention.Tokens{Input: calls * fakeInputTokens, Output: calls * fakeOutputTokens}) {
		t.Errorf("model summary: %d calls, cost %+v, want $%v", calls, r.Cost, want)
	}
	if r.Cost.BreakEven < 1 {
		t.Errorf("model summary pays back after %d requests", r.Cost.BreakEven)
	}

	// The same model without prices: the cost is unknown, not free.
	var unpriced benchReport
	c.okJSON(&unpriced, append([]string{"--json", "--summary-window", "128000"}, args...)...)
	if r := unpriced.Results[0]; r.Cost.Compaction != nil || r.Cost.BreakEven != 0 || r.Cost.SavedCached == nil {
		t.Errorf("unpriced model summary: %+v, want an unknown cost and known savings", r.Cost)
	}
	out := c.ok(append([]string{"--summary-window", "128000"}, args...)...)
	var row string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, " m ") {
			row = l
		}
	}
	if fields := strings.Fields(row); len(fields) < 3 || fields[len(fields)-1] != "?" || !strings.Contains(row, "  ?  ") {
		t.Errorf("unpriced model's row: %q, want ? for its cost and its pay-back", row)
	}
}
