package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

// TestFixtureCommands runs the read-only commands, human and JSON, on
// copies of the real sessions, and checks that they leave the file as it
// was.
func TestFixtureCommands(t *testing.T) {
	eachFixture(t, func(t *testing.T, c *cli, file string) {
		before := readFile(t, file)
		s := open(t, file)

		out := c.ok("inspect", file)
		contains(t, "inspect", out, "claude-", "200,000 tokens (from the registry)", "by role", "by tool", "next compaction")
		var ir inspectReport
		c.okJSON(&ir, "inspect", "--json", file)
		if ir.Entries != len(s.Entries()) || ir.Window != 200000 || ir.Context.Tokens != compact.Measure(s.Context()).Tokens {
			t.Errorf("inspect --json: %d entries, window %d, tokens %d", ir.Entries, ir.Window, ir.Context.Tokens)
		}

		out = c.ok("context", file)
		contains(t, "context", out, "#0 [", "#1 [")
		var cr contextReport
		c.okJSON(&cr, "context", "--json", file)
		if len(cr.Messages) != len(s.Context().Messages) {
			t.Errorf("context --json: %d messages, want %d", len(cr.Messages), len(s.Context().Messages))
		}
		if s.Context().Compaction != nil && !bytes.Contains(cr.Messages[0].Message, []byte(`"role": "compactionSummary"`)) {
			t.Errorf("context --json: the first message is not the summary: %.200s", cr.Messages[0].Message)
		}

		out = c.ok("tree", file)
		if n := strings.Count(out, "\n"); n != len(s.Entries()) {
			t.Errorf("tree: %d lines for %d entries", n, len(s.Entries()))
		}
		var tr treeReport
		c.okJSON(&tr, "tree", "--json", file)
		if len(tr.Entries) != len(s.Entries()) {
			t.Errorf("tree --json: %d entries", len(tr.Entries))
		}

		contains(t, "run --dry-run", c.ok("run", "--dry-run", file), "dry run of", "split turn")
		at := s.Entries()[100].ID
		out1 := filepath.Join(t.TempDir(), "fork.jsonl")
		contains(t, "fork", c.ok("fork", file, "--at", at, "-o", out1), "into "+out1)
		var fr forkReport
		c.okJSON(&fr, "fork", "--json", file, "--at", at, "-o", out1+".2")
		if len(open(t, out1).Entries()) < 101 || fr.Entries < 101 {
			t.Errorf("fork at the 101st entry: %d entries", fr.Entries)
		}
		unchanged(t, file, before, "a read-only command")

		contains(t, "run", c.ok("run", file), "compacted "+file, "appended compaction entry")
		if !bytes.HasPrefix(readFile(t, file), before) || lineCount(t, file) != bytes.Count(before, []byte("\n"))+1 {
			t.Error("run did more than append one line")
		}
		contains(t, "migrate", c.ok("migrate", file), "migrated from version 1 to 3")
		var mr migrateReport
		c.okJSON(&mr, "migrate", "--json", file)
		if mr.Migrated || mr.FromVersion != 3 {
			t.Errorf("second migrate --json: %+v", mr)
		}
		// The compaction written before the migration still applies.
		if got := open(t, file).Context().Compaction; got == nil || got.Compaction.Details["summarizer"] != "extractive" {
			t.Error("after migrate the context does not start with our compaction")
		}
	})
}

