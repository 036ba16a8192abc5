package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/agents"
	"github.com/compactkit/compact/internal/numfmt"
	"github.com/compactkit/compact/memlog"
	"github.com/compactkit/compact/session"
	"github.com/compactkit/compact/summarize"
)

// runReport is the JSON form of "compact run". The plan's fields come
// first; the others are set when the compaction was recorded.
type runReport struct {
	planReport
	File       string `json:"file"`
	DryRun     bool   `json:"dryRun"`
	Model      string `json:"model"`
	Window     int    `json:"window"`
	SummaryMax int    `json:"summaryMaxTokens"`
	// TargetTokens is the size the context must fit under after the
	// compaction (the policy's target); 0 when the window is unknown.
	TargetTokens int    `json:"targetTokens,omitempty"`
	TokensAfter  int    `json:"tokensAfter,omitempty"`
	Summary      string `json:"summary,omitempty"`
	EntryID      string `json:"entryId,omitempty"`
	// Summarizer names what wrote the summary: "extractive" or the
	// summary model.
	Summarizer string `json:"summarizer,omitempty"`
	// SummarizerUsage is the summary model's own token usage, summed over
	// its requests; absent for the offline summarizer.
	SummarizerUsage *usageReport `json:"summarizerUsage,omitempty"`
	// Fallback is set after a real run: true when the model failed and
	// the offline summary was written instead, with FallbackError the
	// model's failure.
	Fallback      *bool  `json:"fallback,omitempty"`
	FallbackError string `json:"fallbackError,omitempty"`
	// Refused lists what was wrong with a first model reply that the
	// review refused, when the model's second reply was used.
	Refused []string `json:"refused,omitempty"`
	// Adjustments lists what the headroom guarantee changed, one sentence
	// each; absent when nothing was needed.
	Adjustments []string `json:"adjustments,omitempty"`
	DurationMS  int64    `json:"durationMs,omitempty"`
	// MemoryLog is the memory log the summary was appended to.
	MemoryLog string `json:"memoryLog,omitempty"`
}

func (a *app) runCommand() *cobra.Command {
	var lf limitFlags
	var sf summarizerFlags
	var leaf, instructions, memoryLog string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "run FILE",
		Short: "Compact the session now",
		Long: `Run compacts the session at its leaf now. The history before the newest
--keep-recent tokens is summarized and one compaction entry is appended to
FILE. Nothing else in the file changes; if anything fails, nothing is
written.

The summary is written by the offline extractive summarizer (no network,
no model) unless --summarizer names a model provider:

  openai     the Chat Completions API, or any server that speaks it
             (llama.cpp, Ollama, vLLM, LM Studio, OpenRouter) via --base-url
  anthropic  the Messages API

A model summarizer needs --summary-model (or the config's summaryModel),
and that model's context window: from the registry, the config's models,
--summary-window or the config's summaryWindow. Histories larger than the
summary model's window are summarized in chunks. Rate limits, server errors
and timeouts are retried up to 5 times with growing waits, honouring
Retry-After. --timeout limits each request (default 10m), --total-timeout
the whole summary with its retries and waits (default 20m); the error says
which of the two ran out. Keys come from OPENAI_API_KEY or
ANTHROPIC_API_KEY (or the config's apiKey), base URLs from --base-url,
OPENAI_BASE_URL or ANTHROPIC_BASE_URL. A redirect is not followed: the
error names the address it points to. No error, warning or fallback note
shows a key: the configured keys, bearer tokens, api-key header values and
sk- keys that a server quotes back are replaced by REDACTED. When the model
fails, the command fails and writes nothing, unless --fallback extractive
is given: the offline summary is then written instead, marked as written
without a model, and a warning is printed. Every model reply is reviewed
first: a refusal, an apology, a reply far too short for the history, one
without the headings asked for or one that loses the user's request is
refused, the model is asked once more and told why, and if the second
reply is no better the offline summary is written (with --fallback none
too: such a reply must never replace the history).

The summary's output budget is 0.8 x --reserve tokens. A cut that falls
inside a turn summarizes that turn's start separately ("split turn"). The
files read and modified so far are listed at the end of every summary and
carried over from earlier compactions.

When the session model's window is known (registry, --window, --model or
the config), the rebuilt context must fit under the trigger policy's target
(half the window by default): if the summary and the kept part would not,
the kept part is shrunk first, then the summary is shortened with its
headings kept, and each such adjustment is printed.

FILE is locked while the entry is written, and the entry is written only
if FILE is as it was read. If another process (a running agent) appended
to it meanwhile, run warns, reads it again and compacts once more; if it
changed again, run stops and writes nothing. pi takes no lock and attaches
its next entry to the leaf it holds in memory: compacting a session that a
running pi has open leaves the compaction on a side branch.

With --dry-run the plan is printed and nothing is written. When the whole
history fits in the kept part, "nothing to compact: <reason>" is printed
with the sizes compared, and the exit code is 0. A summary that would
not make the context smaller (as many tokens as the messages it replaces,
or more) is not appended: "nothing to gain: ..." is printed, with both
sizes, and the exit code is 0. A manual run always compacts, even when automatic
compaction is disabled.`,
		Args: exactFile,
		RunE: a.action(func(cmd *cobra.Command, args []string) error {
			return a.run(cmd, args[0], leaf, instructions, memoryLog, dryRun, &lf, &sf)
		}),
	}
	f := cmd.Flags()
	f.BoolVar(&dryRun, "dry-run", false, "plan only: print what would be summarized and write nothing")
	f.StringVar(&instructions, "instructions", "", "focus for the summary, passed to the summarizer")
	f.StringVar(&leaf, "leaf", "", "entry id to compact at instead of the current leaf (the compaction starts a branch there)")
	f.StringVar(&memoryLog, "memory-log", "", "Markdown file the summary is also appended to, one dated section per compaction (config memoryLog)")
	lf.addKeepRecent(cmd)
	lf.addReserve(cmd)
	lf.addWindow(cmd)
	sf.add(cmd)
	a.addFormatFlag(cmd)
	return cmd
}

