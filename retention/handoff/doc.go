// Package handoff measures a compaction as a handoff: whether the context
// the next model is given after a compaction still says what the task is,
// what was decided (and what was withdrawn), who owns what, what must not
// be done and what is still to do.
//
// It has two parts. Generate writes adversarial conversations, seeded and
// deterministic, each with its ground truth (a Case), in four families:
// a constraint buried early in long noise, a decision overridden later, a
// team whose roles are easy to confuse, and references back to earlier
// items ("the second option", "that file"). ScoreContext checks a rebuilt
// context against a case's truth; Run compacts every case with a
// summarizer, continues it and compacts again (drift cycles), and scores
// each cycle. Label.Check does the same against labels written by hand
// for real sessions (testdata/labels.json: the current goal, the next
// step, the decisions in force and the files at one cut of each).
//
// The scorer is independent of what the summarizers extract: it uses
// neither a model nor package facts nor the extractive summarizer's
// rules, only plain text matching against the truth the generator (or a
// person reading a session) wrote down:
//
//   - An item is present when the context, lowercased and with every run
//     of blanks folded to one space, holds the item's text, or when one
//     line of the context holds every one of the item's key words
//     (lowercased substrings). A line is a line of a message's text (a
//     list item of a summary with its indented continuation lines), or a
//     tool call's name and raw JSON arguments.
//   - A role is kept when one line holds the owner and every key word of
//     the task.
//   - A superseded decision is handled when no line holds it, or every
//     line that holds it also holds a mark (see SupersededMarks). It is
//     shown as current when a line that holds it without a mark stands in
//     a summary under a "Goal" or "Key Decisions" heading.
//   - Compression is the context's tokens after against before
//     (compact.Measure); a compaction that was written and left the
//     context no smaller is counted as grown.
//
// A label's goal counts only under a summary's Goal or Turn Request
// heading or in a user message kept verbatim, and its next step only
// under Next Steps or In Progress or in a kept message, so that a goal
// named in passing (a commit message) does not pass.
//
// Key words are a recall proxy: the generator keeps them out of its
// noise, so a line that holds them came from the turn that stated the
// item. A summary that pasted its whole input would score well on items;
// that is why compression is measured beside them.
package handoff
