package compact

import "context"

// SummaryKind says which part of a compaction a request summarizes.
type SummaryKind int

const (
	// SummaryHistory summarizes the history before the kept part, merging
	// the previous summary when there is one.
	SummaryHistory SummaryKind = iota
	// SummaryTurnPrefix summarizes the start of a turn that was cut in
	// two, as context for the turn's kept remainder.
	SummaryTurnPrefix
)

// String returns "history" or "turn-prefix".
func (k SummaryKind) String() string {
	if k == SummaryTurnPrefix {
		return "turn-prefix"
	}
	return "history"
}

// SummaryRequest is everything a summarizer is given. Messages is never
// empty: the engine does not call a summarizer without history.
type SummaryRequest struct {
	Kind SummaryKind
	// Messages to summarize, oldest first. Summarizers must not modify
	// them.
	Messages []*Message
	// PreviousSummary is the summary of an earlier compaction to merge
	// into the new one (without its file lists), "" if none.
	PreviousSummary string
	// Instructions is optional focus text from the user.
	Instructions string
	// ReadFiles and ModifiedFiles are the files the agent touched so far;
	// the engine appends them to the summary itself.
	ReadFiles     []string
	ModifiedFiles []string
	// MaxTokens is the output budget for the summary; 0 leaves it to the
	// summarizer.
	MaxTokens int
	// FirstRequest is the session's first user message when an earlier
	// compaction summarized it (it is then not among Messages), nil
	// otherwise. A summarizer that quotes the first request word for word
	// quotes it from here, since an earlier summary may have paraphrased
	// it.
	FirstRequest *Message
	// Asked is, for a turn prefix, the text of the assistant's message
	// just before the turn, "" when there is none: a turn whose request
	// is a short reply ("yes, do it all") means what the question it
	// answers proposed. It is context, not a message to summarize.
	Asked string
}

// Summary is what a summarizer returns.
type Summary struct {
	// Text is the summary in Markdown.
	Text string
	// Summarizer names what wrote it ("extractive", or a model id).
	Summarizer string
	// Usage is the summarizer's own token usage, nil for offline
	// summarizers.
	Usage *Usage
	// Refused lists what was wrong with a first reply that the
	// summarizer refused and asked the model again for (see
	// ErrSummaryRejected); nil when the first reply was used.
	Refused []string
}

// Summarizer turns messages into a summary. Implementations must honour
// ctx: a cancelled context stops the work and returns ctx.Err().
type Summarizer interface {
	Summarize(ctx context.Context, req *SummaryRequest) (*Summary, error)
}

// SummarizerFunc adapts a function to the Summarizer interface.
type SummarizerFunc func(ctx context.Context, req *SummaryRequest) (*Summary, error)

// Summarize implements Summarizer.
func (f SummarizerFunc) Summarize(ctx context.Context, req *SummaryRequest) (*Summary, error) {
	return f(ctx, req)
}