func (a *app) run(cmd *cobra.Command, file, leaf, instructions, memoryLog string, dryRun bool, lf *limitFlags, sf *summarizerFlags) error {
	su, err := a.loadSummarySetup(cmd, lf, sf)
	if err != nil {
		return err
	}
	st, reg, choice, policy := su.st, su.reg, su.choice, su.policy
	if !cmd.Flags().Changed("memory-log") {
		memoryLog = st.cfg.MemoryLog
	}
	if memoryLog != "" && !dryRun {
		// Refuse before compacting: a summary that could not be kept
		// there would be a surprise after the fact.
		if fi, err := os.Stat(filepath.Dir(memoryLog)); err != nil || !fi.IsDir() {
			return usagef("--memory-log %s: folder %s does not exist", memoryLog, filepath.Dir(memoryLog))
		}
		if fi, err := os.Stat(memoryLog); err == nil && fi.IsDir() {
			return usagef("--memory-log %s is a folder; give a file", memoryLog)
		}
	}
	a.progressf("loading %s...", file)
	open := a.openAt
	if dryRun {
		open = a.openRead // a plan reads other agents' files too
	} else if a.format != "" && a.format != agents.Pi {
		return usagef("--format %s: run appends to FILE, which must be a pi session; use --dry-run, or compact import first", a.format)
	} else if a.instance != "" {
		return usagef("--instance %s: run appends to FILE, which must be a pi session; use --dry-run, or compact import first", a.instance)
	}
	s, err := open(file, leaf)
	if err != nil {
		return err
	}
	if !dryRun {
		// Refuse before any work (or a paid model call) that could not be
		// recorded.
		if err := s.Appendable(); err != nil {
			return err
		}
	}
	reserve := st.cfg.ReserveTokens
	if reserve <= 0 {
		reserve = compact.DefaultReserveTokens
	}
	keep := st.cfg.KeepRecentTokens
	if keep <= 0 {
		keep = compact.DefaultKeepRecentTokens
	}
	var primary, fallback compact.Summarizer
	if !dryRun {
		if primary, fallback, err = a.summarizers(choice, reserve); err != nil {
			return err
		}
	}
	by := ""
	if choice.name != summarizerExtractive {
		by = " with " + choice.model
	}
	eng := &compact.Engine{
		Summarizer:       primary,
		Fallback:         fallback,
		KeepRecentTokens: keep,
		OnEvent: func(ev compact.Event) {
			if ev.Type == compact.EventStart {
				a.progressf("summarizing %s%s...", plural(ev.MessagesSummarized, "message"), by)
			}
		},
	}
	if a.verbose {
		// Without -v the engine stays quiet: its warning about a fallback
		// would repeat the warning line printed below.
		eng.Logger = a.logger
	}
	if memoryLog != "" {
		eng.Memory = memlog.New(memoryLog)
	}
	req := compact.Request{Reason: compact.ReasonManual, Instructions: instructions, Session: file,
		MaxTokens: summarize.ReserveBudget(reserve), Fallback: compact.FallbackOff}
	if choice.fallback {
		req.Fallback = compact.FallbackOn
	}
	rep := runReport{File: file, DryRun: dryRun, SummaryMax: req.MaxTokens}
	info, _, _, err := st.fitModel(reg, s.Context().Model, a.recorded[file])
	if err != nil {
		return err
	}
	rep.Model, rep.Window = info.ID, info.ContextWindow
	if info.ContextWindow > 0 {
		// The headroom guarantee: the rebuilt context must fit under the
		// policy's target for the session's model.
		req.TargetTokens = policy.Target(info)
		rep.TargetTokens = req.TargetTokens
	}
	ofWindow := func(tokens int) string {
		if rep.Window <= 0 {
			return ""
		}
		return fmt.Sprintf(" (%.1f%% of the %s-token window)", percent(tokens, rep.Window), numfmt.Thousands(rep.Window))
	}

	if dryRun {
		plan, adjustments, err := eng.PlanAdjusted(s, req)
		if errors.Is(err, compact.ErrNothingToCompact) {
			return a.nothingToCompact(err)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		rep.planReport = newPlanReport(s, plan, keep)
		rep.Adjustments = adjustments
		if a.jsonOut {
			return writeJSON(a.stdout, rep)
		}
		fmt.Fprintf(a.stdout, "dry run of %s; nothing was written\n", file)
		printPlan(a.stdout, rep.planReport, "  ")
		fmt.Fprintf(a.stdout, "  context now: %s tokens%s\n", numfmt.Thousands(rep.TokensBefore), ofWindow(rep.TokensBefore))
		for _, adj := range adjustments {
			fmt.Fprintf(a.stdout, "  adjusted: %s\n", groupDigits(adj))
		}
		return nil
	}

	ctx := cmd.Context()
	res, err := eng.Compact(ctx, a.sessionLog(s), req)
	if errors.Is(err, session.ErrChanged) {
		// Another process (an agent) appended since the load: the plan
		// was made on a stale view. Plan once more on what is there now.
		a.warn(changedWarning(file, "compacting", nil))
		if s, err = a.openAt(file, leaf); err != nil {
			return err
		}
		res, err = eng.Compact(ctx, a.sessionLog(s), req)
		if errors.Is(err, session.ErrChanged) {
			return changedAgain(file, "compacting", nil)
		}
	}
	if errors.Is(err, compact.ErrNothingToCompact) {
		return a.nothingToCompact(err)
	}
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s: interrupted, the file is unchanged: %w", file, ctx.Err())
		}
		if errors.Is(err, session.ErrPartialLine) {
			return fmt.Errorf("%s: compaction failed: %w", file, err)
		}
		return fmt.Errorf("%s: compaction failed, the file is unchanged: %w", file, err)
	}
	rep.planReport = newPlanReport(s, res.Plan, keep)
	rep.TokensAfter = res.TokensAfter
	rep.Summary = res.Summary
	rep.EntryID = res.Entry.ID
	rep.Summarizer = res.Summarizer
	rep.SummarizerUsage = newUsageReport(res.Usage)
	fellBack := res.FallbackErr != nil
	rep.Fallback = &fellBack
	if fellBack {
		rep.FallbackError = oneLine(a.redact(res.FallbackErr.Error()))
		what := "failed"
		if errors.Is(res.FallbackErr, compact.ErrSummaryRejected) {
			what = "gave a reply that was refused twice"
		}
		a.warn(fmt.Sprintf("the %s summarizer %s, so the summary was written offline by the extractive summarizer: %s",
			choice.name, what, rep.FallbackError))
	}
	if len(res.Refused) > 0 {
		rep.Refused = res.Refused
		a.warn(fmt.Sprintf("the model's first reply was refused (%s); its second was used", strings.Join(res.Refused, "; ")))
	}
	rep.Adjustments = res.Adjustments
	rep.DurationMS = res.Duration.Milliseconds()
	if res.MemoryErr != nil {
		// The compaction is in the session; say so, and fail.
		return fmt.Errorf("%s: compaction %s was appended, but %w", file, rep.EntryID, res.MemoryErr)
	}
	if memoryLog != "" {
		rep.MemoryLog = memoryLog
	}
	if a.jsonOut {
		return writeJSON(a.stdout, rep)
	}
	w := a.stdout
	fmt.Fprintf(w, "compacted %s\n", file)
	printPlan(w, rep.planReport, "  ")
	fmt.Fprintf(w, "  context: %s tokens before, about %s after%s\n", numfmt.Thousands(rep.TokensBefore), numfmt.Thousands(rep.TokensAfter), ofWindow(rep.TokensAfter))
	note := ""
	if fellBack {
		note = ", written without a model"
	}
	fmt.Fprintf(w, "  summary: ~%s tokens by %s%s (budget %s)\n", numfmt.Thousands(compact.TextMessage(compact.RoleCompactionSummary, res.Summary).Tokens()),
		rep.Summarizer, note, numfmt.Thousands(rep.SummaryMax))
	if rep.SummarizerUsage != nil {
		fmt.Fprintf(w, "  summarizer usage: %s\n", rep.SummarizerUsage)
	}
	for _, adj := range rep.Adjustments {
		fmt.Fprintf(w, "  adjusted: %s\n", groupDigits(adj))
	}
	fmt.Fprintf(w, "  appended compaction entry %s to %s\n", rep.EntryID, file)
	if rep.MemoryLog != "" {
		fmt.Fprintf(w, "  summary appended to the memory log %s\n", rep.MemoryLog)
	}
	return nil
}

// nothingToCompact reports an empty plan. It is not an error.
func (a *app) nothingToCompact(err error) error {
	reason := nothingReason(err)
	gain := errors.Is(err, compact.ErrNothingToGain)
	if a.jsonOut {
		return writeJSON(a.stdout, nothingReport{NothingToCompact: true, Reason: reason, NothingToGain: gain})
	}
	if gain {
		// The reason begins "nothing to gain: ".
		fmt.Fprintf(a.stdout, "%s; nothing was written\n", groupDigits(reason))
		return nil
	}
	fmt.Fprintf(a.stdout, "nothing to compact: %s\n", groupDigits(reason))
	return nil
}
