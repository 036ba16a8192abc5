package summarize

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/summarize/extractive"
)

// Defaults of the Options fields, used when a field is zero.
const (
	// DefaultReserve is the engine's default reserve, in tokens.
	DefaultReserve = compact.DefaultReserveTokens
	// DefaultToolResultChars caps each tool result, tool call's arguments
	// and reasoning block in the transcript.
	DefaultToolResultChars = 2000
	// DefaultCharsPerToken is the conservative characters per token used
	// to estimate prompts: chars/4 under-counts Claude's tokenizer by a
	// quarter to a third.
	DefaultCharsPerToken = 3.0
	// DefaultMaxTries is how many times one request is sent at most.
	DefaultMaxTries = 5
	// DefaultMaxSplits is how many times the input budget is halved after
	// the summarizer's own window overflowed.
	DefaultMaxSplits = 3
)

// Errors. Test for them with errors.Is.
var (
	// ErrNoMessages is returned for a request without messages.
	ErrNoMessages = errors.New("summarize: no messages to summarize")
	// ErrTruncated means the model hit its output limit before finishing
	// the summary; the returned error is a *TruncatedError.
	ErrTruncated = errors.New("summary cut off by the output limit")
	// ErrEmptySummary means the model answered with no text.
	ErrEmptySummary = errors.New("summarize: the model returned an empty summary")
	// ErrThinkingBudget means the thinking budget leaves no room for the
	// summary within the model's max output.
	ErrThinkingBudget = errors.New("thinking budget too large for the model's max output")
	// ErrWindowTooSmall means the summarizer model's window cannot hold
	// the prompts, the output budget and a useful piece of transcript.
	ErrWindowTooSmall = errors.New("summarizer model's context window too small")
)

// TruncatedError is returned when a summary was cut off by the output
// limit (Response.Truncated). A cut-off summary is never returned as a
// result: its last sections would be missing.
type TruncatedError struct {
	// Model is the summarizer model.
	Model string
	// MaxTokens is the output limit the request had.
	MaxTokens int
	// Chunk and Chunks locate the request when the history was
	// summarized in parts (1 and 1 otherwise).
	Chunk, Chunks int
}

// Error says which model cut the summary off at which limit.
func (e *TruncatedError) Error() string {
	where := ""
	if e.Chunks > 1 {
		where = fmt.Sprintf(" (chunk %d of %d)", e.Chunk, e.Chunks)
	}
	return fmt.Sprintf("summarize: the summary from %s was cut off at its %d-token output limit%s",
		e.Model, e.MaxTokens, where)
}

// Is makes errors.Is(err, ErrTruncated) true.
func (e *TruncatedError) Is(target error) bool { return target == ErrTruncated }

// Options configure a Summarizer. Zero fields take the defaults.
type Options struct {
	// Completer reaches the summarizer model. Required.
	Completer Completer
	// Model is the summarizer model's id, sent in every request and
	// reported as Summary.Summarizer; "" takes Info.ID. It need not be
	// the session's model.
	Model string
	// Info holds the summarizer model's limits, looked up by the caller
	// (compact.Registry.Lookup) or given in configuration. ContextWindow
	// is required; MaxOutput and InputLimit are used when known.
	Info compact.ModelInfo
	// Reserve is the engine's reserve in tokens (default DefaultReserve);
	// the output budget is ReserveBudget of it, see OutputBudget.
	Reserve int
	// ToolResultChars caps each tool result, tool call's arguments and
	// reasoning block in the transcript, keeping head and tail (default
	// DefaultToolResultChars; negative: no cap).
	ToolResultChars int
	// CharsPerToken converts the prompt's bytes to estimated tokens
	// (default DefaultCharsPerToken).
	CharsPerToken float64
	// SafetyMargin is how many tokens of the window stay unused (default
	// 5% of the window, at least 1024).
	SafetyMargin int
	// MaxTries bounds the tries of one request (default DefaultMaxTries).
	MaxTries int
	// MaxSplits bounds how often the input budget is halved when the
	// summarizer's window overflows anyway (default DefaultMaxSplits).
	MaxSplits int
	// ThinkingBudget is the thinking budget the Completer asks for, 0 when
	// thinking is off. Max tokens is kept above it, see MaxTokens.
	ThinkingBudget int
	// Progress, if set, is called after each request that completed a
	// chunk, with the chunks done and the chunks planned. A history that
	// fits in one request reports (1, 1). The total can grow when the
	// rest of the history has to be planned again (a longer running
	// summary than expected, or an overflow).
	Progress func(done, total int)
	// Sleep waits between tries; it must return early with ctx.Err()
	// when ctx ends. nil uses a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Rand returns the jitter source in [0, 1). nil uses math/rand/v2.
	Rand func() float64
	// NoLedger makes a history summary the model's text alone. By
	// default the summary is hybrid: the model writes the story and the
	// summarizer appends the record it keeps itself (see
	// extractive.Summarizer.Ledger: the user's messages word for word,
	// the errors with their status, the files shell commands touched),
	// which the prompt tells the model not to copy.
	NoLedger bool
	// Conversation, when set, asks for a summary on the conversation
	// itself: the caller sends the conversation as it last went to the
	// provider plus one closing instruction (see ConversationRequest), so
	// that the provider reads the history from its prompt cache instead
	// of a transcript written anew. Prompts, the review with its one
	// retry and the hybrid record stay the summarizer's. When it reports
	// ErrNotOnConversation, or the request overflows or is refused as
	// invalid, the summary is written from a transcript as without it.
	// nil (the default) always writes from a transcript.
	Conversation ConversationFunc
}

