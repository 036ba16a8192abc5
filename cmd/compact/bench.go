package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/numfmt"
	"github.com/compactkit/compact/retention"
	"github.com/compactkit/compact/retention/handoff"
	"github.com/compactkit/compact/summarize"
)

// benchReport is the JSON form of "compact bench".
type benchReport struct {
	Summarizer string             `json:"summarizer"`
	KeepRecent []int              `json:"keepRecent"`
	Results    []retention.Result `json:"results"`
	// Handoff holds the checks of the labelled sessions benched.
	Handoff []handoffReport `json:"handoff,omitempty"`
}

// handoffReport is one labelled session checked as a handoff: what a
// person who read it says a correct summary at its cut must hold.
type handoffReport struct {
	Session    string               `json:"session"`
	KeepRecent int                  `json:"keepRecent"`
	Passed     int                  `json:"passed"`
	Checks     []handoff.LabelCheck `json:"checks"`
}

// generateReport is the JSON form of "compact bench --generate".
type generateReport struct {
	Generated []string `json:"generated"`
}

func (a *app) benchCommand() *cobra.Command {
	var lf limitFlags
	var sf summarizerFlags
	var keeps []int
	var missing bool
	var generate string
	var suite bool
	var seeds int
	var labels string
	cmd := &cobra.Command{
		Use:   "bench FILE...",
		Short: "Measure what compaction keeps of each session",
		Long: `Bench compacts a copy of each session, in memory, at each --keep-recent
budget (20000, 8000 and 2000 tokens by default), with the summarizer chosen
as for "compact run" (extractive unless --summarizer names a model) and,
for comparison, with the cheap strategies alone (strip_images, mask,
truncate: "cheap" rows). Nothing is written; the files are only read.

Each compaction is measured on its summarized span (the messages the
summary replaced):

  context       tokens before and after, and after as a share of before
  files         files read, written or edited, by the file tools or by
                shell commands (mv, cp, rm, > and >> redirections,
                heredocs, sed -i, tee, ...), named in the rebuilt context
  errors        a distinctive line of every failing tool output, errors
                printed by commands that exited 0 (compiler and test
                output) included, present in the rebuilt context
  identifiers   ids, hashes, numbers, URLs and backticked names the user
                or the assistant wrote, present as whole tokens
  user text     user messages present verbatim (blanks aside)
  invariants    no tool result without its call ("pairs"), the session's
                first request present ("first"), the context under the
                policy's target when the window is known ("target"), the
                context smaller than before ("grew": the command fails)
  cost          what writing the summary cost: the summarizer's reported
                usage at the summary model's prices (the registry's, or
                the config's models); the offline summarizer and the
                cheap strategies cost nothing; "?" when unknown
  saves/request what each later request saves: the tokens removed at
                the session model's cache-read price, since in an agent's
                loop the prefix they would have been part of is read
                from the prompt cache (--json also gives the saving at
                the input price, for a cache gone cold)
  pays back     how many later requests it takes for those savings to
    after       pay for the summary and for writing the rewritten prefix
                to the cache once (cache-write minus cache-read price of
                the context after)

Labelled sessions are checked as handoffs too: each label, written by a
person who read the session, says what a correct summary at its cut must
hold (the current goal, the next step, the decisions in force, the files).
A session FILE whose path ends with a label's session path is compacted at
the label's cut, and each check is printed under its rows, pass or FAIL.
The labels shipped with compact (retention/handoff/testdata/labels.json)
name the real sessions of ../shared/testdata and of this repository;
--labels FILE checks against the labels in FILE instead.

The facts are found by the same rules the extractive summarizer reads
them with, so 100% means "present in the context", not "used well by a
model". --missing lists what was not found. --json prints one object
with every row.

--generate DIR writes planted-needle sessions into DIR (needles-N.jsonl,
with the planted facts in needles-N.needles.json) and stops: bench them
to test any summarizer on known facts, e.g.

  compact bench --generate /tmp/needles
  compact bench --summarizer openai --summary-model gpt-4.1-mini /tmp/needles/*.jsonl

--suite reads the compaction as a handoff instead, on generated adversarial
conversations (package retention/handoff) with their ground truth, and
scores the rebuilt context by plain text matching, sharing no rule with
the summarizers. Four families (a constraint buried early in noise, a
decision overridden later, roles easy to confuse, references back to
earlier items), six lengths (500 to 80,000 tokens), --seeds cases each
(16; fewer for a model summarizer, which summarizes each case three
times), each case compacted at a keep budget small enough that its truth
is summarized, then continued and compacted twice more (cycles 2 and 3).
One row per family, length and cycle:

  items            the goal, open items, forbidden actions, facts, the
                   final decision and resolved references present
  final decision   the decision in force present
  superseded       withdrawn decisions absent or marked as withdrawn, and
                   the share shown as current (unmarked under Goal or
                   Key Decisions)
  roles            owners on one line with their task
  after/before     the mean compression
  context grew     compactions that left the context no smaller (the
                   command fails when there is one)
  not compacted    cycles with nothing to compact or nothing to gain`,
		Args: func(cmd *cobra.Command, args []string) error {
			if suite {
				if len(args) > 0 || generate != "" {
					return usagef("%s: --suite takes no FILE arguments and no --generate", commandName(cmd))
				}
				if cmd.Flags().Changed("keep-recent") || missing {
					return usagef("%s: --suite takes no --keep-recent or --missing (each case has its own budget)", commandName(cmd))
				}
				if seeds <= 0 {
					return usagef("%s: --seeds must be a positive number of cases, got %d", commandName(cmd), seeds)
				}
				return nil
			}
			if cmd.Flags().Changed("seeds") {
				return usagef("%s: --seeds goes with --suite", commandName(cmd))
			}
			if len(args) == 0 && generate == "" {
				return usagef("%s: missing the session FILE arguments (or --generate DIR, or --suite)", commandName(cmd))
			}
			if len(args) > 0 && generate != "" {
				return usagef("%s: --generate DIR takes no FILE arguments", commandName(cmd))
			}
			return nil
		},
		RunE: a.action(func(cmd *cobra.Command, args []string) error {
			if generate != "" {
				return a.generateNeedles(generate)
			}
			if suite {
				return a.benchSuite(cmd, seeds, &lf, &sf)
			}
			return a.bench(cmd, args, keeps, missing, labels, &lf, &sf)
		}),
	}
	f := cmd.Flags()
	f.IntSliceVar(&keeps, "keep-recent", retention.DefaultKeepRecent, "budgets of the part kept verbatim to compact at, in tokens, comma-separated")
	f.BoolVar(&missing, "missing", false, "list the files, error lines, identifiers and user messages that were not found")
	f.StringVar(&generate, "generate", "", "write planted-needle sessions into DIR and stop")
	f.BoolVar(&suite, "suite", false, "run the adversarial handoff suite on generated conversations instead of sessions")
	f.StringVar(&labels, "labels", "", "a labels file to check labelled sessions against, instead of the shipped labels")
	f.IntVar(&seeds, "seeds", handoff.DefaultSeeds, "with --suite: the cases of each family and length (fewer for a model summarizer)")
	lf.addReserve(cmd)
	lf.addWindow(cmd)
	sf.add(cmd)
	a.addFormatFlag(cmd)
	// A failed summary fails the benchmark: writing the offline one
	// instead would measure the wrong summarizer.
	_ = f.MarkHidden("fallback")
	return cmd
}

