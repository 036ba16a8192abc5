// Package retention measures what a compaction keeps: it compacts a copy
// of a conversation, held in memory, at several kept-part budgets, and
// checks the rebuilt context for the facts of the summarized span.
//
// The measures, each on the span the summary replaced:
//
//   - compression: the context's tokens before and after (compact.Measure),
//     and the span's estimate against the summary's;
//   - file recall: every file the span read, wrote or edited, through the
//     file tools or through shell commands (mv, cp, rm, redirections,
//     heredocs, sed -i, tee, ...), named in the rebuilt context;
//   - error recall: the distinctive line of every failing tool output,
//     errors printed by commands that exited 0 included, present in it;
//   - identifier recall: the ids, hashes, numbers, URLs and backticked
//     names the user or the assistant wrote, present as whole tokens;
//   - user text: the share of user messages present verbatim (blanks
//     aside);
//   - invariants: no tool result without its call, the session's first
//     request present verbatim, the context under the target.
//
// What a fact is, and where its line or name is, comes from package
// facts, which the extractive summarizer reads too: the benchmark and
// the summarizer share one definition. So 100% means that every fact is
// present in the context the model is given, not that a model will make
// good use of it; a summarizer that pasted its input would score 100%
// too, which is why compression is measured beside recall.
//
// The session is compacted in memory: nothing is written, and any
// summarizer (the offline one or a model) can be measured the same way.
package retention
