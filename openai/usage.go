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
// package reads: the prompt tokens read from the cache, and those written
// to it where the model bills cache writes apart (explicit prompt caching
// on GPT-5.6 and later; the member is absent, so 0, elsewhere; its name as
// the Azure AI Projects SDK's ResponseUsageInputTokensDetails mirrors it).
type CachedDetails struct {
	CachedTokens     int `json:"cached_tokens"`
	CacheWriteTokens int `json:"cache_write_tokens"`
}

// Usage maps u onto compact.Usage, the cached prompt tokens split out:
// Input = prompt_tokens - cached_tokens - cache_write_tokens (never below
// 0), CacheRead = cached_tokens, CacheWrite = cache_write_tokens, Output =
// completion_tokens, Total = total_tokens.
func (u ChatUsage) Usage() compact.Usage {
	return splitCached(u.PromptTokens, u.PromptTokensDetails, u.CompletionTokens, u.TotalTokens)
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
// input_tokens - cached_tokens - cache_write_tokens (never below 0),
// CacheRead = cached_tokens, CacheWrite = cache_write_tokens, Output =
// output_tokens, Total = total_tokens.
func (u ResponsesUsage) Usage() compact.Usage {
	return splitCached(u.InputTokens, u.InputTokensDetails, u.OutputTokens, u.TotalTokens)
}

func splitCached(input int, d CachedDetails, output, total int) compact.Usage {
	return compact.Usage{Input: max(input-d.CachedTokens-d.CacheWriteTokens, 0), CacheRead: d.CachedTokens, CacheWrite: d.CacheWriteTokens,
		Output: output, Total: total}
}
