package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/compactkit/compact/report"
	"github.com/compactkit/compact/session"
)

// reportResult is the JSON form of "compact report".
type reportResult struct {
	File   string `json:"file"`
	Output string `json:"output"`
	Leaf   string `json:"leaf"`
	// Calls counts the model calls charted, EstimatedCalls those without
	// provider usage.
	Calls          int `json:"calls"`
	EstimatedCalls int `json:"estimatedCalls"`
	Messages       int `json:"messages"`
	Compactions    int `json:"compactions"`
	ContextEdits   int `json:"contextEdits"`
	Bytes          int `json:"bytes"`
}

func (a *app) reportCommand() *cobra.Command {
	var lf limitFlags
	var leaf, out string
	cmd := &cobra.Command{
		Use:   "report FILE [-o OUT]",
		Short: "Write an HTML report of the context over the session",
		Long: `Report writes one self-contained HTML page about the session at its leaf
(or --leaf): open it in a browser from disk; it loads nothing from the
network and prints as it shows.

The page holds:
  - a header: the file, session id, working folder, model, context window,
    trigger, and the numbers of model calls, messages and compactions;
  - a chart of the context size at every model call: the usage the
    provider reported, or an estimate (a hollow point) where it reported
    none, against the window and the trigger of the policy, with a marker
    for each compaction (automatic, forced by an overflow, or manual) and
    each context edit of "compact prune";
  - one card per compaction: tokens before and after, tokens freed,
    messages summarized, the summarizer and its cost when recorded, and
    the summary, one collapsible section per heading (goal, progress or
    current state, and next steps open);
  - the files read and modified, the estimated tokens by role and by tool,
    and the ten largest messages.

OUT defaults to FILE's name without its extension plus ".report.html", in
the current folder ("s.jsonl" gives "s.report.html"). An existing OUT is
replaced, atomically; OUT may not be FILE itself.

With --json the output is {"file", "output", "leaf", "calls",
"estimatedCalls", "messages", "compactions", "contextEdits", "bytes"}.`,
		Args: exactFile,
		RunE: a.action(func(cmd *cobra.Command, args []string) error {
			return a.report(cmd, args[0], leaf, out, &lf)
		}),
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", `HTML file to write (default: FILE's name without extension + ".report.html", in the current folder)`)
	cmd.Flags().StringVar(&leaf, "leaf", "", "entry id to report on instead of the current leaf")
	a.addFormatFlag(cmd)
	lf.addWindow(cmd)
	lf.addReserve(cmd)
	lf.addPolicy(cmd)
	return cmd
}

func (a *app) report(cmd *cobra.Command, file, leaf, out string, lf *limitFlags) error {
	if out == "" {
		out = defaultReportPath(file)
	}
	if err := checkReportOutput(file, out); err != nil {
		return err
	}
	o, err := a.openSized(cmd, file, leaf, lf)
	if err != nil {
		return err
	}
	st, s, info := o.st, o.s, o.info
	policy, err := st.cfg.TriggerPolicy()
	if err != nil {
		return err
	}
	h := s.Header()
	r, err := report.Build(report.Input{File: file, SessionID: h.ID, Cwd: h.Cwd, Entries: s.Entries(), Path: s.Path(),
		Model: info, Policy: policy, DisableAuto: st.cfg.DisableAuto})
	if err != nil {
		return err
	}
	var page bytes.Buffer
	if err := report.Render(&page, r); err != nil {
		return err
	}
	size := page.Len()
	if err := session.WriteFileAtomic(out, page.Bytes()); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	res := reportResult{File: file, Output: out, Leaf: r.Leaf, Calls: r.Calls, EstimatedCalls: r.Estimated,
		Messages: r.Messages, Compactions: r.Compactions, ContextEdits: r.Edits, Bytes: size}
	if a.jsonOut {
		return writeJSON(a.stdout, res)
	}
	at := "at leaf " + r.Leaf
	if r.Leaf == "" {
		at = "without entries"
	}
	fmt.Fprintf(a.stdout, "wrote %s: report of %s %s (%s, %s, %s)\n", out, file, at,
		plural(r.Calls, "model call"), plural(r.Compactions, "compaction"), plural(r.Edits, "context edit"))
	return nil
}

// defaultReportPath is the report's name when -o is not given: FILE's
// base name without its extension plus ".report.html", in the current
// folder.
func defaultReportPath(file string) string {
	base := filepath.Base(file)
	if ext := filepath.Ext(base); ext != "" && ext != base {
		base = strings.TrimSuffix(base, ext)
	}
	return base + ".report.html"
}

// checkReportOutput refuses an output that is the input (by name or, when
// both exist, as the same file), a folder, or in a folder that does not
// exist.
func checkReportOutput(file, out string) error {
	absIn, errIn := filepath.Abs(file)
	absOut, errOut := filepath.Abs(out)
	if errIn == nil && errOut == nil && absIn == absOut {
		return usagef("report: -o %s is the session file itself; give another name", out)
	}
	fo, err := os.Stat(out)
	if err == nil && fo.IsDir() {
		return usagef("report: -o %s is a folder; give a file", out)
	}
	if err == nil {
		if fi, err := os.Stat(file); err == nil && os.SameFile(fi, fo) {
			return usagef("report: -o %s is the session file itself; give another name", out)
		}
	}
	if fi, err := os.Stat(filepath.Dir(out)); err != nil || !fi.IsDir() {
		return usagef("report: -o %s: folder %s does not exist", out, filepath.Dir(out))
	}
	return nil
}
