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
// each cycle. CheckLabels does the same against labels written by hand
// for real sessions.
//
// The scorer is independent of what the summarizers extract: it uses
// neither a model nor package facts nor the extractive summarizer's
// rules, only plain text matching against the truth the generator (or a
// person reading a session) wrote down:
//
//   - An item is present when the context, lowercased and with every run
//     of blanks folded to one space, holds the item's text, or when one
//     line of the context holds every one of the item's key words
//     (lowercased substrings).
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
// Key words are a recall proxy: the generator keeps them out of its
// noise, so a line that holds them came from the turn that stated the
// item. A summary that pasted its whole input would score well on items;
// that is why compression is measured beside them.
package handoff