// TestDryRunLargeSession checks the plan against pi 0.58.3's reference
// output for the same file.
func TestDryRunLargeSession(t *testing.T) {
	c := newCLI(t)
	file := fixture(t, "large-session.jsonl")
	before := readFile(t, file)
	r := c.dryRun(file)
	if r.FirstKeptEntryIndex != 837 || r.MessagesToSummarize != 730 || !r.IsSplitTurn || r.TurnPrefixMessages != 3 ||
		r.TokensBefore != 177657 || r.PreviousSummary {
		t.Errorf("plan: index %d, %d messages, split %v, prefix %d, tokens %d, previous %v; want 837, 730, true, 3, 177657, false",
			r.FirstKeptEntryIndex, r.MessagesToSummarize, r.IsSplitTurn, r.TurnPrefixMessages, r.TokensBefore, r.PreviousSummary)
	}
	unchanged(t, file, before, "the dry run")

	// pi counts 21 files read, 20 edited and 3 written. A file that was
	// both read and modified is listed once, as modified; the 3 written
	// files were also edited, so the modified list has 20 entries and the
	// read-only list the 7 files that were never modified.
	plan, err := compact.PlanCompaction(open(t, file).Path(), compact.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n, e, w := len(plan.Files.Read), len(plan.Files.Edited), len(plan.Files.Written); n != 21 || e != 20 || w != 3 {
		t.Errorf("file operations: %d read, %d edited, %d written; want 21, 20, 3", n, e, w)
	}
	modified := map[string]bool{}
	for p := range plan.Files.Edited {
		modified[p] = true
	}
	for p := range plan.Files.Written {
		modified[p] = true
	}
	var readOnly []string
	for p := range plan.Files.Read {
		if !modified[p] {
			readOnly = append(readOnly, p)
		}
	}
	sort.Strings(readOnly)
	if len(r.ModifiedFiles) != len(modified) || len(r.ModifiedFiles) != 20 {
		t.Errorf("modifiedFiles has %d entries, want %d (edited or written)", len(r.ModifiedFiles), len(modified))
	}
	for _, p := range r.ModifiedFiles {
		if !modified[p] {
			t.Errorf("modifiedFiles lists %q, which was neither edited nor written", p)
		}
	}
	if strings.Join(r.ReadFiles, "\n") != strings.Join(readOnly, "\n") || len(r.ReadFiles) != 7 {
		t.Errorf("readFiles = %q, want the 7 files only read: %q", r.ReadFiles, readOnly)
	}
}

// TestDryRunBeforeCompaction checks the plan of a session that pi already
// compacted twice: the span starts at what the previous compaction kept,
// so more messages are summarized than pi 0.58.3's 306 (its bug #2608).
func TestDryRunBeforeCompaction(t *testing.T) {
	c := newCLI(t)
	file := fixture(t, "before-compaction.jsonl")
	before := readFile(t, file)
	r := c.dryRun(file)
	if r.FirstKeptEntryIndex != 946 || !r.IsSplitTurn || r.TurnPrefixMessages != 7 || !r.PreviousSummary || r.MessagesToSummarize <= 306 {
		t.Errorf("plan: index %d, split %v, prefix %d, previous %v, %d messages; want 946, true, 7, true, > 306",
			r.FirstKeptEntryIndex, r.IsSplitTurn, r.TurnPrefixMessages, r.PreviousSummary, r.MessagesToSummarize)
	}
	if len(r.ReadFiles) == 0 || len(r.ModifiedFiles) == 0 {
		t.Errorf("file lists: %d read, %d modified", len(r.ReadFiles), len(r.ModifiedFiles))
	}
	unchanged(t, file, before, "the dry run")
}

// TestEndToEnd compacts each real session twice, the way a long session
// is: once with the default settings, then, after the conversation went
// on, again with a smaller budget. The second compaction must keep what
// the first one kept, either verbatim or in its summary.
func TestEndToEnd(t *testing.T) {
	eachFixture(t, func(t *testing.T, c *cli, file string) {
		lines0 := lineCount(t, file)
		size0 := measure(t, file)

		// First compaction, default settings.
		var first runReport
		c.okJSON(&first, "run", "--json", file)
		if got := lineCount(t, file); got != lines0+1 {
			t.Fatalf("first run: %d lines, want %d", got, lines0+1)
		}
		s1 := open(t, file)
		size1 := compact.Measure(s1.Context()).Tokens
		if size1 >= size0 {
			t.Errorf("first run: context %d -> %d tokens, want smaller", size0, size1)
		}
		comp1 := s1.Entry(first.EntryID)
		if comp1 == nil || comp1.Compaction == nil || comp1.Compaction.FirstKeptID != first.FirstKeptEntryID {
			t.Fatalf("first run: compaction entry %q not found or keeps from the wrong entry", first.EntryID)
		}
		if s1.Leaf() != first.EntryID {
			t.Fatalf("first run: the leaf is %s, not the compaction", s1.Leaf())
		}
		// What the first compaction kept verbatim.
		var kept1 []string
		inKept := false
		for _, e := range s1.Path() {
			if e.ID == first.FirstKeptEntryID {
				inKept = true
			}
			if e.ID == first.EntryID {
				break
			}
			if inKept && e.IsContextMessage() {
				kept1 = append(kept1, e.ID)
			}
		}
		if len(kept1) == 0 {
			t.Fatal("first run kept no message")
		}

		// Running again at once has nothing to do.
		contains(t, "immediate second run", c.ok("run", file), "nothing to compact: ")
		if got := lineCount(t, file); got != lines0+1 {
			t.Fatalf("an empty run wrote to the file")
		}

		// The conversation goes on.
		ctx := context.Background()
		for _, m := range []*compact.Message{
			compact.TextMessage(compact.RoleUser, "Thanks. Before we go on, list what is still open."),
			{Role: compact.RoleAssistant, Content: []compact.Part{{Type: compact.PartText,
				Text: "Still open: re-run the full test suite and check the remaining call sites."}}, StopReason: compact.StopEnd},
		} {
			if _, err := s1.AppendMessage(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		lines1 := lineCount(t, file)
		size1b := measure(t, file)

		// The second compaction's span starts where the first one's
		// kept part does, so everything the first kept is summarized
		// now or stays verbatim.
		var dry runReport
		c.okJSON(&dry, "run", "--dry-run", "--json", "--keep-recent", "8000", file)
		plan, err := compact.PlanCompaction(open(t, file).Path(), compact.PlanOptions{KeepRecentTokens: 8000})
		if err != nil {
			t.Fatal(err)
		}
		if plan.Path[plan.SpanStart].ID != first.FirstKeptEntryID {
			t.Errorf("second plan: span starts at %s, want the first compaction's first kept entry %s",
				plan.Path[plan.SpanStart].ID, first.FirstKeptEntryID)
		}
		if !dry.PreviousSummary || dry.FirstKeptEntryID != plan.FirstKeptID {
			t.Errorf("second dry run: previous %v, first kept %s (plan %s)", dry.PreviousSummary, dry.FirstKeptEntryID, plan.FirstKeptID)
		}
		span := map[string]bool{}
		for _, e := range plan.Path[plan.SpanStart:plan.FirstKeptIndex] {
			if e.IsContextMessage() {
				span[e.ID] = true
			}
		}
		if len(span) != dry.MessagesToSummarize+dry.TurnPrefixMessages {
			t.Errorf("second plan: span holds %d messages, the dry run reports %d + %d",
				len(span), dry.MessagesToSummarize, dry.TurnPrefixMessages)
		}

		var second runReport
		c.okJSON(&second, "run", "--json", "--keep-recent", "8000", file)
		if got := lineCount(t, file); got != lines1+1 {
			t.Fatalf("second run: %d lines, want %d", got, lines1+1)
		}
		s2 := open(t, file)
		ctx2 := s2.Context()
		if size2 := compact.Measure(ctx2).Tokens; size2 >= size1b {
			t.Errorf("second run: context %d -> %d tokens, want smaller", size1b, size2)
		}
		verbatim := map[string]bool{}
		for _, id := range ctx2.EntryIDs {
			verbatim[id] = true
		}
		lost := 0
		for _, id := range kept1 {
			if !verbatim[id] && !span[id] {
				lost++
			}
		}
		t.Logf("first: %d -> %d tokens, kept %d messages from %s; second: %d -> %d tokens, summarized %d+%d messages from %s",
			size0, size1, len(kept1), first.FirstKeptEntryID, size1b, compact.Measure(ctx2).Tokens,
			second.MessagesToSummarize, second.TurnPrefixMessages, plan.Path[plan.SpanStart].ID)
		if lost > 0 {
			t.Errorf("second run: %d of the %d messages the first compaction kept are neither in the context nor summarized", lost, len(kept1))
		}
		if second.FirstKeptEntryID != dry.FirstKeptEntryID || second.MessagesToSummarize != dry.MessagesToSummarize {
			t.Errorf("second run did not follow its dry run: %s/%d vs %s/%d",
				second.FirstKeptEntryID, second.MessagesToSummarize, dry.FirstKeptEntryID, dry.MessagesToSummarize)
		}
		// File tracking survives: every file the first compaction
		// listed is listed in the second summary.
		for _, p := range append(append([]string{}, first.ReadFiles...), first.ModifiedFiles...) {
			if !strings.Contains(second.Summary, "\n"+p+"\n") {
				t.Errorf("second summary lost the file %q", p)
			}
		}
	})
}

// TestMigrate migrates a copy of a version 1 session.
func TestMigrate(t *testing.T) {
	c := newCLI(t)
	file := fixture(t, "large-session.jsonl")
	before := c.dryRun(file)

	contains(t, "migrate", c.ok("migrate", file), "migrated from version 1 to 3")
	s := open(t, file)
	if s.Header().Version != 3 {
		t.Fatalf("version %d after migrate", s.Header().Version)
	}
	contains(t, "migrate again", c.ok("migrate", file), "already version 3, unchanged")
	var mr migrateReport
	c.okJSON(&mr, "migrate", "--json", file)
	if mr.Migrated || mr.FromVersion != 3 || mr.ToVersion != 3 {
		t.Errorf("migrate --json: %+v", mr)
	}

	// The plan does not change with the format.
	after := c.dryRun(file)
	if after.FirstKeptEntryID != before.FirstKeptEntryID || after.FirstKeptEntryIndex != before.FirstKeptEntryIndex ||
		after.MessagesToSummarize != before.MessagesToSummarize || after.TokensBefore != before.TokensBefore {
		t.Errorf("plan changed by migration: %+v -> %+v", before.planReport, after.planReport)
	}

	// No temporary file is left behind.
	entries, err := os.ReadDir(filepath.Dir(file))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("the directory holds %d files after migrate", len(entries))
	}
}
