package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/numfmt"
)

// partsText joins the text parts of a message's content.
func partsText(parts []compact.Part) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// checkPassIndexes checks that every applied pass names its first changed
// message at its cache break index in the context (context edits never
// move messages, so one listing serves every pass).
func checkPassIndexes(t *testing.T, c *cli, file string, passes []passReport) {
	t.Helper()
	var cr contextReport
	c.okJSON(&cr, "context", "--json", file)
	for _, p := range passes {
		if !p.Applied {
			if p.CacheBreakIndex != -1 || p.TokensFreed != 0 || p.Edits != 0 || p.FirstChangedID != "" {
				t.Errorf("%s did nothing but reports %+v", p.Strategy, p)
			}
			continue
		}
		if p.CacheBreakIndex < 0 || p.CacheBreakIndex >= len(cr.Messages) || cr.Messages[p.CacheBreakIndex].EntryID != p.FirstChangedID {
			t.Errorf("%s: cache break index %d does not hold entry %s", p.Strategy, p.CacheBreakIndex, p.FirstChangedID)
		}
		if p.TokensFreed <= 0 || p.Edits <= 0 || p.TokensBefore-p.TokensAfter != p.TokensFreed {
			t.Errorf("%s: %d tokens freed by %d edits, %d -> %d", p.Strategy, p.TokensFreed, p.Edits, p.TokensBefore, p.TokensAfter)
		}
	}
}

// TestPruneDryRunFixtures runs "prune --dry-run --json" on the real
// sessions: every strategy reports its tokens freed and cache break
// index, and the file is not touched.
func TestPruneDryRunFixtures(t *testing.T) {
	eachFixture(t, func(t *testing.T, c *cli, file string) {
		before := readFile(t, file)

		out := c.ok("prune", "--dry-run", "--json", file)
		var raw struct {
			Passes []map[string]json.RawMessage `json:"passes"`
		}
		if err := json.Unmarshal([]byte(out), &raw); err != nil {
			t.Fatal(err)
		}
		for _, p := range raw.Passes {
			for _, k := range []string{"strategy", "applied", "tokensFreed", "edits", "cacheBreakIndex", "tokensBefore", "tokensAfter"} {
				if _, ok := p[k]; !ok {
					t.Errorf("pass %s has no %q", p["strategy"], k)
				}
			}
		}
		var r pruneReport
		c.okJSON(&r, "prune", "--dry-run", "--json", file)
		if !r.DryRun || r.File != file || r.Target != 0 || r.UnderTarget {
			t.Errorf("report %+v", r)
		}
		var got []string
		freed := 0
		for _, p := range r.Passes {
			got = append(got, p.Strategy)
			freed += p.TokensFreed
			if p.EntryID != "" {
				t.Errorf("%s: a dry run reports entry %s", p.Strategy, p.EntryID)
			}
		}
		if strings.Join(got, ",") != "strip_images,mask,truncate" {
			t.Errorf("default order %v", got)
		}
		if r.TokensBefore != measure(t, file) || r.TokensBefore-r.TokensAfter != freed {
			t.Errorf("tokens %d -> %d, %d freed by the passes; context measures %d", r.TokensBefore, r.TokensAfter, freed, measure(t, file))
		}
		if mask := r.Passes[1]; !mask.Applied || mask.TokensFreed <= 0 {
			t.Errorf("mask freed nothing: %+v", mask)
		}
		checkPassIndexes(t, c, file, r.Passes)

		human := c.ok("prune", "--dry-run", file)
		contains(t, "prune --dry-run", human, "dry run of "+file, "strip_images     nothing worth a cache break",
			fmt.Sprintf("mask             would free %s tokens in %s; cache breaks at #%d (entry %s)",
				numfmt.Thousands(r.Passes[1].TokensFreed), plural(r.Passes[1].Edits, "message"), r.Passes[1].CacheBreakIndex, r.Passes[1].FirstChangedID),
			fmt.Sprintf("context: %s -> %s tokens", numfmt.Thousands(r.TokensBefore), numfmt.Thousands(r.TokensAfter)))
		unchanged(t, file, before, "prune --dry-run")
	})
}

