package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/numfmt"
	"github.com/compactkit/compact/report"
	"github.com/compactkit/compact/tiktoken"
)

// inspectReport is the JSON form of "compact inspect".
type inspectReport struct {
	File     string `json:"file"`
	Leaf     string `json:"leaf"`
	Entries  int    `json:"entries"`
	Messages int    `json:"messages"`

	Model string `json:"model"`
	// Provider is the model's maker as the registry knows it, else the
	// provider the session names.
	Provider string `json:"provider"`
	// Via is the provider the session says it reached the model through,
	// when that is not the model's maker (an OpenAI-compatible gateway
	// serving a Claude model, say).
	Via          string `json:"via,omitempty"`
	ModelSource  string `json:"modelSource"`
	Window       int    `json:"window"`
	WindowSource string `json:"windowSource"`
	MaxOutput    int    `json:"maxOutput,omitempty"`

	Context contextSize `json:"context"`
	// PercentOfWindow is nil when the window is unknown.
	PercentOfWindow *float64 `json:"percentOfWindow"`

	Trigger triggerReport `json:"trigger"`

	ByRole []report.RoleStat `json:"byRole"`
	ByTool []report.ToolStat `json:"byTool"`

	// NextCompaction is a planReport, or a nothingReport when there is
	// nothing to compact.
	NextCompaction any `json:"nextCompaction"`

	// Strategies is what each cheap strategy would do alone, at its
	// defaults, on the current context.
	Strategies []passReport `json:"strategies"`
}

// contextSize explains the measured context size.
type contextSize struct {
	compact.ContextUsage
	// LastUsageEntryID is the entry whose provider usage was used, "" if
	// none.
	LastUsageEntryID string `json:"lastUsageEntryId,omitempty"`
	// TrailingMessages counts the messages estimated after it.
	TrailingMessages int `json:"trailingMessages"`
	// Counter is what counted them: "o200k_base" or "cl100k_base" (the
	// OpenAI model's own tokenizer, exact) or "estimate" (4 characters a
	// token).
	Counter string `json:"counter"`
	// ReportedTokens is the usage as the provider reported it, and
	// FreedSinceReport what the context edits recorded after it took off
	// (UsageTokens = ReportedTokens - FreedSinceReport); absent when no
	// edit came after the report.
	ReportedTokens   int `json:"reportedTokens,omitempty"`
	FreedSinceReport int `json:"freedSinceReport,omitempty"`
}

// triggerReport is the outcome of the automatic-compaction check.
type triggerReport struct {
	Policy string `json:"policy"`
	// Threshold is 0 when the window is unknown.
	Threshold    int    `json:"threshold"`
	WindowKnown  bool   `json:"windowKnown"`
	Disabled     bool   `json:"disabled"`
	WouldTrigger bool   `json:"wouldTrigger"`
	Reason       string `json:"reason"`
}

func (a *app) inspectCommand() *cobra.Command {
	var lf limitFlags
	var leaf string
	cmd := &cobra.Command{
		Use:   "inspect FILE",
		Short: "Show the model, the window, the context size and the next compaction",
		Long: `Inspect reports on the context the model sees at the session's leaf:

  - the model and provider (from the session, --model or the config) and its
    context window, with where the window came from (registry, flag, config
    or unknown);
  - the tokens in the context: the usage the provider reported on its last
    valid response plus an estimate (characters / 4) of the messages after
    it, and the share of the window they fill;
  - the trigger decision of the policy (default, reserve, ratio or input). When the
    window is unknown automatic compaction never triggers;
  - the context by role and by tool (calls and estimated result tokens);
  - where the next compaction would cut and what it would summarize;
  - what each cheap strategy of "compact prune" would do alone, at its
    defaults: the tokens it would free, the messages it would edit and
    where the provider's prompt cache would break (the context index and
    entry id of the first changed message), or "nothing worth a cache
    break". Each is planned on the current context, independently of the
    others; nothing is written.`,
		Args: exactFile,
		RunE: a.action(func(cmd *cobra.Command, args []string) error {
			return a.inspect(cmd, args[0], leaf, &lf)
		}),
	}
	cmd.Flags().StringVar(&leaf, "leaf", "", "entry id to inspect instead of the current leaf")
	a.addFormatFlag(cmd)
	lf.addWindow(cmd)
	lf.addReserve(cmd)
	lf.addKeepRecent(cmd)
	lf.addPolicy(cmd)
	return cmd
}