func (a *app) generateNeedles(dir string) error {
	files, err := retention.Generate(dir)
	if err != nil {
		return fmt.Errorf("--generate %s: %w", dir, err)
	}
	if a.jsonOut {
		return writeJSON(a.stdout, generateReport{Generated: files})
	}
	for _, f := range files {
		fmt.Fprintf(a.stdout, "wrote %s\n", f)
	}
	return nil
}

func (a *app) bench(cmd *cobra.Command, files []string, keeps []int, missing bool, labelsFile string, lf *limitFlags, sf *summarizerFlags) error {
	labels := handoff.ShippedLabels()
	if labelsFile != "" {
		var err error
		if labels, err = handoff.ReadLabels(labelsFile); err != nil {
			return fmt.Errorf("--labels: %w", err)
		}
	}
	largest := 0
	for _, k := range keeps {
		if k <= 0 {
			return usagef("--keep-recent must be positive numbers of tokens, got %d", k)
		}
		largest = max(largest, k)
	}
	if len(keeps) == 0 {
		return usagef("--keep-recent needs at least one budget")
	}
	// loadSettings checks the one budget of "run"; the largest stands for
	// them all (it must be smaller than the window).
	lf.keepRecent = largest
	su, err := a.loadSummarySetup(cmd, lf, sf)
	if err != nil {
		return err
	}
	st, reg, choice, policy := su.st, su.reg, su.choice, su.policy
	reserve := st.cfg.ReserveTokens
	if reserve <= 0 {
		reserve = compact.DefaultReserveTokens
	}
	sum, _, err := a.summarizers(choice, reserve)
	if err != nil {
		return err
	}
	name := choice.name
	if name != summarizerExtractive {
		name = choice.model
	}
	rep := benchReport{Summarizer: name, KeepRecent: keeps}
	for _, file := range files {
		a.progressf("benchmarking %s...", file)
		s, err := a.openRead(file, "")
		if err != nil {
			return err
		}
		info, _, _, err := st.fitModel(reg, s.Context().Model, a.recorded[file])
		if err != nil {
			return err
		}
		opts := retention.Options{KeepRecent: keeps, Summarizer: sum, Name: name, Cheap: true,
			MaxTokens: summarize.ReserveBudget(reserve), Prices: info.Prices, SummaryPrices: summaryPrices(choice)}
		if info.ContextWindow > 0 {
			opts.TargetTokens = policy.Target(info)
		}
		results, err := retention.Measure(cmd.Context(), file, s.Path(), opts)
		if err != nil {
			return err
		}
		rep.Results = append(rep.Results, results...)
		if l := labelFor(labels, file); l != nil {
			h, err := checkHandoff(cmd.Context(), file, s.Path(), l, sum, opts)
			if err != nil {
				return err
			}
			rep.Handoff = append(rep.Handoff, h)
		}
	}
	if !missing {
		for i := range rep.Results {
			r := &rep.Results[i]
			r.Files.Missing, r.Errors.Missing, r.Identifiers.Missing, r.UserText.Missing = nil, nil, nil, nil
		}
	}
	if a.jsonOut {
		if err := writeJSON(a.stdout, rep); err != nil {
			return err
		}
	} else {
		printBench(a.stdout, rep.Results, rep.Handoff, missing)
	}
	grew := 0
	for _, r := range rep.Results {
		if !r.Nothing && !r.Invariants.Smaller {
			grew++
		}
	}
	if grew > 0 {
		return fmt.Errorf("%s left the context no smaller than before (the rows marked grew)", plural(grew, "compaction"))
	}
	return nil
}

