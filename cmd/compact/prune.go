package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/numfmt"
	"github.com/compactkit/compact/session"
)

// strategyNames returns the names of strategies, in order.
func strategyNames(strategies []compact.Strategy) []string {
	names := make([]string, len(strategies))
	for i, s := range strategies {
		names[i] = s.Name()
	}
	return names
}

// passReport is one strategy of "compact prune" and of inspect's
// strategies section, in JSON.
type passReport struct {
	Strategy string `json:"strategy"`
	// Applied is true when the strategy produced a pass: recorded, or
	// for a dry run, one that would be.
	Applied     bool `json:"applied"`
	TokensFreed int  `json:"tokensFreed"`
	// Edits counts the messages the pass replaces.
	Edits          int    `json:"edits"`
	FirstChangedID string `json:"firstChangedId,omitempty"`
	// CacheBreakIndex is the context index from which the provider's
	// prompt cache is rewritten; -1 when nothing changes.
	CacheBreakIndex int `json:"cacheBreakIndex"`
	TokensBefore    int `json:"tokensBefore"`
	TokensAfter     int `json:"tokensAfter"`
	// EntryID is the context_edit entry appended; absent for a dry run
	// or a strategy that did nothing.
	EntryID string `json:"entryId,omitempty"`
}

func newPassReport(p compact.PassReport) passReport {
	r := passReport{Strategy: p.Strategy, CacheBreakIndex: p.CacheBreakIndex, TokensBefore: p.TokensBefore, TokensAfter: p.TokensAfter}
	if p.Edit != nil {
		r.Applied = true
		r.TokensFreed = p.Edit.TokensFreed
		r.Edits = len(p.Edit.Edits)
		r.FirstChangedID = p.Edit.FirstChangedID
	}
	if p.Entry != nil {
		r.EntryID = p.Entry.ID
	}
	return r
}

// pruneReport is the JSON form of "compact prune".
type pruneReport struct {
	File   string `json:"file"`
	DryRun bool   `json:"dryRun"`
	// Target is the size the ladder stopped under; 0 when every listed
	// strategy ran.
	Target       int          `json:"target"`
	TokensBefore int          `json:"tokensBefore"`
	TokensAfter  int          `json:"tokensAfter"`
	UnderTarget  bool         `json:"underTarget"`
	Passes       []passReport `json:"passes"`
	// Error is set when a pass failed after earlier ones were recorded:
	// Passes are then the passes in the file, and the command exits 1.
	Error string `json:"error,omitempty"`
}

// strategyFlags are the options of the cheap strategies. The zero values
// are the library's defaults.
type strategyFlags struct {
	maskTurns    int
	keepToolUses int
	clearInputs  bool
	excludeTools []string
	protectTools []string
	minFree      string
}

func (f *strategyFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.IntVar(&f.maskTurns, "mask-turns", 0, fmt.Sprintf("mask: newest turns whose tool outputs stay (0: the default, %d)", compact.DefaultMaskTurns))
	fl.IntVar(&f.keepToolUses, "keep-tool-uses", 0, fmt.Sprintf("clear_tool_uses: newest tool uses kept (0: the default, %d)", compact.DefaultClearKeep))
	fl.BoolVar(&f.clearInputs, "clear-inputs", false, "clear_tool_uses: also replace the arguments of the cleared calls")
	fl.StringSliceVar(&f.excludeTools, "exclude-tools", nil, "clear_tool_uses: tools whose uses are never cleared (comma-separated)")
	fl.StringSliceVar(&f.protectTools, "protect-tools", nil, "prune: tools whose outputs are never pruned (comma-separated)")
	fl.StringVar(&f.minFree, "min-free", "", fmt.Sprintf(`least a pass must free to be recorded, in tokens, or "cache" for the cost of rewriting the prompt cache; 0 accepts any saving (default: each strategy's own: prune more than %s, clear_tool_uses cache, the others 0)`,
		numfmt.Thousands(compact.DefaultPruneMinimumFree)))
}