func (a *app) inspect(cmd *cobra.Command, file, leaf string, lf *limitFlags) error {
	o, err := a.openSized(cmd, file, leaf, lf)
	if err != nil {
		return err
	}
	st, s, ctx, info := o.st, o.s, o.ctx, o.info
	modelSource, windowSource := o.modelSource, o.windowSource
	// OpenAI models have public tokenizers: their messages are counted
	// exactly; the others with the estimate.
	counter := counterEstimate
	var usage compact.ContextUsage
	if tc, ok := tiktoken.ForModel(info.ID); ok {
		usage = compact.MeasureWith(ctx, tc.MessageTokens)
		counter = tc.Name()
	} else {
		usage = compact.Measure(ctx)
	}
	policy, err := st.cfg.TriggerPolicy()
	if err != nil {
		return err
	}
	decision := compact.Check(policy, info, usage, st.cfg.DisableAuto)
	threshold, known := policy.Threshold(info)

	r := inspectReport{
		File:         file,
		Leaf:         s.Leaf(),
		Entries:      s.Len(),
		Messages:     len(ctx.Messages),
		Model:        info.ID,
		Provider:     ctx.Provider,
		ModelSource:  modelSource,
		Window:       info.ContextWindow,
		WindowSource: windowSource,
		MaxOutput:    info.MaxOutput,
		Context:      contextSize{ContextUsage: usage, TrailingMessages: len(ctx.Messages) - usage.LastUsageIndex - 1, Counter: counter},
		Trigger: triggerReport{
			Policy:       decision.Policy,
			Threshold:    threshold,
			WindowKnown:  known,
			Disabled:     errors.Is(decision.Err, compact.ErrDisabled),
			WouldTrigger: decision.Compact,
			Reason:       decision.Reason,
		},
	}
	switch {
	case r.Provider == "" || (modelSource != fromSession && info.Provider != ""):
		// The session's provider does not apply to a model named by a
		// flag or the config.
		r.Provider = info.Provider
	case info.Provider != "" && !strings.EqualFold(info.Provider, r.Provider):
		// The registry knows who makes the model; the session's provider
		// is the road it took (Cline's providerId "openai" for an
		// OpenAI-compatible endpoint serving claude_4_5_opus).
		r.Provider, r.Via = info.Provider, r.Provider
	}
	if usage.LastUsageIndex >= 0 {
		r.Context.LastUsageEntryID = ctx.EntryIDs[usage.LastUsageIndex]
		if u, ok := ctx.Messages[usage.LastUsageIndex].ValidUsage(); ok && u.ContextTokens() != usage.UsageTokens {
			r.Context.ReportedTokens = u.ContextTokens()
			r.Context.FreedSinceReport = u.ContextTokens() - usage.UsageTokens
		}
	}
	if known && info.ContextWindow > 0 {
		p := percent(usage.Tokens, info.ContextWindow)
		r.PercentOfWindow = &p
	}
	if r.Trigger.Disabled && known {
		state := "would not trigger"
		if usage.Tokens > threshold {
			state = "would trigger"
		}
		r.Trigger.Reason = fmt.Sprintf("automatic compaction is disabled (%s or the config's disableAuto); with it on, %s tokens against the %s threshold of %s %s",
			compact.EnvDisableAuto, numfmt.Thousands(usage.Tokens), policy.Name(), numfmt.Thousands(threshold), state)
	} else if r.Trigger.Disabled {
		r.Trigger.Reason = fmt.Sprintf("automatic compaction is disabled (%s or the config's disableAuto); the context window of model %q is unknown as well, so it would never trigger anyway",
			compact.EnvDisableAuto, info.ID)
	}
	r.ByRole, r.ByTool = report.Composition(ctx.Messages)

	keep := st.cfg.KeepRecentTokens
	// One path for both plans: on a long session it is most of the
	// entries.
	path := s.Path()
	plan, reason, err := planCompaction(s, path, keep)
	if err != nil {
		return err
	}
	var pr planReport
	if plan != nil {
		pr = newPlanReport(s, plan, keep)
		r.NextCompaction = pr
	} else {
		r.NextCompaction = nothingReport{NothingToCompact: true, Reason: reason}
	}

	if r.Strategies, err = planStrategies(cmd.Context(), s, path); err != nil {
		return err
	}

	if a.jsonOut {
		return writeJSON(a.stdout, r)
	}
	w := a.stdout
	fmt.Fprintf(w, "file      %s (%s, leaf %s)\n", file, plural(r.Entries, "entry"), r.Leaf)
	model := r.Model
	if model == "" {
		model = "(none named)"
	}
	provider := ""
	if r.Provider != "" {
		provider = r.Provider + ", "
	}
	if r.Via != "" {
		provider += "through " + r.Via + ", "
	}
	fmt.Fprintf(w, "model     %s (%sfrom %s)\n", model, provider, sourceName(r.ModelSource))
	if r.Window > 0 {
		fmt.Fprintf(w, "window    %s tokens (from %s)\n", numfmt.Thousands(r.Window), sourceName(r.WindowSource))
	} else {
		fmt.Fprintf(w, "window    unknown: the model is not in the registry (set --window, or window or models in the config)\n")
	}
	fmt.Fprintf(w, "context   %s tokens in %s", numfmt.Thousands(usage.Tokens), plural(r.Messages, "message"))
	if r.PercentOfWindow != nil {
		fmt.Fprintf(w, ", %.1f%% of the window", *r.PercentOfWindow)
	}
	fmt.Fprintln(w)
	if usage.LastUsageIndex >= 0 {
		reported := usage.UsageTokens
		if r.Context.FreedSinceReport != 0 {
			reported = r.Context.ReportedTokens
		}
		fmt.Fprintf(w, "          = %s reported by the provider on message #%d (entry %s)\n",
			numfmt.Thousands(reported), usage.LastUsageIndex, r.Context.LastUsageEntryID)
		if r.Context.FreedSinceReport != 0 {
			fmt.Fprintf(w, "          - %s freed by the context edits recorded after it\n", numfmt.Thousands(r.Context.FreedSinceReport))
		}
		fmt.Fprintf(w, "          + %s %s for the %s after it\n", numfmt.Thousands(usage.TrailingTokens), countedBy(r.Context.Counter), plural(r.Context.TrailingMessages, "message"))
	} else {
		fmt.Fprintf(w, "          = %s %s (no usable provider usage since the last compaction)\n", numfmt.Thousands(usage.TrailingTokens), countedBy(r.Context.Counter))
	}
	printTrigger(w, r.Trigger)

	// The name column is as wide as the longest name (an MCP tool's, say),
	// so that the numbers stay under their headings.
	width := 16
	for _, rs := range r.ByRole {
		width = max(width, utf8.RuneCountInString(rs.Role))
	}
	for _, ts := range r.ByTool {
		width = max(width, utf8.RuneCountInString(ts.Tool))
	}
	fmt.Fprintf(w, "\n%-*s %9s %10s\n", width+2, "by role", "messages", "~tokens")
	for _, rs := range r.ByRole {
		fmt.Fprintf(w, "  %-*s %9s %10s\n", width, rs.Role, numfmt.Thousands(rs.Messages), numfmt.Thousands(rs.Tokens))
	}
	if len(r.ByTool) > 0 {
		fmt.Fprintf(w, "\n%-*s %9s %7s %15s\n", width+2, "by tool", "calls", "errors", "~result tokens")
		for _, ts := range r.ByTool {
			fmt.Fprintf(w, "  %-*s %9s %7s %15s\n", width, ts.Tool, numfmt.Thousands(ts.Calls), numfmt.Thousands(ts.Errors), numfmt.Thousands(ts.ResultTokens))
		}
	}
	fmt.Fprintln(w)
	if plan != nil {
		fmt.Fprintln(w, "next compaction")
		printPlan(w, pr, "  ")
	} else {
		fmt.Fprintf(w, "next compaction: nothing to compact: %s\n", groupDigits(reason))
	}
	fmt.Fprintln(w, "\ncheap strategies (each alone at its defaults; see compact prune)")
	for _, p := range r.Strategies {
		printPass(w, p, "  ", true)
	}
	return nil
}

