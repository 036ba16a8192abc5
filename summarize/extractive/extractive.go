package extractive

import (
	"context"
	"errors"

	"github.com/compactkit/compact"
)

// Name is the value of compact.Summary.Summarizer for summaries written by
// this package.
const Name = "extractive"

// Defaults of the Options fields, used when a field is zero or negative.
const (
	// DefaultUserBudgetTokens is the budget for user messages quoted
	// verbatim.
	DefaultUserBudgetTokens = 4000
	// DefaultShortenedChars is the length older user messages and other
	// long items are shortened to.
	DefaultShortenedChars = 300
	// DefaultMaxCommands is how many of the newest commands are listed.
	DefaultMaxCommands = 25
	// DefaultMaxErrors is how many of the newest errors are listed.
	DefaultMaxErrors = 30
	// DefaultMaxTextChars bounds each assistant statement quoted.
	DefaultMaxTextChars = 1500
	// DefaultMaxItems bounds the sentence lists: constraints, decisions and
	// plan steps.
	DefaultMaxItems = 12
)

// ErrNoMessages is returned for a request without messages. The engine
// never sends one.
var ErrNoMessages = errors.New("extractive: no messages to summarize")

// Options tune the summarizer. The zero value gives the defaults: every
// field that is zero or negative takes the matching Default constant.
type Options struct {
	// UserBudgetTokens is the estimated size (characters / 4) allowed for
	// the user messages quoted verbatim, newest first. Messages beyond it
	// are shortened to ShortenedChars, and left out entirely when even the
	// shortened form does not fit. Default DefaultUserBudgetTokens.
	UserBudgetTokens int
	// ShortenedChars is the number of characters kept of a shortened
	// message or item. Default DefaultShortenedChars.
	ShortenedChars int
	// MaxCommands is how many of the newest commands are listed, under
	// Critical Context and (the successful ones) under Done. Default
	// DefaultMaxCommands.
	MaxCommands int
	// MaxErrors is how many of the newest errors are listed, both the open
	// ones under Blocked and the resolved ones under Critical Context.
	// Default DefaultMaxErrors.
	MaxErrors int
	// MaxTextChars bounds each quoted assistant statement and injected
	// message. Default DefaultMaxTextChars.
	MaxTextChars int
	// MaxItems bounds the lists of constraint, decision and plan
	// sentences. Default DefaultMaxItems.
	MaxItems int
}

func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.UserBudgetTokens, DefaultUserBudgetTokens)
	def(&o.ShortenedChars, DefaultShortenedChars)
	def(&o.MaxCommands, DefaultMaxCommands)
	def(&o.MaxErrors, DefaultMaxErrors)
	def(&o.MaxTextChars, DefaultMaxTextChars)
	def(&o.MaxItems, DefaultMaxItems)
	return o
}

// Summarizer is the offline extractive summarizer. Its zero value is ready
// to use with the default options; it holds no state between calls and
// is safe for concurrent use.
type Summarizer struct {
	Options
}

// New returns a summarizer with the given options.
func New(opts Options) *Summarizer {
	return &Summarizer{Options: opts}
}

var _ compact.Summarizer = (*Summarizer)(nil)

// Summarize implements compact.Summarizer. It writes the summary of
// req.Messages (see the package documentation for what goes where),
// merges req.PreviousSummary into it, and shrinks it to req.MaxTokens when
// that is set. It never appends file lists; <read-files> and
// <modified-files> blocks left in the previous summary are removed, since
// the engine appends up-to-date ones. It returns ctx.Err() when the context
// is cancelled before or between its phases, and ErrNoMessages when the
// request holds no messages.
func (s *Summarizer) Summarize(ctx context.Context, req *compact.SummaryRequest) (*compact.Summary, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil || len(req.Messages) == 0 {
		return nil, ErrNoMessages
	}
	var opts Options
	if s != nil {
		opts = s.Options
	}
	opts = opts.withDefaults()

	f := extract(req.Messages)
	f.askedBefore(req.Asked)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var d *document
	if req.Kind == compact.SummaryTurnPrefix {
		d = buildTurnPrefix(f, req, opts)
	} else {
		d = buildHistory(f, req, opts)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req.MaxTokens > 0 {
		if err := d.shrink(ctx, req.MaxTokens, opts); err != nil {
			return nil, err
		}
	}
	return &compact.Summary{Text: d.render(), Summarizer: Name}, nil
}