// strategies builds the named strategies with the options given.
func (f *strategyFlags) strategies(cmd *cobra.Command, names []string) ([]compact.Strategy, error) {
	flags := cmd.Flags()
	set := func(name string) bool { fl := flags.Lookup(name); return fl != nil && fl.Changed }
	if f.maskTurns < 0 {
		return nil, usagef("--mask-turns must not be negative, got %d", f.maskTurns)
	}
	if f.keepToolUses < 0 {
		return nil, usagef("--keep-tool-uses must not be negative, got %d", f.keepToolUses)
	}
	minFree, haveMin := 0, set("min-free")
	if haveMin {
		switch v := strings.TrimSpace(f.minFree); v {
		case "cache":
			minFree = compact.CacheRewriteCost
		default:
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return nil, usagef("--min-free %q: want a number of tokens (0 or more) or \"cache\"", f.minFree)
			}
			minFree = n
		}
	}
	// anyOr maps --min-free onto the fields where 0 means a default
	// rather than any saving: there, any saving is a negative value other
	// than CacheRewriteCost.
	anyOr := func(n int) int {
		if n == 0 {
			return -2
		}
		return n
	}
	var out []compact.Strategy
	seen := map[string]bool{}
	for _, name := range names {
		name = strings.TrimSpace(name)
		s, err := compact.StrategyByName(name)
		if err != nil {
			return nil, usagef("--strategy: %v", err)
		}
		if seen[name] {
			return nil, usagef("--strategy %s is given twice", name)
		}
		seen[name] = true
		switch s := s.(type) {
		case compact.Prune:
			s.ProtectedTools = f.protectTools
			if haveMin {
				s.MinimumFree = anyOr(minFree)
			}
			out = append(out, s)
		case compact.ClearToolUses:
			s.Keep = f.keepToolUses
			s.ClearInputs = f.clearInputs
			s.ExcludeTools = f.excludeTools
			if haveMin {
				s.ClearAtLeast = anyOr(minFree)
			}
			out = append(out, s)
		case compact.Mask:
			s.Turns = f.maskTurns
			s.MinFree = minFree
			out = append(out, s)
		case compact.Truncate:
			s.MinFree = minFree
			out = append(out, s)
		case compact.StripImages:
			s.MinFree = minFree
			out = append(out, s)
		default:
			out = append(out, s)
		}
	}
	return out, nil
}

func (a *app) pruneCommand() *cobra.Command {
	var lf limitFlags
	var sf strategyFlags
	var names []string
	var leaf string
	var target int
	var toTarget, dryRun bool
	cmd := &cobra.Command{
		Use:   "prune FILE",
		Short: "Free context with the cheap strategies, without a summary",
		Long: `Prune runs the cheap tier over the context at the session's leaf: the
strategies replace the content of some messages with shorter text, without
a model and without summarizing anything. They run in the order given,
each on the context the previous ones left; a strategy with nothing worth
the break of the provider's prompt cache is skipped.

Strategies (--strategy, repeatable; default strip_images, mask, truncate):

  strip_images     images older than the current turn become a one-line
                   marker
  mask             tool outputs older than the newest --mask-turns turns
                   (default 10) become a placeholder naming their size and
                   entry
  truncate         long texts (500+ characters, not among the newest 3 of
                   their role, not the first user message) keep their head
                   and tail; the middle is replaced by a note
  prune            tool outputs older than the newest 2 turns and 40,000
                   tokens of tool output are cleared, if that frees more
                   than 20,000 tokens (--protect-tools exempts tools)
  clear_tool_uses  from 100,000 tokens on, the results of all but the
                   newest --keep-tool-uses (default 3) tool uses are
                   cleared, if that frees more than rewriting the prompt
                   cache costs (--clear-inputs, --exclude-tools)

Each pass is appended to FILE as one context_edit entry; nothing stored is
changed or deleted, and "compact context --original" still shows the
stored messages. pi ignores these entries. With --target or --to-target the
ladder stops as soon as the context is under the target.

For each strategy the output gives the tokens freed, the messages edited
and where the prompt cache breaks: the index, in the context before the
pass, of the first changed message and its entry id. Every message from
there on is sent to the provider's cache again.

Each entry is written only if FILE is as the command last saw it. If
another process (a running agent) appended to it meanwhile, prune warns,
keeps the passes already appended, reads the file again and plans once
more; if it changed again, prune stops.

With --dry-run nothing is written: each strategy is planned on the context
the earlier ones would leave.

Exit codes: 0 when every strategy ran or was skipped, or the target was
reached; 2 for a usage error, before anything is read. 1 when a pass fails:
each pass is its own append, so the passes recorded before the failure stay
in FILE. The output then lists them, the error line names their entries
("the pass recorded before the failure stays in the file ...: ID
(strategy)"), and with --json the report carries "error"; when no pass was
recorded, the error line ends "nothing was written".`,
		Args: exactFile,
		RunE: a.action(func(cmd *cobra.Command, args []string) error {
			flags := cmd.Flags()
			if !flags.Lookup("strategy").Changed {
				names = strategyNames(compact.DefaultLadder())
			}
			if len(names) == 0 {
				return usagef("--strategy: no strategy named (want %s)", strings.Join(strategyNames(compact.Strategies()), ", "))
			}
			if target < 0 {
				return usagef("--target must not be negative, got %d", target)
			}
			if toTarget && flags.Lookup("target").Changed {
				return usagef("--target and --to-target exclude each other")
			}
			strategies, err := sf.strategies(cmd, names)
			if err != nil {
				return err
			}
			return a.prune(cmd, args[0], leaf, strategies, target, toTarget, dryRun, &lf)
		}),
	}
	f := cmd.Flags()
	f.StringSliceVar(&names, "strategy", nil, "strategy to run, in order; repeatable or comma-separated: "+strings.Join(strategyNames(compact.Strategies()), ", ")+" (default "+strings.Join(strategyNames(compact.DefaultLadder()), ", ")+")")
	f.IntVar(&target, "target", 0, "stop once the context is under this many tokens (0: run every strategy)")
	f.BoolVar(&toTarget, "to-target", false, "stop once under the trigger policy's target for the session's model (half the window by default)")
	f.BoolVar(&dryRun, "dry-run", false, "plan only: print what each strategy would free and write nothing")
	f.StringVar(&leaf, "leaf", "", "entry id to prune at instead of the current leaf (the entries start a branch there)")
	sf.add(cmd)
	lf.addWindow(cmd)
	lf.addReserve(cmd)
	lf.addPolicy(cmd)
	return cmd
}

