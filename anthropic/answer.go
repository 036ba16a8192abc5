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
}

// Over returns prev with each count u holds put in its place: Input =
// input_tokens, Output = output_tokens, CacheRead =
// cache_read_input_tokens, CacheWrite = cache_creation_input_tokens.
// The proxy applies a stream's events this way, one over the other.
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