// TestPruneApplyFixtures records the passes on copies of the real
// sessions and checks that they replay on load exactly as computed.
func TestPruneApplyFixtures(t *testing.T) {
	eachFixture(t, func(t *testing.T, c *cli, file string) {
		before := readFile(t, file)
		var origBefore contextReport
		c.okJSON(&origBefore, "context", "--original", "--json", file)

		// What the ladder computes, in memory.
		res, err := compact.Ladder{}.Run(context.Background(), open(t, file), 0, true)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{}
		for _, p := range res.Passes {
			if p.Edit != nil {
				for _, ed := range p.Edit.Edits {
					want[ed.TargetID] = partsText(ed.Content)
				}
			}
		}
		var dry pruneReport
		c.okJSON(&dry, "prune", "--dry-run", "--json", file)

		var r pruneReport
		c.okJSON(&r, "prune", "--json", file)
		if r.DryRun || len(r.Passes) != len(dry.Passes) || r.TokensAfter != dry.TokensAfter {
			t.Fatalf("applied %+v, dry run %+v", r, dry)
		}
		applied := 0
		for i, p := range r.Passes {
			d := dry.Passes[i]
			if p.Applied != d.Applied || p.TokensFreed != d.TokensFreed || p.CacheBreakIndex != d.CacheBreakIndex || p.Edits != d.Edits {
				t.Errorf("%s applied %+v, planned %+v", p.Strategy, p, d)
			}
			if p.Applied != (p.EntryID != "") {
				t.Errorf("%s: applied %v, entry %q", p.Strategy, p.Applied, p.EntryID)
			}
			if p.Applied {
				applied++
			}
		}
		if applied == 0 {
			t.Fatal("no pass was applied")
		}
		after := readFile(t, file)
		if !bytes.HasPrefix(after, before) || bytes.Count(after, []byte("\n"))-bytes.Count(before, []byte("\n")) != applied {
			t.Fatalf("prune did more than append %d lines", applied)
		}

		s := open(t, file)
		for _, p := range r.Passes {
			if e := s.Entry(p.EntryID); p.Applied && (e == nil || e.Kind != compact.KindContextEdit || e.Edit.Strategy != p.Strategy ||
				e.Edit.TokensFreed != p.TokensFreed || e.Edit.FirstChangedID != p.FirstChangedID) {
				t.Errorf("%s: entry %s reloads as %+v", p.Strategy, p.EntryID, e)
			}
		}
		ctx := s.Context()
		if got := compact.Measure(ctx).Tokens; got != r.TokensAfter {
			t.Errorf("reloaded context measures %d, prune reported %d", got, r.TokensAfter)
		}
		seen := 0
		for i, id := range ctx.EntryIDs {
			if text, ok := want[id]; ok {
				seen++
				if got := partsText(ctx.Messages[i].Content); got != text {
					t.Errorf("message %s replays as %.200q, the ladder computed %.200q", id, got, text)
				}
			}
		}
		if seen != len(want) {
			t.Errorf("%d of the %d edited messages are in the reloaded context", seen, len(want))
		}

		var origAfter contextReport
		c.okJSON(&origAfter, "context", "--original", "--json", file)
		if len(origAfter.Messages) != len(origBefore.Messages) {
			t.Fatalf("--original: %d messages, %d before", len(origAfter.Messages), len(origBefore.Messages))
		}
		for i := range origAfter.Messages {
			if !bytes.Equal(origAfter.Messages[i].Message, origBefore.Messages[i].Message) {
				t.Fatalf("--original message %d changed", i)
			}
		}

		// A second run finds nothing more at the defaults and writes
		// nothing.
		out := c.ok("prune", file)
		contains(t, "second prune", out, "mask             nothing worth a cache break", "nothing appended to "+file)
		if !bytes.Equal(after, readFile(t, file)) {
			t.Error("a prune with nothing to do wrote to the file")
		}
	})
}