func (a *app) prune(cmd *cobra.Command, file, leaf string, strategies []compact.Strategy, target int, toTarget, dryRun bool, lf *limitFlags) error {
	st, err := a.loadSettings(cmd, lf)
	if err != nil {
		return err
	}
	s, err := a.openAt(file, leaf)
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
	if toTarget {
		reg, err := compact.LoadRegistry()
		if err != nil {
			return err
		}
		policy, err := st.cfg.TriggerPolicy()
		if err != nil {
			return err
		}
		info, _, _, err := st.fitModel(reg, s.Context().Model, 0)
		if err != nil {
			return err
		}
		if info.ContextWindow <= 0 {
			return usagef("--to-target: the context window of model %q is unknown (give --window, or --target N)", info.ID)
		}
		target = policy.Target(info)
	}
	ctx := cmd.Context()
	slog := a.sessionLog(s)
	res, err := compact.Ladder{Strategies: strategies}.Run(ctx, a.ladderLog(slog), target, dryRun)
	var kept []*compact.Entry
	if errors.Is(err, session.ErrChanged) {
		// Another process (an agent) appended since the load: plan once
		// more on what is there now. Passes appended before the change
		// stay; with --leaf the new ones follow them.
		kept = slog.appended
		a.warn(changedWarning(file, "pruning", kept))
		at := leaf
		if leaf != "" && len(kept) > 0 {
			at = kept[len(kept)-1].ID
		}
		if s, err = a.openAt(file, at); err != nil {
			return fmt.Errorf("%w (%s)", err, keptNote(kept))
		}
		slog = a.sessionLog(s)
		res, err = compact.Ladder{Strategies: strategies}.Run(ctx, a.ladderLog(slog), target, dryRun)
		if errors.Is(err, session.ErrChanged) {
			return changedAgain(file, "pruning", append(kept, slog.appended...))
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("interrupted: %w", ctx.Err())
		}
		recorded := recordedPasses(res)
		if len(kept) > 0 {
			recorded = append([]string{describeEntries(kept)}, recorded...)
		}
		if len(recorded) == 0 {
			return fmt.Errorf("%s: %w; nothing was written", file, err)
		}
		// Each pass is its own append: the ones before the failure stay in
		// the file. Show them as a normal run would, then say exactly what
		// was written.
		r := newPruneReport(file, dryRun, res)
		r.Error = oneLine(err.Error())
		if a.jsonOut {
			if werr := writeJSON(a.stdout, r); werr != nil {
				return werr
			}
		} else {
			printPrune(a.stdout, r, strategies, dryRun)
		}
		written := "the pass recorded before the failure stays"
		if len(recorded) > 1 {
			written = fmt.Sprintf("the %d passes recorded before the failure stay", len(recorded))
		}
		return fmt.Errorf("%s: %w; %s in the file as context_edit entries: %s", file, err, written, strings.Join(recorded, ", "))
	}
	r := newPruneReport(file, dryRun, res)
	if a.jsonOut {
		return writeJSON(a.stdout, r)
	}
	printPrune(a.stdout, r, strategies, dryRun)
	return nil
}

