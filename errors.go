package compact

import "errors"

// Sentinel errors. Test for them with errors.Is; the returned errors wrap
// them with the details of the case.
var (
	// ErrNothingToCompact means the plan found no message to summarize: the
	// whole history fits in the part kept verbatim, or the session was just
	// compacted. No summarizer is called.
	ErrNothingToCompact = errors.New("nothing to compact")

	// ErrNoEntry means an entry id was not found.
	ErrNoEntry = errors.New("no such entry")

	// ErrUnknownWindow means the model's context window is not known, so
	// automatic compaction never triggers.
	ErrUnknownWindow = errors.New("context window unknown")

	// ErrDisabled means automatic compaction is switched off.
	ErrDisabled = errors.New("automatic compaction disabled")
)
