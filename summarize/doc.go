// Package summarize turns a model behind a Completer into a
// compact.Summarizer: it writes the prompts, serializes the conversation
// as tagged text, keeps every request inside the summarizer's own window
// by summarizing in chunks, and retries what can be retried.
//
// # Prompts
//
// The prompts are Markdown files embedded from prompts/. Every request is
// the system prompt (a tool-less note-taker that must not continue the
// conversation) and one user message: the running summary in
// <running-summary> when there is one, the conversation in <transcript>,
// then the task, then the user's focus in <focus> when instructions were
// given. The conversation is never sent as chat turns by this package;
// a caller that holds the conversation's own request (the proxy) can ask
// for the summary on it instead (Options.Conversation: the conversation
// as the provider last saw it plus one closing instruction, so that it is
// read from the provider's prompt cache), with the same task, headings,
// review and retry, and this package's transcript request when that does
// not fit. History summaries
// use the same headings as package extractive (Goal, Constraints &
// Preferences, Progress with Done / In Progress / Blocked, Key Decisions,
// Next Steps, Critical Context); turn prefixes use Turn Request, Work So
// Far in This Turn and Context for the Kept Messages. The model is told
// not to write file lists: the engine appends them, and any the model
// writes anyway are removed.
//
// # Transcript
//
// Each message becomes blocks headed [user], [assistant], [tool call:
// NAME], [tool result: NAME] and so on (see serialize.go); each tool call
// is written with its result right after it. Tool results, tool call
// arguments and reasoning are capped at Options.ToolResultChars characters
// (head and tail kept, with a marker counting what was cut). User and
// assistant text is cut only when a single message does not fit a chunk.
//
// # Budgets
//
// Tokens are estimated conservatively as bytes / CharsPerToken (3 by
// default; chars/4 under-counts Claude by a quarter to a third) plus a
// small allowance for the provider's framing. The output budget is
// min(ReserveBudget(Reserve) = 0.8 × Reserve, max(500, 8% × window),
// MaxOutput), halved for turn prefixes, bounded by
// SummaryRequest.MaxTokens, and raised above Options.ThinkingBudget when
// that is set. The input budget is window −
// max tokens − SafetyMargin.
//
// # Chunks
//
// When the prompt does not fit the input budget, the transcript is cut
// into chunks at turn boundaries (a turn starts at a user message), a
// turn too large for one chunk is split between its units, and a single
// unit too large is shortened. Chunks are summarized in order, each
// request merging its chunk into the running summary, which starts as
// the previous compaction's summary. If the model still reports a context
// overflow, the rest is planned again with half the budget, a bounded
// number of times.
//
// # Retries
//
// Rate limits, server errors, timeouts and broken connections (see
// Retryable) are retried with exponential backoff from one second,
// honouring Retry-After, up to Options.MaxTries tries; the wait is
// cancelled with the context. The clock and the jitter are injectable for
// tests.
package summarize