// TestPruneStrategies checks --strategy (order, commas, unknown and
// repeated names) and the strategy options.
func TestPruneStrategies(t *testing.T) {
	c := newCLI(t)
	file := fixture(t, "large-session.jsonl")
	names := func(args ...string) []string {
		t.Helper()
		var r pruneReport
		c.okJSON(&r, append([]string{"prune", "--dry-run", "--json", file}, args...)...)
		var out []string
		for _, p := range r.Passes {
			out = append(out, p.Strategy)
		}
		return out
	}
	if got := strings.Join(names("--strategy", "truncate", "--strategy", "mask"), ","); got != "truncate,mask" {
		t.Errorf("--strategy truncate --strategy mask ran %s", got)
	}
	if got := strings.Join(names("--strategy", "clear_tool_uses,prune,strip_images"), ","); got != "clear_tool_uses,prune,strip_images" {
		t.Errorf("comma-separated --strategy ran %s", got)
	}
	msg := c.fails(exitUsage, "prune", "--strategy", "mask", "--strategy", "squash", file)
	contains(t, "unknown strategy", msg, `"squash"`, "prune", "clear_tool_uses", "mask", "truncate", "strip_images")
	contains(t, "repeated strategy", c.fails(exitUsage, "prune", "--strategy", "mask,mask", file), "twice")
	contains(t, "bad --min-free", c.fails(exitUsage, "prune", "--min-free", "lots", file), "--min-free")
	contains(t, "both targets", c.fails(exitUsage, "prune", "--target", "5", "--to-target", file), "--to-target")

	pass := func(args ...string) passReport {
		t.Helper()
		var r pruneReport
		c.okJSON(&r, append([]string{"prune", "--dry-run", "--json", file}, args...)...)
		if len(r.Passes) != 1 {
			t.Fatalf("%v: %d passes", args, len(r.Passes))
		}
		return r.Passes[0]
	}
	mask := pass("--strategy", "mask")
	if more := pass("--strategy", "mask", "--mask-turns", "2"); more.TokensFreed <= mask.TokensFreed {
		t.Errorf("--mask-turns 2 frees %d, the default %d", more.TokensFreed, mask.TokensFreed)
	}
	if p := pass("--strategy", "mask", "--min-free", "10000000"); p.Applied {
		t.Errorf("mask passed a --min-free of 10 million: %+v", p)
	}
	if p := pass("--strategy", "clear_tool_uses"); p.Applied {
		t.Errorf("clear_tool_uses at its defaults: %+v (the fixture's old tool uses are worth less than the cache)", p)
	}
	clear := pass("--strategy", "clear_tool_uses", "--min-free", "0", "--keep-tool-uses", "5")
	inputs := pass("--strategy", "clear_tool_uses", "--min-free", "0", "--keep-tool-uses", "5", "--clear-inputs")
	if !clear.Applied || inputs.TokensFreed <= clear.TokensFreed {
		t.Errorf("clear_tool_uses --min-free 0 freed %d, with --clear-inputs %d", clear.TokensFreed, inputs.TokensFreed)
	}
	prune := pass("--strategy", "prune", "--min-free", "0")
	protected := pass("--strategy", "prune", "--min-free", "0", "--protect-tools", "read,bash")
	if !prune.Applied || protected.TokensFreed >= prune.TokensFreed {
		t.Errorf("prune freed %d, with read and bash protected %d", prune.TokensFreed, protected.TokensFreed)
	}
}

// TestPruneTarget checks that --target stops the ladder once the
// context is under it, and --to-target takes the policy's target.
func TestPruneTarget(t *testing.T) {
	c := newCLI(t)
	file := fixture(t, "large-session.jsonl")
	var all pruneReport
	c.okJSON(&all, "prune", "--dry-run", "--json", "--strategy", "mask,truncate,prune", file)
	if len(all.Passes) != 3 {
		t.Fatalf("%d passes without a target", len(all.Passes))
	}
	target := all.TokensBefore - all.Passes[0].TokensFreed/2
	var r pruneReport
	c.okJSON(&r, "prune", "--dry-run", "--json", "--strategy", "mask,truncate,prune", "--target", fmt.Sprint(target), file)
	if len(r.Passes) != 1 || r.Passes[0].Strategy != "mask" || !r.UnderTarget || r.Target != target || r.TokensAfter > target {
		t.Errorf("--target %d: %+v", target, r)
	}
	out := c.ok("prune", "--dry-run", "--strategy", "mask,truncate", "--target", fmt.Sprint(target), file)
	contains(t, "prune --target", out, "truncate         not run: the context is already under the target",
		fmt.Sprintf("target: %s tokens, reached", numfmt.Thousands(target)))

	// The default policy's target is half its trigger (200,000 - 16,384).
	c.okJSON(&r, "prune", "--dry-run", "--json", "--to-target", file)
	if r.Target != 91808 || r.TokensBefore <= r.Target {
		t.Errorf("--to-target: target %d, context %d", r.Target, r.TokensBefore)
	}
	tiny := tinySession(t, "mystery-model-9", 40)
	contains(t, "--to-target, unknown window", c.fails(exitUsage, "prune", "--to-target", tiny), "unknown", "--window")
	c.okJSON(&r, "prune", "--dry-run", "--json", "--to-target", "--window", "2000", tiny)
	if r.Target != 800 { // half the trigger of 2,000 - 2,000/5
		t.Errorf("--to-target --window 2000: target %d", r.Target)
	}
}

