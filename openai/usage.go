package openai

import "github.com/compactkit/compact"

// ChatUsage is the "usage" object of a Chat Completions answer (and of a
// stream's last chunk when stream_options.include_usage is set).
// prompt_tokens includes the cached ones.
type ChatUsage struct {
	PromptTokens        int           `json:"prompt_tokens"`
	CompletionTokens    int           `json:"completion_tokens"`
	TotalTokens         int           `json:"total_tokens"`
	PromptTokensDetails CachedDetails `json:"prompt_tokens_details"`
}

// CachedDetails is the part of a usage object's input details this
// package reads.
type CachedDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// Usage maps u onto compact.Usage, the cached prompt tokens split out:
// Input = prompt_tokens - cached_tokens (never below 0), CacheRead =
// cached_tokens, Output = completion_tokens, Total = total_tokens.
func (u ChatUsage) Usage() compact.Usage {
	return splitCached(u.PromptTokens, u.PromptTokensDetails.CachedTokens, u.CompletionTokens, u.TotalTokens)
}

// ResponsesUsage is the "usage" object of a Responses answer (and of the
// response.completed event of a stream). input_tokens includes the
// cached ones.
type ResponsesUsage struct {
	InputTokens        int           `json:"input_tokens"`
	OutputTokens       int           `json:"output_tokens"`
	TotalTokens        int           `json:"total_tokens"`
	InputTokensDetails CachedDetails `json:"input_tokens_details"`
}

// Usage maps u onto compact.Usage as ChatUsage.Usage does: Input =
// input_tokens - cached_tokens (never below 0), CacheRead =
// cached_tokens, Output = output_tokens, Total = total_tokens.
func (u ResponsesUsage) Usage() compact.Usage {
	return splitCached(u.InputTokens, u.InputTokensDetails.CachedTokens, u.OutputTokens, u.TotalTokens)
}

func splitCached(input, cached, output, total int) compact.Usage {
	return compact.Usage{Input: max(input-cached, 0), CacheRead: cached, Output: output, Total: total}
}
