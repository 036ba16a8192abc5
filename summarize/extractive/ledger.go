package extractive

import (
	"context"
	"strings"

	"github.com/compactkit/compact"
)

// The ledger is the part of a hybrid summary that compact writes itself
// when a model writes the rest: the model tells the story (the goal, the
// state, the decisions with their reasons, what they superseded, the next
// step), and the ledger keeps, word for word and checked by rule, what a
// model paraphrases or drops: the user's messages, the errors with
// whether they were resolved, and the files shell commands touched that
// the engine's file lists lack (the engine appends the lists itself).

// LedgerHeading opens the ledger of a hybrid summary.
const LedgerHeading = "## Record Kept by compact"

// Titles of the ledger's parts.
const (
	titleLedgerErrors = "Errors"
)

// Ledger writes the ledger of req's messages, merged with the ledger of
// req.PreviousSummary when it has one, within maxTokens (0: no bound):
// the user's messages verbatim, newest first, those that state a rule or
// change a plan before the others when the budget runs short, a later
// message's override marked; each error with "open" or "resolved"; the
// files touched by shell commands. It returns "" when there is nothing to
// record. The same request always gives the same text.
func (s *Summarizer) Ledger(ctx context.Context, req *compact.SummaryRequest, maxTokens int) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	var opts Options
	if s != nil {
		opts = s.Options
	}
	opts = opts.withDefaults()
	if maxTokens > 0 {
		// The user's messages are chosen by priority within their part
		// of the budget, rather than cut oldest first by the shrink.
		opts.UserBudgetTokens = min(opts.UserBudgetTokens, maxTokens*2/3)
	}
	f := extract(req.Messages)
	h := decisionHistory(f)

	record := newSection(2, strings.TrimPrefix(LedgerHeading, "## "), false)
	users := record.sub(3, titleUsers, false)
	users.newestFirst = true
	errs := record.sub(3, titleLedgerErrors, false)
	shellFiles := record.sub(3, titleShellFiles, false)
	d := &document{sections: []*section{record}}

	users.blocks = userBlocks(h.marked(f.users), opts, focusWords(req.Instructions))
	open, fixed := splitFailures(f.failures)
	addFailures(errs, fixed, opts.MaxErrors, "earlier resolved errors", "Resolved: ", "")
	addFailures(errs, open, opts.MaxErrors, "earlier open errors", "Open: ", "")
	addShellFiles(shellFiles, f.commands, req.ReadFiles, req.ModifiedFiles)

	if _, prev := SplitLedger(previousSummary(req)); prev != "" {
		for _, p := range parsePrevious(prev) {
			switch compact.SummaryHeadingKey(p.title) {
			case compact.SummaryHeadingKey(titleUsers):
				users.prev = append(users.prev, p.blocks...)
			case compact.SummaryHeadingKey(titleLedgerErrors):
				errs.prev = append(errs.prev, p.blocks...)
			case compact.SummaryHeadingKey(titleShellFiles):
				shellFiles.prev = append(shellFiles.prev, p.blocks...)
			}
		}
		d.finish()
	}
	if len(users.blocks)+len(errs.blocks)+len(shellFiles.blocks) == 0 {
		return "", nil
	}
	if maxTokens > 0 {
		if err := d.shrink(ctx, maxTokens, opts); err != nil {
			return "", err
		}
	}
	return d.render(), nil
}

// SplitLedger splits a summary into what precedes its ledger and the
// ledger (from LedgerHeading to the next "## " heading that is not its
// own, or the end), "" when it has none. The turn-prefix part and the
// file lists the engine appends stay with the first part.
func SplitLedger(summary string) (rest, ledger string) {
	i := strings.Index(summary, LedgerHeading)
	if i < 0 || (i > 0 && summary[i-1] != '\n') {
		return summary, ""
	}
	body := summary[i:]
	end := len(body)
	for _, stop := range []string{"\n## ", "\n---\n", "\n<read-files>", "\n<modified-files>"} {
		if j := strings.Index(body[len(LedgerHeading):], stop); j >= 0 && len(LedgerHeading)+j < end {
			end = len(LedgerHeading) + j
		}
	}
	rest = strings.TrimSpace(summary[:i]) + "\n\n" + strings.TrimSpace(body[end:])
	return strings.TrimSpace(rest), strings.TrimSpace(body[:end])
}