// Summarizer is a compact.Summarizer backed by a model. It holds no
// state between calls and is safe for concurrent use if its Completer
// is.
type Summarizer struct {
	opts Options
}

var _ compact.Summarizer = (*Summarizer)(nil)

// New checks the options, fills in the defaults and returns the
// summarizer. The summarizer model's context window must be known: an
// unknown window is an error wrapping compact.ErrUnknownWindow.
func New(opts Options) (*Summarizer, error) {
	if opts.Completer == nil {
		return nil, errors.New("summarize: Options.Completer is required")
	}
	if opts.Model == "" {
		opts.Model = opts.Info.ID
	}
	if opts.Model == "" {
		return nil, errors.New("summarize: Options.Model (the summarizer model's id) is required")
	}
	if opts.Info.ContextWindow <= 0 {
		return nil, fmt.Errorf("summarize: the context window of the summarizer model %q must be given "+
			"(add it to the model registry or configure it): %w", opts.Model, compact.ErrUnknownWindow)
	}
	if opts.Reserve <= 0 {
		opts.Reserve = DefaultReserve
	}
	if opts.ToolResultChars == 0 {
		opts.ToolResultChars = DefaultToolResultChars
	}
	if opts.CharsPerToken <= 0 || math.IsNaN(opts.CharsPerToken) || math.IsInf(opts.CharsPerToken, 0) {
		opts.CharsPerToken = DefaultCharsPerToken
	}
	if opts.SafetyMargin <= 0 {
		opts.SafetyMargin = defaultMargin(opts.Info.ContextWindow)
	}
	if opts.MaxTries <= 0 {
		opts.MaxTries = DefaultMaxTries
	}
	if opts.MaxSplits <= 0 {
		opts.MaxSplits = DefaultMaxSplits
	}
	if opts.ThinkingBudget < 0 {
		opts.ThinkingBudget = 0
	}
	if opts.Sleep == nil {
		opts.Sleep = sleepContext
	}
	if opts.Rand == nil {
		opts.Rand = rand.Float64
	}
	s := &Summarizer{opts: opts}
	for _, kind := range []compact.SummaryKind{compact.SummaryHistory, compact.SummaryTurnPrefix} {
		maxTokens, err := s.MaxTokens(kind, 0)
		if err != nil {
			return nil, err
		}
		l := s.layout(kind, "", "", s.InputBudget(maxTokens), maxTokens, true)
		if l.transcriptBytes < minChunkBytes {
			return nil, fmt.Errorf("summarize: %s: window %d, output %d, margin %d leave %d bytes for the transcript: %w",
				opts.Model, opts.Info.ContextWindow, maxTokens, opts.SafetyMargin, max(l.transcriptBytes, 0), ErrWindowTooSmall)
		}
	}
	return s, nil
}

// Options returns the options in use, defaults filled in.
func (s *Summarizer) Options() Options { return s.opts }

// Name returns the summarizer model's id, the value of
// Summary.Summarizer.
func (s *Summarizer) Name() string { return s.opts.Model }

