package summarize

import (
	"context"

	"github.com/compactkit/compact"
)

// Request is one tool-less completion: a system prompt and a single user
// message holding the whole task, with an output budget.
type Request struct {
	// Model is the summarizer model's id.
	Model string
	// System is the system prompt.
	System string
	// Prompt is the one user message.
	Prompt string
	// MaxTokens bounds the output.
	MaxTokens int
}

// Response is what the model answered.
type Response struct {
	// Text is the answer's text.
	Text string
	// Truncated is true when the output limit cut the answer short
	// (finish reason "length", stop reason "max_tokens"): a failure, not
	// a summary.
	Truncated bool
	// Usage is the call's token usage.
	Usage compact.Usage
	// Model is the model that answered, as the provider reports it.
	Model string
}

// Completer sends one completion request to a model. Implementations
// (packages openai and anthropic) make exactly one HTTP call per Complete:
// retries belong to the caller. Errors from the provider are returned as
// (or wrap) a *compact.ProviderError; a cancelled ctx returns ctx.Err().
type Completer interface {
	Complete(ctx context.Context, req *Request) (*Response, error)
}
