package anthropic

import "github.com/compactkit/compact"

// This file reads what an answer reports about itself, the same for the
// client's answers, the answers the proxy forwards and the ones a Claude
// Code transcript stores: its usage and its stop reason.

// Usage is the "usage" object of a Messages API answer, and of the
// message_start and message_delta events of a stream. input_tokens does
// not include the tokens read from or written to the cache, which are
// counted apart. A stream's counts are cumulative: an event's values
// replace the earlier ones and a member it leaves out keeps its value,
// which is why the members are pointers (nil: absent).
type Usage struct {
	InputTokens              *int `json:"input_tokens"`
	OutputTokens             *int `json:"output_tokens"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
	// CacheCreation splits cache_creation_input_tokens by the cache's
	// lifetime.
	CacheCreation *CacheCreation `json:"cache_creation"`
	// Iterations are the sampling steps of the call, each with its own
	// counts, when the API ran more than one: threshold compaction
	// (compact_20260112) summarizes the conversation in a step of type
	// "compaction" before the answer's step of type "message", and the
	// counts above are the answer's alone (SDK BetaIterationsUsage;
	// Anthropic's "Compaction at a token threshold" page).
	Iterations []Iteration `json:"iterations"`
}

// CacheCreation is the "cache_creation" member of a usage object: the
// tokens written to the five-minute and to the one-hour cache (SDK
// BetaCacheCreation).
type CacheCreation struct {
	Ephemeral5m int `json:"ephemeral_5m_input_tokens"`
	Ephemeral1h int `json:"ephemeral_1h_input_tokens"`
}

// Iteration is one entry of usage.iterations (SDK
// BetaMessageIterationUsage and its compaction sibling).
type Iteration struct {
	Type                     string         `json:"type"`
	InputTokens              int            `json:"input_tokens"`
	OutputTokens             int            `json:"output_tokens"`
	CacheReadInputTokens     int            `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int            `json:"cache_creation_input_tokens"`
	CacheCreation            *CacheCreation `json:"cache_creation"`
}

// Over returns prev with each count u holds put in its place: Input =
// input_tokens, Output = output_tokens, CacheRead =
// cache_read_input_tokens, CacheWrite = cache_creation_input_tokens,
// CacheWrite1h = cache_creation.ephemeral_1h_input_tokens, Compaction =
// the sum of the "compaction" entries of iterations (the top-level counts
// leave that step out; add it to count what the call billed). The proxy
// applies a stream's events this way, one over the other.
func (u Usage) Over(prev compact.Usage) compact.Usage {
	for _, c := range [...]struct {
		dst *int
		v   *int
	}{
		{&prev.Input, u.InputTokens}, {&prev.Output, u.OutputTokens},
		{&prev.CacheRead, u.CacheReadInputTokens}, {&prev.CacheWrite, u.CacheCreationInputTokens},
	} {
		if c.v != nil {
			*c.dst = *c.v
		}
	}
	if u.CacheCreation != nil {
		prev.CacheWrite1h = u.CacheCreation.Ephemeral1h
	}
	if u.Iterations != nil {
		var step compact.StepUsage
		for _, it := range u.Iterations {
			if it.Type != "compaction" {
				continue
			}
			step.Input += it.InputTokens
			step.Output += it.OutputTokens
			step.CacheRead += it.CacheReadInputTokens
			step.CacheWrite += it.CacheCreationInputTokens
			if it.CacheCreation != nil {
				step.CacheWrite1h += it.CacheCreation.Ephemeral1h
			}
		}
		prev.Compaction = step
	}
	return prev
}

// Usage maps u onto compact.Usage as Over does, an absent count being 0.
func (u Usage) Usage() compact.Usage {
	return u.Over(compact.Usage{})
}

// StopReason maps a Messages API stop_reason onto compact's:
// max_tokens and model_context_window_exceeded are StopLength (the
// answer was cut short), tool_use StopToolUse, end_turn, stop_sequence,
// pause_turn and refusal StopEnd. Any other value ("" for an answer still
// streaming, or a reason yet to come) gives "", for the caller to decide
// from the answer itself.
func StopReason(s string) compact.StopReason {
	switch s {
	case "max_tokens", "model_context_window_exceeded":
		return compact.StopLength
	case "tool_use":
		return compact.StopToolUse
	case "end_turn", "stop_sequence", "pause_turn", "refusal":
		return compact.StopEnd
	}
	return ""
}