// Transcript returns the messages serialized as the model sees them,
// without the enclosing tags: the same messages always give the same
// text.
func (s *Summarizer) Transcript(msgs []*compact.Message) string {
	us := serializer{capChars: s.opts.ToolResultChars}.units(msgs)
	parts := make([]string, len(us))
	for i := range us {
		parts[i] = us[i].render()
	}
	return strings.Join(parts, unitSep)
}

// Summarize implements compact.Summarizer.
//
// The messages are serialized into a transcript. When the prompt fits the
// input budget it is summarized in one request; otherwise the transcript
// is cut into chunks at turn boundaries and summarized chunk by chunk,
// each request merging its chunk into the summary so far (starting from
// req.PreviousSummary). Usage is the sum over all requests. A history
// summary is hybrid unless Options.NoLedger: the record the summarizer
// keeps itself (its ledger) is written first, within a third of the
// output budget, the model gets what is left, and the ledger follows the
// model's text; the previous summary's ledger is merged into the new one
// rather than shown to the model.
func (s *Summarizer) Summarize(ctx context.Context, req *compact.SummaryRequest) (*compact.Summary, error) {
	if req == nil || len(req.Messages) == 0 {
		return nil, ErrNoMessages
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var ledger string
	if s.ledger(req.Kind) {
		budget, err := s.MaxTokens(req.Kind, req.MaxTokens)
		if err != nil {
			return nil, err
		}
		if ledger, err = extractive.New(extractive.Options{}).Ledger(ctx, req, budget/3); err != nil {
			return nil, err
		}
		model := *req
		model.PreviousSummary, _ = extractive.SplitLedger(req.PreviousSummary)
		if n := s.tokens(len(ledger)); n > 0 {
			model.MaxTokens = max(budget-n, budget/2)
		}
		req = &model
	}
	maxTokens, err := s.MaxTokens(req.Kind, req.MaxTokens)
	if err != nil {
		return nil, err
	}
	var spent compact.Usage
	if s.opts.Conversation != nil {
		text, usage, refused, err := s.onConversation(ctx, req, maxTokens)
		if err == nil {
			if ledger != "" {
				text += "\n\n" + ledger
			}
			return &compact.Summary{Text: text, Summarizer: s.opts.Model, Usage: usage, Refused: refused}, nil
		}
		if !errors.Is(err, ErrNotOnConversation) {
			return nil, err
		}
		// Whatever the refused request cost is counted with the
		// transcript's requests.
		spent = *usage
	}
	units := serializer{capChars: s.opts.ToolResultChars}.units(req.Messages)
	if len(units) == 0 {
		return nil, fmt.Errorf("%w: the %d messages hold no text", ErrNoMessages, len(req.Messages))
	}
	r := &run{
		s:            s,
		kind:         req.Kind,
		maxTokens:    maxTokens,
		instructions: defuse(clean(req.Instructions), tagFocus),
		summary:      defuse(runningSummary(req), tagSummary),
		req:          req,
		usage:        spent,
	}
	if err := r.do(ctx, units); err != nil {
		return nil, err
	}
	usage := r.usage
	text := r.summary
	if ledger != "" {
		text += "\n\n" + ledger
	}
	return &compact.Summary{Text: text, Summarizer: s.opts.Model, Usage: &usage, Refused: r.refused}, nil
}

// ledger reports whether a summary of kind gets the record the summarizer
// keeps itself: a history summary, unless Options.NoLedger.
func (s *Summarizer) ledger(kind compact.SummaryKind) bool {
	return kind == compact.SummaryHistory && !s.opts.NoLedger
}

// firstRequestLabel opens the line of the running summary that quotes
// the session's first request (compact.SummaryRequest.FirstRequest).
const firstRequestLabel = "The session's first request, word for word: "

// runningSummary is the summary the first request merges into: the
// previous summary without its file lists, preceded by the session's
// first request, in the user's words (without the harness's reminders),
// when an earlier compaction summarized it and the previous summary does
// not quote it.
func runningSummary(req *compact.SummaryRequest) string {
	prev := strings.TrimSpace(compact.StripFileLists(req.PreviousSummary))
	if req.FirstRequest == nil {
		return prev
	}
	first := usersWords(req.FirstRequest)
	if first == "" || strings.Contains(prev, first) {
		return prev
	}
	if prev == "" {
		return firstRequestLabel + first
	}
	return firstRequestLabel + first + "\n\n" + prev
}

// run is the state of one Summarize call.
type run struct {
	s            *Summarizer
	kind         compact.SummaryKind
	maxTokens    int
	instructions string
	summary      string // running summary
	req          *compact.SummaryRequest
	refused      []string // problems of replies refused and asked again for
	usage        compact.Usage
	done         int
}

// do summarizes the units chunk by chunk, planning again when the running
// summary outgrew the room kept for it or the model's window overflowed.
func (r *run) do(ctx context.Context, rest []unit) error {
	s := r.s
	budget := s.InputBudget(r.maxTokens)
	splits := 0
	for len(rest) > 0 {
		chunks, err := r.plan(rest, budget)
		if err != nil {
			return err
		}
		total := r.done + len(chunks)
		next := []unit(nil)
		for _, c := range chunks {
			prompt := buildPrompt(r.kind, r.summary, c.text, r.instructions, s.ledger(r.kind))
			if est := s.EstimateTokens(systemPrompt, prompt); est > budget {
				if c.start == 0 {
					// A fresh plan is built around the current summary, so
					// this only happens when a single unit cannot be
					// shortened enough.
					return r.wrap(fmt.Errorf("request of %d tokens exceeds the input budget of %d: %w",
						est, budget, ErrWindowTooSmall), total)
				}
				// The running summary came out longer than the room
				// planned for it: plan the rest again around it.
				next = rest[c.start:]
				break
			}
			req := &Request{Model: s.opts.Model, System: systemPrompt, Prompt: prompt, MaxTokens: r.maxTokens}
			resp, err := s.complete(ctx, req)
			if err != nil {
				if cerr := ctx.Err(); cerr != nil {
					return cerr
				}
				if compact.IsContextOverflow(err) {
					// The model counts more tokens than estimated: plan the
					// rest again with half the budget, a bounded number of
					// times and while a useful chunk still fits.
					if splits < s.opts.MaxSplits && r.layout(budget/2, true).transcriptBytes >= minChunkBytes {
						splits++
						budget /= 2
						next = rest[c.start:]
						break
					}
					if splits > 0 {
						err = fmt.Errorf("still too large after halving the input budget %d times: %w", splits, err)
					}
				}
				return r.wrap(err, total)
			}
			text, err := r.answer(resp, total)
			if err != nil {
				return err
			}
			span := len(strings.Fields(c.text)) + len(strings.Fields(r.summary))
			text, refused, err := s.review(r.req, text, span, func(note string) (string, error) {
				req.Prompt = prompt + note
				resp, err := s.complete(ctx, req)
				if err != nil {
					if cerr := ctx.Err(); cerr != nil {
						return "", cerr
					}
					return "", r.wrap(err, total)
				}
				return r.answer(resp, total)
			})
			r.refused = append(r.refused, refused...)
			if rej := (*compact.SummaryRejectedError)(nil); errors.As(err, &rej) {
				return r.wrap(err, total)
			} else if err != nil {
				return err
			}
			r.summary = defuse(text, tagSummary)
			r.done++
			if s.opts.Progress != nil {
				s.opts.Progress(r.done, total)
			}
		}
		rest = next
	}
	return nil
}

// answer counts the usage of resp and returns its text as a summary, or
// the error of a reply cut off or empty.
func (r *run) answer(resp *Response, total int) (string, error) {
	r.usage = r.usage.Plus(resp.Usage)
	if resp.Truncated {
		return "", &TruncatedError{Model: r.s.opts.Model, MaxTokens: r.maxTokens, Chunk: r.done + 1, Chunks: total}
	}
	text := cleanSummary(resp.Text)
	if text == "" {
		return "", r.wrap(ErrEmptySummary, total)
	}
	return text, nil
}

func (r *run) wrap(err error, total int) error {
	if total > 1 {
		return fmt.Errorf("summarize with %s, chunk %d of %d: %w", r.s.opts.Model, r.done+1, total, err)
	}
	return fmt.Errorf("summarize with %s: %w", r.s.opts.Model, err)
}

// plan cuts the units into chunks that fit the input budget with the
// current running summary. When everything fits one request it is one
// chunk; otherwise room is kept in every chunk for a running summary as
// long as the larger of the current one and a full output budget.
func (r *run) plan(units []unit, budget int) ([]chunk, error) {
	s := r.s
	// A running summary (from an earlier compaction, typically) that
	// takes more than half the budget is shortened, so that transcript
	// still fits beside it.
	fixed := r.layout(budget, false)
	if half := (budget - framingTokens - s.tokens(fixed.fixedBytes)) / 2; s.tokens(len(r.summary)) > half {
		r.summary = cutBytes(r.summary, s.bytesFor(half))
	}
	l := r.layout(budget, false)
	if l.transcriptBytes >= minChunkBytes {
		if chunks := planChunks(units, l.transcriptBytes); len(chunks) == 1 {
			return chunks, nil
		}
	}
	l = r.layout(budget, true)
	if l.transcriptBytes < minChunkBytes {
		return nil, fmt.Errorf("summarize with %s: input budget of %d tokens leaves %d bytes for the transcript: %w",
			s.opts.Model, budget, max(l.transcriptBytes, 0), ErrWindowTooSmall)
	}
	return planChunks(units, l.transcriptBytes), nil
}

func (r *run) layout(budget int, roomForSummary bool) split {
	return r.s.layout(r.kind, r.summary, r.instructions, budget, r.maxTokens, roomForSummary)
}

// split is how a request's input budget divides.
type split struct {
	// fixedBytes is the system prompt plus the user message without the
	// transcript and the running summary (the longer of the two task
	// texts).
	fixedBytes int
	// transcriptBytes is what is left for transcript text.
	transcriptBytes int
}

// layout computes the room for transcript text in a request of budget
// tokens. The room kept for the running summary is its current size, or,
// with roomForSummary, at least what a summary of maxTokens tokens takes
// at summaryCharsPerToken characters a token.
func (s *Summarizer) layout(kind compact.SummaryKind, summary, instructions string, budget, maxTokens int, roomForSummary bool) split {
	fixed := len(systemPrompt) + max(
		len(buildPrompt(kind, "", "", instructions, s.ledger(kind))),
		len(buildPrompt(kind, "x", "", instructions, s.ledger(kind)))-1,
	)
	room := s.tokens(len(summary))
	if roomForSummary {
		room = max(room, s.tokens(summaryCharsPerToken*maxTokens))
	}
	left := budget - framingTokens - s.tokens(fixed) - room
	return split{fixedBytes: fixed, transcriptBytes: s.bytesFor(left)}
}

// chunk is a run of units, units[start:end] of the slice it was planned
// from, and their rendered text.
type chunk struct {
	start, end int
	text       string
}

// planChunks packs units into chunks of at most budget bytes. Whole turns
// (a turn-starting unit and the units up to the next one) go together;
// a turn too large for a chunk of its own starts a new chunk and is split
// between units; a unit too large on its own is shortened (fitUnit). A
// tool call and its result are one unit and so never part.
func planChunks(units []unit, budget int) []chunk {
	var (
		out   []chunk
		b     strings.Builder
		start int
		n     int // units in the current chunk
	)
	fits := func(size int) bool {
		if n > 0 {
			size += len(unitSep)
		}
		return b.Len()+size <= budget
	}
	flush := func(end int) {
		if n > 0 {
			out = append(out, chunk{start: start, end: end, text: b.String()})
			b.Reset()
			n = 0
		}
		start = end
	}
	add := func(u unit) {
		if n > 0 {
			b.WriteString(unitSep)
		}
		b.WriteString(u.render())
		n++
	}
	for i := 0; i < len(units); {
		j := i + 1
		for j < len(units) && !units[j].turnStart {
			j++
		}
		size := 0
		for k := i; k < j; k++ {
			if k > i {
				size += len(unitSep)
			}
			size += units[k].size
		}
		if !fits(size) {
			flush(i)
		}
		if fits(size) {
			for k := i; k < j; k++ {
				add(units[k])
			}
			i = j
			continue
		}
		for k := i; k < j; k++ {
			u := fitUnit(units[k], budget)
			if !fits(u.size) {
				flush(k)
			}
			add(u)
		}
		i = j
	}
	flush(len(units))
	return out
}

// cleanSummary trims the model's answer, unwraps a code fence around the
// whole of it and drops file lists the model added although told not to
// (the engine appends its own).
func cleanSummary(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "```") && strings.HasSuffix(s, "```") && len(s) > 6 {
		if nl := strings.IndexByte(s, '\n'); nl >= 0 && nl < len(s)-3 {
			s = s[nl+1 : len(s)-3]
		}
	}
	return strings.TrimSpace(compact.StripFileLists(s))
}
