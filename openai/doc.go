// Package openai is everything compact knows about OpenAI's APIs: the
// clients, their wire types, and the one mapping between the APIs'
// conversations and compact messages.
//
//   - Client is a summarize.Completer for the Chat Completions API
//     (POST {BaseURL}/chat/completions); ResponsesClient one for the
//     Responses API (POST {BaseURL}/responses). Both take a Config.
//   - ReadChatMessage maps one message of a Chat Completions request,
//     ReadResponsesItem one item of a Responses input, and Calls pairs
//     tool results with their calls across a conversation. The proxy
//     measures and summarizes with them, and the request body and Codex
//     rollout readers (agents/requestbody, agents/codex) import with
//     them, so every door sees the same conversation the same way. Their
//     doc comments say, case by case, what each wire form becomes.
//   - ChatMessages is the way back, compact messages to a Chat request's
//     "messages" (ArgumentsText turns stored arguments back into the
//     string the model wrote); ReadChatCompletion reads a Chat answer's
//     body and ReadChatAnswer its message. Client and the example agent
//     (examples/agent) speak Chat through them.
//
// The rest of this comment is about the Chat client; ResponsesClient's
// own comment says where the Responses client differs.
//
// Besides OpenAI itself it talks to any server that speaks the same wire
// format once Config.BaseURL points at it: OpenRouter
// (https://openrouter.ai/api/v1), vLLM and the llama.cpp server
// (http://host:port/v1), Ollama (http://localhost:11434/v1), LM Studio
// (http://localhost:1234/v1) and the like. Local servers usually need no
// key; with an empty Config.APIKey no Authorization header is sent.
//
// # The output limit field
//
// OpenAI deprecated "max_tokens" in favour of "max_completion_tokens", and
// its reasoning models (o-series, GPT-5) refuse the old name. Many
// compatible servers, on the other hand, only know "max_tokens". The
// field is therefore chosen by Config.TokenField; when that is empty the
// client sends "max_completion_tokens" to api.openai.com and "max_tokens"
// to every other host.
//
// # What one call does
//
// Complete sends exactly one non-streaming request ("stream": false) with
// a system message (omitted when Request.System is empty) and one user
// message, and reads choices[0]. Only message.content is the answer: the
// reasoning_content some servers add beside it is ignored. A finish reason
// of "length" sets Response.Truncated. An answer with no text that was not
// cut short is an error wrapping ErrEmptySummary. Usage maps to
// compact.Usage with cached prompt tokens split out:
//
//	Input     = prompt_tokens - prompt_tokens_details.cached_tokens
//	CacheRead = prompt_tokens_details.cached_tokens
//	Output    = completion_tokens
//	Total     = total_tokens
//
// Streaming is not implemented: a summary is only useful once complete, so
// the client waits for the whole answer.
//
// # Errors
//
// A non-2xx response becomes a *compact.ProviderError holding the status,
// the body as received (at most MaxErrorBody bytes, HTML from a proxy
// included) and the wait asked for by the retry-after-ms or Retry-After
// header. A 2xx response whose body is an error object, as some compatible
// servers send, becomes a ProviderError as well (see Client.Complete).
// The client never retries: that is the caller's decision, and the
// ProviderError carries what it needs to make it.
//
// A redirect is not followed; its error names the Location the server
// gave. No error holds the key: a server that quotes the request's headers
// in its answer (some do) has the key, every credential header's value and
// anything shaped like a key replaced by "REDACTED" (internal/redact),
// in the error's text and in ProviderError.Body alike.
//
// # Why not the official SDK
//
// github.com/openai/openai-go exists and is complete, but this package
// needs one endpoint and a handful of fields. Plain net/http and
// encoding/json keep the wire format, the timeouts and the (absent)
// retries fully under this module's control, add no dependency, and let
// the tests check the exact bytes a server receives.
package openai
