// Package extractive is the default, offline summarizer: it writes the
// structured Markdown summary of a compaction from the messages alone,
// with no network and no model.
//
// Nothing is paraphrased. Every line of the summary is a piece of the
// conversation picked by a fixed rule, or a short label around such a
// piece:
//
//   - Goal: the first user message of the summarized span and the latest
//     user request. The session's first request (the first user message
//     of a span without a previous summary) is quoted word for word;
//     the others are shortened when long.
//   - Constraints & Preferences: user sentences that state a rule or a
//     wish ("must", "never", "always", "don't", "prefer", "avoid", ...).
//   - Progress: under Done the files modified, the commands that
//     succeeded and the finished items of the latest todo list; under In
//     Progress the end of the assistant's last statement and the todo
//     items being worked on; under Blocked the failures (failed tool
//     results, non-zero exits, failed model calls) that no later success
//     of the same tool on the same target cleared. A search that found
//     nothing (grep exiting 1 without output) is not counted as a failure;
//     a command that exited 0 but printed compiler or test errors (a
//     build piped into tail) is. Each failure is quoted by its
//     distinctive line (package facts) and up to two more error lines.
//   - Key Decisions: assistant sentences that announce a choice ("instead",
//     "rather than", "decided", "switch to", ...).
//   - Next Steps: the open items of the latest todo list when a todo tool
//     was used, otherwise the plan sentences and numbered items of the
//     assistant's last statement. A previous summary's next steps that the
//     span shows done (an item the latest todo list marks done, a step
//     whose named files the span modified, a latest request the assistant
//     has answered since) move to Done instead of being carried forward.
//   - Critical Context: the requested focus, the commands run with their
//     exit status, errors that were resolved later, and the user's own
//     messages, verbatim and newest first within a token budget; older
//     ones are shortened with a marker saying how much was left out. Then
//     the files that shell commands touched (mv, cp, rm, redirections,
//     heredocs, sed -i, tee, ...) and the engine's file lists lack, and the
//     identifiers (ids, hashes, numbers, URLs, backticked names) the user
//     and the assistant wrote that no other section quotes, the user's and
//     the most mentioned first. Package facts finds these facts, for
//     this summarizer and for the retention benchmark alike.
//
// A previous summary is merged section by section: its items stay, the
// new ones follow, and only exact duplicates are dropped. Headings this
// package does not know are kept as subsections of Critical Context, and
// text without any heading under "### Earlier summary". When the output
// has to fit SummaryRequest.MaxTokens, the largest section is worked on
// first: its oldest long items are shortened, then its oldest items
// dropped, and every section that lost items says how many.
//
// The package is hand-written because no library does this job: the input
// is an agent's tool-calling transcript rather than prose, the output
// format is fixed by the compaction engine, and the result has to be
// deterministic. The same request always gives the same bytes: there is no
// clock, no randomness and no unsorted map iteration.
//
// The engine appends the <read-files> and <modified-files> blocks to every
// summary itself, so this package never writes them.
package extractive