// TestInspectStrategies checks the strategies section of inspect: each
// strategy planned alone on the current context.
func TestInspectStrategies(t *testing.T) {
	eachFixture(t, func(t *testing.T, c *cli, file string) {
		before := readFile(t, file)
		var ir inspectReport
		c.okJSON(&ir, "inspect", "--json", file)
		all := strategyNames(compact.Strategies())
		if len(ir.Strategies) != len(all) {
			t.Fatalf("%d strategies", len(ir.Strategies))
		}
		for i, p := range ir.Strategies {
			if p.Strategy != all[i] || p.TokensBefore != ir.Context.Tokens || p.EntryID != "" {
				t.Errorf("strategy %d: %+v (context %d tokens)", i, p, ir.Context.Tokens)
			}
			// Alone, each matches a one-strategy prune.
			var r pruneReport
			c.okJSON(&r, "prune", "--dry-run", "--json", "--strategy", p.Strategy, file)
			if r.Passes[0] != p {
				t.Errorf("inspect %+v, prune %+v", p, r.Passes[0])
			}
		}
		checkPassIndexes(t, c, file, ir.Strategies)
		mask := ir.Strategies[1]
		out := c.ok("inspect", file)
		contains(t, "inspect", out, "cheap strategies (each alone at its defaults",
			"strip_images     nothing worth a cache break",
			fmt.Sprintf("mask             would free %s tokens in %s; cache breaks at #%d (entry %s)",
				numfmt.Thousands(mask.TokensFreed), plural(mask.Edits, "message"), mask.CacheBreakIndex, mask.FirstChangedID))
		unchanged(t, file, before, "inspect")

		// After a prune, inspect explains the corrected usage.
		c.ok("prune", file)
		c.okJSON(&ir, "inspect", "--json", file)
		if ir.Context.FreedSinceReport <= 0 || ir.Context.ReportedTokens-ir.Context.FreedSinceReport != ir.Context.UsageTokens {
			t.Errorf("after prune: %+v", ir.Context)
		}
		contains(t, "inspect after prune", c.ok("inspect", file), "freed by the context edits recorded after it")
	})
}

// TestPruneThenRun compacts a pruned session: the summarizer is given the
// stored messages, not the replacements.
func TestPruneThenRun(t *testing.T) {
	c := newCLI(t)
	file := fixture(t, "large-session.jsonl")
	var pr pruneReport
	c.okJSON(&pr, "prune", "--json", file)
	s := open(t, file)
	edited := compact.EditsOf(s.Path())
	if len(edited) == 0 {
		t.Fatal("prune recorded no edit")
	}
	var got []*compact.Message
	c.summarizer = compact.SummarizerFunc(func(ctx context.Context, req *compact.SummaryRequest) (*compact.Summary, error) {
		got = append(got, req.Messages...)
		return &compact.Summary{Text: "## Goal\nsummary of the stored messages", Summarizer: "test"}, nil
	})
	var rr runReport
	c.okJSON(&rr, "run", "--json", file)
	if rr.EntryID == "" || rr.TokensBefore != pr.TokensAfter {
		t.Errorf("run after prune: entry %q, tokens before %d (prune left %d)", rr.EntryID, rr.TokensBefore, pr.TokensAfter)
	}
	stored := map[string]string{}
	for id := range edited {
		stored[id] = s.Entry(id).Message.Text()
	}
	summarizedEdited := 0
	for _, m := range got {
		text := m.Text()
		if strings.Contains(text, "removed by mask") || strings.Contains(text, "truncated by truncate") {
			t.Fatalf("the summarizer was given a replacement: %.200q", text)
		}
		for _, st := range stored {
			if text == st && text != "" {
				summarizedEdited++
				break
			}
		}
	}
	if summarizedEdited == 0 {
		t.Error("none of the pruned messages reached the summarizer in their stored form")
	}
	after := open(t, file)
	if comp := after.Context().Compaction; comp == nil || comp.ID != rr.EntryID || !strings.Contains(comp.Compaction.Summary, "summary of the stored messages") {
		t.Errorf("the compaction is not the context's: %+v", comp)
	}
}
