package compact

import (
	"errors"
	"fmt"
	"strings"
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

	// ErrNothingToGain means a compaction was summarized but not
	// recorded because it would not make the context smaller: the summary
	// would take as many tokens as the span it replaces, or more. The
	// errors that wrap it (a *GainError, with the numbers) also match
	// ErrNothingToCompact, so that a caller that takes "nothing to
	// compact" as no failure takes this the same way.
	ErrNothingToGain = errors.New("nothing to gain")

	// ErrSummaryRejected means a model's summary was refused by the
	// summarizer's review (a refusal, an apology, a reply far too short
	// for what it replaces, one missing its sections or losing the
	// session's request) and, asked once more, the model did no better.
	// The errors that wrap it are *SummaryRejectedError. The engine then
	// writes the offline summary when it has a Fallback, whatever the
	// request's FallbackMode: such a reply must never replace the history.
	ErrSummaryRejected = errors.New("summary rejected")

	// ErrNotMessage means an operation on messages (a pin, say) was given
	// an entry that puts no message into the context.
	ErrNotMessage = errors.New("not a message entry")
)

// GainError is the error of a compaction that was not recorded because
// it would not shrink the context (see ErrNothingToGain). Both counts
// are estimates (Message.Tokens), made the same way.
type GainError struct {
	// SummaryTokens is the size of the summary that would have been
	// recorded, file lists included.
	SummaryTokens int
	// SpanTokens is the size of what it would have replaced in the
	// context: the messages summarized, as the model sees them, and the
	// previous compaction's summary (Plan.SpanTokens).
	SpanTokens int
	// TokensBefore and TokensAfter are set when the context as a whole
	// would not shrink although the summary is smaller than its span:
	// the size before is the provider's report (Plan.TokensBefore), which
	// can be far below what the same messages are estimated at.
	TokensBefore, TokensAfter int
}

// Error says what was compared: "nothing to gain: the summary would be
// ~N tokens, the span it replaces ~M", or "nothing to gain: the context
// would be ~N tokens, it is M now".
func (e *GainError) Error() string {
	if e.TokensAfter > 0 {
		return fmt.Sprintf("nothing to gain: the context would be ~%d tokens, it is %d now", e.TokensAfter, e.TokensBefore)
	}
	return fmt.Sprintf("nothing to gain: the summary would be ~%d tokens, the span it replaces ~%d", e.SummaryTokens, e.SpanTokens)
}

// Is reports whether target is ErrNothingToGain or ErrNothingToCompact.
func (e *GainError) Is(target error) bool {
	return target == ErrNothingToGain || target == ErrNothingToCompact
}

// SummaryRejectedError is the error of a model summary that the review
// refused (see ErrSummaryRejected).
type SummaryRejectedError struct {
	// Summarizer is the model that wrote the reply.
	Summarizer string
	// Problems says what was wrong with the last reply, one short phrase
	// each ("a refusal", "no Next Steps section", ...).
	Problems []string
}

// Error lists the problems: "summary rejected: a refusal; too short".
func (e *SummaryRejectedError) Error() string {
	by := ""
	if e.Summarizer != "" {
		by = " from " + e.Summarizer
	}
	return fmt.Sprintf("summary%s rejected: %s", by, strings.Join(e.Problems, "; "))
}

// Is reports whether target is ErrSummaryRejected.
func (e *SummaryRejectedError) Is(target error) bool { return target == ErrSummaryRejected }

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