// benchSuite runs the handoff suite (package retention/handoff) with the
// summarizer the flags choose and prints its table, or the whole report
// with --json. A compaction that grew the context fails the command once
// the report is printed.
func (a *app) benchSuite(cmd *cobra.Command, seeds int, lf *limitFlags, sf *summarizerFlags) error {
	lf.keepRecent = handoff.KeepRecentFor(handoff.DefaultSizes[len(handoff.DefaultSizes)-1])
	su, err := a.loadSummarySetup(cmd, lf, sf)
	if err != nil {
		return err
	}
	reserve := su.st.cfg.ReserveTokens
	if reserve <= 0 {
		reserve = compact.DefaultReserveTokens
	}
	sum, _, err := a.summarizers(su.choice, reserve)
	if err != nil {
		return err
	}
	name := su.choice.name
	if name != summarizerExtractive {
		name = su.choice.model
	}
	a.progressf("running the handoff suite with %s...", name)
	rep, err := handoff.Run(cmd.Context(), handoff.Options{Summarizer: sum, Name: name, MaxTokens: summarize.ReserveBudget(reserve), Seeds: seeds})
	if err != nil {
		return err
	}
	if a.jsonOut {
		err = writeJSON(a.stdout, rep)
	} else {
		fmt.Fprintf(a.stdout, "handoff suite, summarizer %s, %d seeds per row\n", rep.Summarizer, rep.Seeds)
		err = handoff.WriteTable(a.stdout, rep)
	}
	if err != nil {
		return err
	}
	grew := 0
	for _, r := range rep.Rows {
		grew += r.Grew
	}
	if grew > 0 {
		return fmt.Errorf("--suite: %d compactions left the context no smaller than before", grew)
	}
	return nil
}