// recordedPasses names the context_edit entries a ladder appended, as
// "id (strategy)"; res may be nil.
func recordedPasses(res *compact.LadderResult) []string {
	var ids []string
	if res == nil {
		return nil
	}
	for _, p := range res.Passes {
		if p.Entry != nil {
			ids = append(ids, fmt.Sprintf("%s (%s)", p.Entry.ID, p.Strategy))
		}
	}
	return ids
}

// newPruneReport describes a ladder's result.
func newPruneReport(file string, dryRun bool, res *compact.LadderResult) pruneReport {
	r := pruneReport{File: file, DryRun: dryRun, Target: res.Target, TokensBefore: res.TokensBefore,
		TokensAfter: res.TokensAfter, UnderTarget: res.UnderTarget, Passes: make([]passReport, 0, len(res.Passes))}
	for _, p := range res.Passes {
		r.Passes = append(r.Passes, newPassReport(p))
	}
	return r
}

// printPrune writes the human form of a prune report. When the report
// carries an error, the strategies after the recorded passes did not run
// because of it.
func printPrune(w io.Writer, r pruneReport, strategies []compact.Strategy, dryRun bool) {
	switch {
	case dryRun:
		fmt.Fprintf(w, "dry run of %s; nothing was written\n", r.File)
	case r.Error != "":
		fmt.Fprintf(w, "pruned %s in part; a later pass failed\n", r.File)
	default:
		fmt.Fprintf(w, "pruned %s\n", r.File)
	}
	for _, p := range r.Passes {
		printPass(w, p, "  ", dryRun)
	}
	for _, st := range strategies[min(len(r.Passes), len(strategies)):] {
		if r.Error != "" {
			fmt.Fprintf(w, "  %-16s not recorded: %s\n", st.Name(), r.Error)
			continue
		}
		fmt.Fprintf(w, "  %-16s not run: the context is already under the target\n", st.Name())
	}
	fmt.Fprintf(w, "  context: %s -> %s tokens", numfmt.Thousands(r.TokensBefore), numfmt.Thousands(r.TokensAfter))
	if r.TokensBefore > r.TokensAfter {
		fmt.Fprintf(w, " (%s freed)", numfmt.Thousands(r.TokensBefore-r.TokensAfter))
	}
	fmt.Fprintln(w)
	if r.Target > 0 {
		state := "reached"
		if !r.UnderTarget {
			state = "not reached"
		}
		fmt.Fprintf(w, "  target: %s tokens, %s\n", numfmt.Thousands(r.Target), state)
	}
	var ids []string
	for _, p := range r.Passes {
		if p.EntryID != "" {
			ids = append(ids, fmt.Sprintf("%s (%s)", p.EntryID, p.Strategy))
		}
	}
	switch {
	case dryRun:
	case len(ids) == 0:
		fmt.Fprintf(w, "  nothing appended to %s\n", r.File)
	default:
		fmt.Fprintf(w, "  appended %s to %s: %s\n", plural(len(ids), "context_edit entry"), r.File, strings.Join(ids, ", "))
	}
}

// printPass writes one strategy's line: what it frees and where the
// prompt cache breaks.
func printPass(w io.Writer, p passReport, indent string, would bool) {
	if !p.Applied {
		fmt.Fprintf(w, "%s%-16s nothing worth a cache break\n", indent, p.Strategy)
		return
	}
	verb := "freed"
	if would {
		verb = "would free"
	}
	fmt.Fprintf(w, "%s%-16s %s %s tokens in %s; cache breaks at #%d (entry %s)\n", indent, p.Strategy, verb,
		numfmt.Thousands(p.TokensFreed), plural(p.Edits, "message"), p.CacheBreakIndex, p.FirstChangedID)
}

// planStrategies plans every strategy alone, at its defaults, on path,
// the session's current path, writing nothing.
func planStrategies(ctx context.Context, s *session.Session, path []*compact.Entry) ([]passReport, error) {
	strategies := compact.Strategies()
	// Only the figures are kept, so the strategies need not build the new
	// content of every message they would edit.
	out := make([]passReport, 0, len(strategies))
	err := compact.Preview(ctx, path, strategies, compact.PreviewFigures, func(p compact.PassReport) error {
		out = append(out, newPassReport(p))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Name(), err)
	}
	return out, nil
}

// ladderLog is the log the ladder of prune appends to: the session, or
// what the app's wrapLog test hook makes of it.
func (a *app) ladderLog(l *sessionLog) compact.Log {
	if a.wrapLog != nil {
		return a.wrapLog(l)
	}
	return l
}

// keptNote says which entries an interrupted prune had already appended.
func keptNote(kept []*compact.Entry) string {
	if len(kept) == 0 {
		return "nothing was written"
	}
	return "already appended: " + describeEntries(kept)
}
