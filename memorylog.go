package compact

import (
	"context"
	"time"
)

// A MemoryLog keeps every compaction's summary outside the session, in a
// durable record of its own: a later compaction folds an earlier summary
// into a new one and drops its wording from the context, while the memory
// log still has it, word for word, with when and why it was written. Set
// Engine.Memory to keep one; package memlog writes it as a Markdown file.
type MemoryLog interface {
	// Remember records one compaction. It is called once the compaction
	// entry is in the session; an error is reported (Result.MemoryErr)
	// but does not undo the compaction.
	Remember(ctx context.Context, rec MemoryRecord) error
}

// MemoryRecord is one compaction as a MemoryLog keeps it.
type MemoryRecord struct {
	// Time is when the compaction was recorded.
	Time time.Time
	// Session names the conversation (Request.Session): a session file,
	// an id; "" when the caller gave none.
	Session string
	// EntryID is the id of the compaction entry in the session.
	EntryID string
	// Reason is why the compaction ran.
	Reason Reason
	// TokensBefore and TokensAfter are the context sizes around it.
	TokensBefore, TokensAfter int
	// Summarizer names what wrote the summary.
	Summarizer string
	// Summary is the summary text, file lists included.
	Summary string
	// ReadFiles and ModifiedFiles are the files the agent had read and
	// modified up to this compaction.
	ReadFiles, ModifiedFiles []string
}
