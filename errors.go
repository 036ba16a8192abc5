package compact

import (
	"errors"
	"fmt"
	"time"
)

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

	// ErrSkipped means Engine.BeforeCompaction cancelled the compaction;
	// nothing was written.
	ErrSkipped = errors.New("compaction skipped by a hook")

	// ErrNotMessage means an operation on messages (a pin, say) was given
	// an entry that puts no message into the context.
	ErrNotMessage = errors.New("not a message entry")
)

// ProviderError is an error response from a model provider's API: the
// HTTP status and the body as received. Clients return it (wrapped or
// not) so that callers can classify failures with errors.As, for example
// with IsContextOverflow, and decide whether to retry.
type ProviderError struct {
	// Provider names the API ("openai", "anthropic", ...).
	Provider string
	// StatusCode is the HTTP status; 0 when the failure came inside a
	// successful response (a streamed error event, say).
	StatusCode int
	// Body is the response body, possibly shortened.
	Body string
	// RetryAfter is the wait the provider asked for (Retry-After header),
	// 0 when it did not say.
	RetryAfter time.Duration
}

func (e *ProviderError) Error() string {
	body := e.Body
	if len(body) > 300 {
		body = body[:300] + "..."
	}
	if e.StatusCode == 0 {
		return fmt.Sprintf("%s: %s", e.Provider, body)
	}
	return fmt.Sprintf("%s: HTTP %d: %s", e.Provider, e.StatusCode, body)
}

// Retryable reports whether the request may succeed if sent again: rate
// limits (429), server errors (5xx), and the overloaded status some
// providers use (529).
func (e *ProviderError) Retryable() bool {
	return e.StatusCode == 429 || e.StatusCode >= 500
}
