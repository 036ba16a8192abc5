// Package anthropic is everything compact knows about Anthropic's Messages
// API (POST {BaseURL}/v1/messages): a summarize.Completer that calls it,
// and the one mapping between its content blocks and compact messages.
//
// # Messages
//
// Content maps one message of a request's "messages" onto compact
// messages (tool_result blocks become tool result messages, the other
// blocks parts), Part and ToolResult map one block, Blocks decodes a
// content. The proxy, the request-body reader (agents/requestbody) and the
// Claude Code reader (agents/claudecode) all use them, so that a
// conversation is measured and summarized the same whichever door it came
// through. messages.go documents the mapping block by block, and the
// choices it makes where the doors used to differ: redacted_thinking, a
// tool_use input that is not an object, images by URL, documents and
// server tool blocks.
//
// # Client
//
// Every request carries the headers x-api-key (when Config.APIKey is set),
// anthropic-version: 2023-06-01 and content-type: application/json, and a
// body with the model, max_tokens, the system prompt (omitted when empty)
// and one user message. With Config.ThinkingBudget set it also asks for
// extended thinking ("thinking": {"type": "enabled", "budget_tokens": N});
// the thinking blocks of the answer are skipped and only its text blocks
// are returned, joined in order.
//
// A stop reason of "max_tokens" (or "model_context_window_exceeded") sets
// Response.Truncated. An answer with no text that was not cut short is an
// error wrapping ErrEmptySummary. Usage maps field by field:
//
//	Input      = input_tokens
//	Output     = output_tokens
//	CacheRead  = cache_read_input_tokens
//	CacheWrite = cache_creation_input_tokens
//
// Anthropic reports no total, so compact.Usage.Total stays 0 (its
// ContextTokens method then adds the parts up).
//
// Streaming is not implemented: a summary is only useful once complete, so
// the client waits for the whole answer, within Config.Timeout (ten
// minutes by default, the timeout Anthropic recommends for non-streaming
// calls).
//
// # Errors
//
// A non-2xx response becomes a *compact.ProviderError holding the status
// (429 rate_limit_error, 529 overloaded_error, 400 invalid_request_error
// for a prompt that is too long, ...), the body as received (at most
// MaxErrorBody bytes, HTML from a proxy included) and the wait asked for
// by the retry-after-ms or Retry-After header. A 2xx response whose body
// is an error object, as some gateways send, becomes a ProviderError as
// well (see Client.Complete). The client never retries: that is the
// caller's decision.
//
// A redirect is not followed; its error names the Location the server
// gave. No error holds the key: a server that quotes the request's headers
// in its answer (some do) has the key, every credential header's value and
// anything shaped like a key replaced by "REDACTED" (internal/redact),
// in the error's text and in ProviderError.Body alike.
//
// # Why not the official SDK
//
// github.com/anthropics/anthropic-sdk-go exists and is complete, but this
// package needs one endpoint and a handful of fields. Plain net/http and
// encoding/json keep the wire format, the timeouts and the (absent)
// retries fully under this module's control (the SDK retries by default),
// add no dependency, and let the tests check the exact bytes a server
// receives.
package anthropic