// printBench writes the table of results, one block per session.
func printBench(w io.Writer, results []retention.Result, handoffs []handoffReport, missing bool) {
	for i := 0; i < len(results); {
		file := results[i].Session
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, file)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  keep\tmethod\tcontext before → after\tfiles\terrors\tidentifiers\tuser text\tinvariants\tcost\tsaves/request\tpays back after")
		var notes []string
		for ; i < len(results) && results[i].Session == file; i++ {
			r := results[i]
			if r.Nothing {
				fmt.Fprintf(tw, "  %s\t%s\tnothing to compact\t\t\t\t\t\t\t\t\n", numfmt.Thousands(r.KeepRecent), r.Method)
				continue
			}
			cost, saves, back := "?", "?", "?"
			if e := r.Cost; e != nil {
				cost, saves, back = dollarsCell(e.Compaction), dollarsCell(e.SavedCached), breakEvenCell(e)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s → %s (%.1f%%)\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", numfmt.Thousands(r.KeepRecent), r.Method,
				numfmt.Thousands(r.TokensBefore), numfmt.Thousands(r.TokensAfter), r.Ratio(), recallCell(r.Files), recallCell(r.Errors),
				recallCell(r.Identifiers), recallCell(r.UserText), invariantsCell(r.Invariants), cost, saves, back)
			if missing {
				notes = append(notes, missingNotes(r)...)
			}
		}
		tw.Flush()
		for _, n := range notes {
			fmt.Fprintln(w, n)
		}
		for _, h := range handoffs {
			if h.Session != file {
				continue
			}
			fmt.Fprintf(w, "  handoff at keep %s: %d/%d label checks pass\n", numfmt.Thousands(h.KeepRecent), h.Passed, len(h.Checks))
			for _, c := range h.Checks {
				verdict := "pass"
				if !c.Pass {
					verdict = "FAIL"
				}
				fmt.Fprintf(w, "    %-4s %-8s %s\n", verdict, c.Kind, c.Item.Text)
			}
		}
	}
}

// summaryPrices are the prices of what writes the summaries: none to pay
// for the offline summarizer, the summary model's (registry and config)
// for a model, nil when they are not known.
func summaryPrices(choice *summarizerChoice) *compact.Prices {
	if choice.name == summarizerExtractive {
		return &compact.Prices{}
	}
	return choice.info.Prices
}

// dollarsCell writes a dollar figure for the table, "?" when unknown.
func dollarsCell(v *float64) string {
	if v == nil {
		return "?"
	}
	return fmt.Sprintf("$%.4f", *v)
}

// breakEvenCell writes the requests a compaction needs to pay back.
func breakEvenCell(e *retention.Economics) string {
	switch {
	case e.BreakEven > 0:
		return plural(e.BreakEven, "request")
	case e.Compaction != nil && e.SavedCached != nil && *e.SavedCached > 0:
		return "at once"
	}
	return "?"
}

// labelFor returns the label whose session path ends file's path, nil
// when none does (or there are no labels).
func labelFor(labels *handoff.Labels, file string) *handoff.Label {
	if labels == nil {
		return nil
	}
	path := filepath.ToSlash(filepath.Clean(file))
	for i := range labels.Sessions {
		l := &labels.Sessions[i]
		_, rel, _ := strings.Cut(l.Session, ":")
		if rel == "" {
			rel = l.Session
		}
		if path == rel || strings.HasSuffix(path, "/"+strings.TrimPrefix(rel, "/")) {
			return l
		}
	}
	return nil
}

// checkHandoff checks the path against its label at the label's cut,
// with the benchmark's summarizer and budgets (handoff.Label.CheckPath).
func checkHandoff(ctx context.Context, file string, path []*compact.Entry, l *handoff.Label, sum compact.Summarizer, opts retention.Options) (handoffReport, error) {
	checks, err := l.CheckPath(ctx, path, sum, opts.MaxTokens, opts.TargetTokens)
	if checks == nil {
		return handoffReport{}, fmt.Errorf("%s: handoff at keep %d: %w", file, l.KeepRecent, err)
	}
	h := handoffReport{Session: file, KeepRecent: l.KeepRecent, Checks: checks}
	for _, c := range checks {
		if c.Pass {
			h.Passed++
		}
	}
	return h, nil
}

func recallCell(r retention.Recall) string {
	return fmt.Sprintf("%d/%d %.0f%%", r.Found, r.Total, r.Percent())
}

func invariantsCell(v retention.Invariants) string {
	if v.OK() {
		return "ok"
	}
	var bad []string
	if !v.ToolPairs {
		bad = append(bad, "pairs")
	}
	if !v.FirstRequest {
		bad = append(bad, "first")
	}
	if !v.UnderTarget {
		bad = append(bad, "target")
	}
	if !v.Smaller {
		bad = append(bad, "grew")
	}
	return "FAIL: " + strings.Join(bad, ",")
}

// missingNotes lists what one row did not find, one line each.
func missingNotes(r retention.Result) []string {
	var out []string
	head := fmt.Sprintf("  missing at keep %s (%s):", numfmt.Thousands(r.KeepRecent), r.Method)
	add := func(what string, items []string) {
		for _, it := range items {
			if len(out) == 0 {
				out = append(out, head)
			}
			out = append(out, "    "+what+": "+oneLine(shorten(it, 200)))
		}
	}
	add("file", r.Files.Missing)
	add("error", r.Errors.Missing)
	add("identifier", r.Identifiers.Missing)
	add("user text", r.UserText.Missing)
	add("orphan tool result", r.Invariants.Orphans)
	return out
}
