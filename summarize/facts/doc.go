// Package facts finds, in a conversation's messages, the facts a
// compaction must keep and that a benchmark checks: the files that shell
// commands touched (mv, cp, rm, redirections, heredocs, sed -i, tee, ...),
// the failing tool outputs and the line that identifies each error
// (errors that compilers and test runners print under exit code 0
// included), and the identifiers (ids, hashes, numbers, URLs, backticked
// names) the user and the assistant wrote.
//
// The extractive summarizer and the retention benchmark both read the
// facts from here, so a fact means the same to the one that keeps it and
// the one that looks for it. That makes the benchmark's 100% mean
// "present in the context", not "understood by a model".
//
// Shell command lines are parsed with mvdan.cc/sh/v3/syntax, a
// maintained parser of POSIX shell and Bash (BSD-3-Clause): quoting,
// heredocs, redirections and compound commands are read as the shell
// reads them, which a hand-written splitter gets wrong at the edges.
package facts
