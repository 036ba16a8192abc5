// Package summarize turns a model behind a Completer into a
// compact.Summarizer: it writes the prompts, serializes the conversation
// as tagged text, keeps every request inside the summarizer's own window
// by summarizing in chunks, and retries what can be retried.
package summarize
