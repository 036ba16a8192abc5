package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/numfmt"
	"github.com/compactkit/compact/session"
)

// planReport is what a compaction would do, as printed by inspect and by
// run --dry-run.
type planReport struct {
	// FirstKeptEntryIndex is the position of the first kept entry among
	// the session's entries, counted from 0 without the header
	// (session.Index), whatever the file's version. The human output
	// prints the same number. It is not the firstKeptEntryIndex stored in
	// a version 1 file, which counts the header (and any line pi keeps
	// that this reader skips), so is usually one more.
	FirstKeptEntryIndex int    `json:"firstKeptEntryIndex"`
	FirstKeptEntryID    string `json:"firstKeptEntryId"`
	// MessagesToSummarize counts the history before the turn that was cut,
	// not the prefix of that turn (see TurnPrefixMessages).
	MessagesToSummarize int  `json:"messagesToSummarize"`
	IsSplitTurn         bool `json:"isSplitTurn"`
	TurnPrefixMessages  int  `json:"turnPrefixMessages"`
	// SummarizedTokens estimates the history and the turn prefix together.
	SummarizedTokens int  `json:"summarizedTokens"`
	KeptTokens       int  `json:"keptTokens"`
	KeepRecentTokens int  `json:"keepRecentTokens"`
	TokensBefore     int  `json:"tokensBefore"`
	PreviousSummary  bool `json:"previousSummary"`
	// PinnedEntryIDs are the pinned messages before the kept part: they
	// stay after the summary (their tokens are in KeptTokens).
	PinnedEntryIDs []string `json:"pinnedEntryIds"`
	ReadFiles      []string `json:"readFiles"`
	ModifiedFiles  []string `json:"modifiedFiles"`
}

// nothingReport is printed when there is nothing to compact.
type nothingReport struct {
	NothingToCompact bool   `json:"nothingToCompact"`
	Reason           string `json:"reason"`
	// NothingToGain is set when a summary was written but not recorded
	// because it would not have made the context smaller.
	NothingToGain bool `json:"nothingToGain,omitempty"`
}

// planCompaction plans a compaction of path, the session's current path.
// It returns a nil plan and the reason when there is nothing to compact.
func planCompaction(s *session.Session, path []*compact.Entry, keep int) (*compact.Plan, string, error) {
	plan, err := compact.PlanCompaction(path, compact.PlanOptions{KeepRecentTokens: keep})
	if errors.Is(err, compact.ErrNothingToCompact) {
		return nil, nothingReason(err), nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", s.Name(), err)
	}
	return plan, "", nil
}

// nothingReason is the reason of an ErrNothingToCompact error without the
// sentinel's own words.
func nothingReason(err error) string {
	if ge, ok := errors.AsType[*compact.GainError](err); ok {
		return ge.Error()
	}
	msg := err.Error()
	msg = strings.TrimSuffix(msg, ": "+compact.ErrNothingToCompact.Error())
	if msg == compact.ErrNothingToCompact.Error() {
		return "no message to summarize"
	}
	return msg
}

// newPlanReport describes a plan. keep is the keep-recent budget used.
func newPlanReport(s *session.Session, plan *compact.Plan, keep int) planReport {
	if keep <= 0 {
		keep = compact.DefaultKeepRecentTokens
	}
	r := planReport{
		FirstKeptEntryIndex: s.Index(plan.FirstKeptID),
		FirstKeptEntryID:    plan.FirstKeptID,
		MessagesToSummarize: len(plan.Messages),
		IsSplitTurn:         plan.IsSplitTurn,
		TurnPrefixMessages:  len(plan.TurnPrefix),
		KeptTokens:          plan.KeptTokens,
		KeepRecentTokens:    keep,
		TokensBefore:        plan.TokensBefore,
		PreviousSummary:     plan.PreviousCompaction != nil,
		PinnedEntryIDs:      nonNil(plan.PinnedIDs),
		ReadFiles:           nonNil(plan.ReadFiles),
		ModifiedFiles:       nonNil(plan.ModifiedFiles),
	}
	for _, m := range plan.Messages {
		r.SummarizedTokens += m.Tokens()
	}
	for _, m := range plan.TurnPrefix {
		r.SummarizedTokens += m.Tokens()
	}
	return r
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// printPlan writes the human form of a plan, each line indented.
func printPlan(w io.Writer, r planReport, indent string) {
	fmt.Fprintf(w, "%skeeps entry %s (entry index %d, from 0, header not counted) and everything after it verbatim: ~%s tokens (budget %s)\n",
		indent, r.FirstKeptEntryID, r.FirstKeptEntryIndex, numfmt.Thousands(r.KeptTokens), numfmt.Thousands(r.KeepRecentTokens))
	if n := len(r.PinnedEntryIDs); n > 0 {
		fmt.Fprintf(w, "%skeeps %s pinned before it, right after the summary (counted in the kept tokens): %s\n",
			indent, plural(n, "message"), strings.Join(r.PinnedEntryIDs, ", "))
	}
	fmt.Fprintf(w, "%ssummarizes %s (~%s tokens)", indent, plural(r.MessagesToSummarize+r.TurnPrefixMessages, "message"), numfmt.Thousands(r.SummarizedTokens))
	if r.IsSplitTurn {
		fmt.Fprintf(w, ": %s of history + %s of the turn the cut falls in (split turn)", plural(r.MessagesToSummarize, "message"), plural(r.TurnPrefixMessages, "message"))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%sprevious summary merged: %s; files: %d read, %d modified\n",
		indent, yesNo(r.PreviousSummary), len(r.ReadFiles), len(r.ModifiedFiles))
}
