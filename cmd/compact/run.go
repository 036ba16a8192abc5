package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/compactkit/compact"
)

// summaryBudgetRatio is the share of the reserve a summary may use, as in
// pi: the rest stays free for the model's next response.
const summaryBudgetRatio = 0.8

// runReport is the JSON form of "compact run". The plan's fields come
// first; the others are set when the compaction was recorded.
type runReport struct {
	planReport
	File        string `json:"file"`
	DryRun      bool   `json:"dryRun"`
	Model       string `json:"model"`
	Window      int    `json:"window"`
	SummaryMax  int    `json:"summaryMaxTokens"`
	TokensAfter int    `json:"tokensAfter,omitempty"`
	Summary     string `json:"summary,omitempty"`
	EntryID     string `json:"entryId,omitempty"`
	Summarizer  string `json:"summarizer,omitempty"`
	DurationMS  int64  `json:"durationMs,omitempty"`
}

func (a *app) runCommand() *cobra.Command {
	var lf limitFlags
	var leaf, instructions string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "run FILE",
		Short: "Compact the session now with the offline summarizer",
		Long: `Run compacts the session at its leaf now. The history before the newest
--keep-recent tokens is summarized by the offline extractive summarizer (no
network, no model), and one compaction entry is appended to FILE. Nothing
else in the file changes; if anything fails, nothing is written.

The summary's output budget is 0.8 x --reserve tokens. A cut that falls
inside a turn summarizes that turn's start separately ("split turn"). The
files read and modified so far are listed at the end of every summary and
carried over from earlier compactions.

With --dry-run the plan is printed and nothing is written. When the whole
history fits in the kept part, "nothing to compact: <reason>" is printed
and the exit code is 0.

--window and --model only change what is reported; a manual run always
compacts, even when automatic compaction is disabled.`,
		Args: exactFile,
		RunE: a.action(func(cmd *cobra.Command, args []string) error {
			return a.run(cmd, args[0], leaf, instructions, dryRun, &lf)
		}),
	}
	f := cmd.Flags()
	f.BoolVar(&dryRun, "dry-run", false, "plan only: print what would be summarized and write nothing")
	f.StringVar(&instructions, "instructions", "", "focus for the summary, passed to the summarizer")
	f.StringVar(&leaf, "leaf", "", "entry id to compact at instead of the current leaf (the compaction starts a branch there)")
	lf.addKeepRecent(cmd)
	lf.addReserve(cmd)
	lf.addWindow(cmd)
	return cmd
}

func (a *app) run(cmd *cobra.Command, file, leaf, instructions string, dryRun bool, lf *limitFlags) error {
	st, err := a.loadSettings(cmd, lf)
	if err != nil {
		return err
	}
	a.progressf("loading %s...", file)
	s, err := a.openAt(file, leaf)
	if err != nil {
		return err
	}
	reserve := st.cfg.ReserveTokens
	if reserve <= 0 {
		reserve = compact.DefaultReserveTokens
	}
	keep := st.cfg.KeepRecentTokens
	if keep <= 0 {
		keep = compact.DefaultKeepRecentTokens
	}
	eng := &compact.Engine{
		Summarizer:       a.newSummarizer(),
		KeepRecentTokens: keep,
		Logger:           a.logger,
		OnEvent: func(ev compact.Event) {
			if ev.Type == compact.EventStart {
				a.progressf("summarizing %s...", plural(ev.MessagesSummarized, "message"))
			}
		},
	}
	req := compact.Request{Reason: compact.ReasonManual, Instructions: instructions,
		MaxTokens: int(summaryBudgetRatio * float64(reserve))}
	rep := runReport{File: file, DryRun: dryRun, SummaryMax: int(summaryBudgetRatio * float64(reserve))}
	reg, err := compact.LoadRegistry()
	if err != nil {
		return err
	}
	info, _, _ := st.modelLimits(reg, s.Context().Model)
	rep.Model, rep.Window = info.ID, info.ContextWindow
	ofWindow := func(tokens int) string {
		if rep.Window <= 0 {
			return ""
		}
		return fmt.Sprintf(" (%.1f%% of the %s-token window)", percent(tokens, rep.Window), num(rep.Window))
	}

	if dryRun {
		plan, err := eng.Plan(s, req)
		if errors.Is(err, compact.ErrNothingToCompact) {
			return a.nothingToCompact(err)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		rep.planReport = newPlanReport(s, plan, keep)
		if a.jsonOut {
			return writeJSON(a.stdout, rep)
		}
		fmt.Fprintf(a.stdout, "dry run of %s; nothing was written\n", file)
		printPlan(a.stdout, rep.planReport, "  ")
		fmt.Fprintf(a.stdout, "  context now: %s tokens%s\n", num(rep.TokensBefore), ofWindow(rep.TokensBefore))
		return nil
	}

	res, err := eng.Compact(cmd.Context(), s, req)
	if errors.Is(err, compact.ErrNothingToCompact) {
		return a.nothingToCompact(err)
	}
	if err != nil {
		return fmt.Errorf("%s: compaction failed, the file is unchanged: %w", file, err)
	}
	rep.planReport = newPlanReport(s, res.Plan, keep)
	rep.TokensAfter = res.TokensAfter
	rep.Summary = res.Summary
	rep.EntryID = res.Entry.ID
	rep.Summarizer = res.Summarizer
	rep.DurationMS = res.Duration.Milliseconds()
	if a.jsonOut {
		return writeJSON(a.stdout, rep)
	}
	w := a.stdout
	fmt.Fprintf(w, "compacted %s\n", file)
	printPlan(w, rep.planReport, "  ")
	fmt.Fprintf(w, "  context: %s tokens before, about %s after%s\n", num(rep.TokensBefore), num(rep.TokensAfter), ofWindow(rep.TokensAfter))
	fmt.Fprintf(w, "  summary: ~%s tokens by %s (budget %s)\n", num(compact.TextMessage(compact.RoleCompactionSummary, res.Summary).Tokens()), rep.Summarizer, num(rep.SummaryMax))
	fmt.Fprintf(w, "  appended compaction entry %s to %s\n", rep.EntryID, file)
	return nil
}

// nothingToCompact reports an empty plan. It is not an error.
func (a *app) nothingToCompact(err error) error {
	reason := nothingReason(err)
	if a.jsonOut {
		return writeJSON(a.stdout, nothingReport{NothingToCompact: true, Reason: reason})
	}
	fmt.Fprintf(a.stdout, "nothing to compact: %s\n", reason)
	return nil
}
