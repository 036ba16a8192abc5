package compact

import "encoding/json"

// EventJSON is the JSON form of an Event: what Event.MarshalJSON writes,
// and the body of the proxy's compaction hooks (which add the fields of
// the conversation beside these). Durations are whole milliseconds and
// errors their messages; fields an event does not carry are left out.
type EventJSON struct {
	Type   EventType `json:"type"`
	Reason Reason    `json:"reason,omitempty"`
	// TokensBefore and TokensAfter are Event's (TokensAfter 0 on failure
	// and for EventStart).
	TokensBefore int `json:"tokensBefore"`
	TokensAfter  int `json:"tokensAfter"`
	// MessagesSummarized is the number of messages the summary replaces.
	MessagesSummarized int `json:"messagesSummarized,omitempty"`
	// DurationMS is Event.Duration in milliseconds.
	DurationMS int64  `json:"durationMs,omitempty"`
	Summarizer string `json:"summarizer,omitempty"`
	// Usage is the summarizer's own usage, when it reported one.
	Usage *Usage `json:"usage,omitempty"`
	// Error is Event.Err's message, FallbackError Event.FallbackErr's.
	Error         string   `json:"error,omitempty"`
	FallbackError string   `json:"fallbackError,omitempty"`
	Adjustments   []string `json:"adjustments,omitempty"`
	Strategies    []string `json:"strategies,omitempty"`
	// ContextUsage is the context's measure (see Event.ContextUsage),
	// absent when not measured.
	ContextUsage *ContextUsage `json:"contextUsage,omitempty"`
}

// JSON returns the JSON form of e.
func (e Event) JSON() EventJSON {
	j := EventJSON{Type: e.Type, Reason: e.Reason, TokensBefore: e.TokensBefore, TokensAfter: e.TokensAfter,
		MessagesSummarized: e.MessagesSummarized, DurationMS: e.Duration.Milliseconds(), Summarizer: e.Summarizer,
		Usage: e.Usage, Adjustments: e.Adjustments, Strategies: e.Strategies}
	if e.Err != nil {
		j.Error = e.Err.Error()
	}
	if e.FallbackErr != nil {
		j.FallbackError = e.FallbackErr.Error()
	}
	if e.ContextUsage != (ContextUsage{}) {
		cu := e.ContextUsage
		j.ContextUsage = &cu
	}
	return j
}

// MarshalJSON writes e as its EventJSON, so that an event logged or sent
// as JSON has one shape wherever it goes.
func (e Event) MarshalJSON() ([]byte, error) { return json.Marshal(e.JSON()) }