// printTrigger writes the trigger decision in words.
func printTrigger(w io.Writer, t triggerReport) {
	switch {
	case t.Disabled:
		fmt.Fprintf(w, "trigger   %s policy: disabled. %s\n", t.Policy, groupDigits(t.Reason))
	case !t.WindowKnown:
		fmt.Fprintf(w, "trigger   %s policy: automatic compaction never triggers, because the context window is unknown\n", t.Policy)
	case t.WouldTrigger:
		fmt.Fprintf(w, "trigger   %s policy, threshold %s tokens: would trigger now (the context is above it)\n", t.Policy, numfmt.Thousands(t.Threshold))
	default:
		fmt.Fprintf(w, "trigger   %s policy, threshold %s tokens: would not trigger (the context is within it)\n", t.Policy, numfmt.Thousands(t.Threshold))
	}
}

func sourceName(s string) string {
	switch s {
	case fromFlag:
		return "the command line"
	case fromConfig:
		return "the config file"
	case fromSession:
		return "the session"
	case fromRegistry:
		return "the registry"
	case fromFile:
		return "the file"
	}
	return s
}

// counterEstimate names compact's estimate in reports.
const counterEstimate = "estimate"

// countedBy says how trailing tokens were counted.
func countedBy(counter string) string {
	if counter == counterEstimate {
		return "estimated"
	}
	return "counted exactly with " + counter
}
