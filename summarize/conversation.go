package summarize

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/compactkit/compact"
)

// ErrNotOnConversation is returned by an Options.Conversation function
// that cannot ask for the summary on the conversation itself: its prefix
// does not fit the summarizer's window, the span is not found in it, the
// API has no such request. The summarizer then serializes the history
// into a transcript as it does without the function.
var ErrNotOnConversation = errors.New("summarize: the summary cannot be asked on the conversation itself")

// ConversationRequest is a summary asked on the conversation itself (see
// Options.Conversation): the caller sends the conversation as the agent
// last sent it, up to the end of Summary.Messages and byte for byte, plus
// Instruction as one closing user message, with its tools not callable
// and MaxTokens (plus any thinking budget the conversation carries) as
// the output limit. Everything before the span (an earlier summary, the
// turns before a split turn) stays in the request: the provider reads
// the whole prefix from its prompt cache, and the instruction says what
// to write notes on.
type ConversationRequest struct {
	// Summary is the engine's request; Summary.Messages is the span the
	// notes cover, which the caller maps back onto its conversation.
	Summary *compact.SummaryRequest
	// Instruction is the closing user message: the task text of the
	// summary's kind, the user's focus, the note on the record compact
	// attaches, and after a refused reply what was wrong with it.
	Instruction string
	// MaxTokens bounds the notes, without thinking.
	MaxTokens int
}

// ConversationFunc sends a ConversationRequest and returns the answer, or
// an error wrapping ErrNotOnConversation when it cannot be asked that way.
// Like Completer.Complete it makes one call; the summarizer retries.
type ConversationFunc func(ctx context.Context, req *ConversationRequest) (*Response, error)

// onConversation writes the summary of req with Options.Conversation:
// one request (and one more after a refused reply), the review the
// transcript path applies. maxTokens is the model's share of the output
// budget. It returns an error wrapping ErrNotOnConversation when the
// summary must be written from a transcript instead.
func (s *Summarizer) onConversation(ctx context.Context, req *compact.SummaryRequest, maxTokens int) (string, *compact.Usage, []string, error) {
	instruction := conversationPrompt(req, defuse(clean(req.Instructions), tagFocus), s.ledger(req.Kind))
	creq := &ConversationRequest{Summary: req, Instruction: instruction, MaxTokens: maxTokens}
	var usage compact.Usage
	ask := func() (string, error) {
		resp, err := s.retry(ctx, func(ctx context.Context) (*Response, error) { return s.opts.Conversation(ctx, creq) })
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return "", cerr
			}
			if onTranscript(err) {
				return "", errors.Join(ErrNotOnConversation, err)
			}
			return "", err
		}
		usage = usage.Plus(resp.Usage)
		if resp.Truncated {
			return "", &TruncatedError{Model: s.opts.Model, MaxTokens: maxTokens, Chunk: 1, Chunks: 1}
		}
		text := cleanSummary(resp.Text)
		if text == "" {
			return "", ErrEmptySummary
		}
		return text, nil
	}
	text, err := ask()
	if err != nil {
		return "", &usage, nil, s.wrapConversation(err)
	}
	span := len(strings.Fields(s.Transcript(req.Messages))) + len(strings.Fields(req.PreviousSummary))
	text, refused, err := s.review(req, text, span, func(note string) (string, error) {
		creq.Instruction = instruction + note
		return ask()
	})
	if err != nil {
		return "", &usage, refused, s.wrapConversation(err)
	}
	return text, &usage, refused, nil
}

func (s *Summarizer) wrapConversation(err error) error {
	if errors.Is(err, ErrNotOnConversation) {
		return err
	}
	return errors.Join(errors.New("summarize with "+s.opts.Model+" on the conversation"), err)
}

// onTranscript reports whether a failed summary request on the
// conversation is better written from a transcript: the function said so,
// the conversation overflowed the window, or the provider refused the
// request as invalid (a 400 other than an overflow: the fork broke a rule
// of the API that a transcript request, made of text alone, cannot).
func onTranscript(err error) bool {
	if errors.Is(err, ErrNotOnConversation) || compact.IsContextOverflow(err) {
		return true
	}
	var pe *compact.ProviderError
	return errors.As(err, &pe) && pe.StatusCode == http.StatusBadRequest
}

// conversationPrompt is the closing instruction of a summary asked on the
// conversation: what the request is, the session's first request when
// the conversation may no longer hold it word for word, the task of the
// summary's kind with its headings, the note on the record compact
// attaches, and the focus.
func conversationPrompt(req *compact.SummaryRequest, instructions string, ledger bool) string {
	var b strings.Builder
	b.WriteString(conversationIntro)
	if first := conversationFirstRequest(req); first != "" {
		b.WriteString("\n\n" + firstRequestLabel + first)
	}
	if turn := turnRequest(req); turn != "" {
		b.WriteString("\n\n" + turnRequestLabel + turn)
	}
	b.WriteString("\n\n")
	if req.Kind == compact.SummaryTurnPrefix {
		b.WriteString(conversationPrefix + "\n\n" + prefixSectionsPrompt)
	} else {
		b.WriteString(conversationHistory + "\n\n" + historySections)
		if ledger {
			b.WriteString("\n\n" + ledgerNote)
		}
	}
	if instructions != "" {
		b.WriteString("\n\n" + focusIntro + "\n\n")
		writeTagged(&b, tagFocus, instructions)
	}
	return b.String()
}

// conversationFirstRequest is the session's request, in the user's words,
// that the notes of a history must keep: req.FirstRequest when an earlier
// compaction summarized it, else the span's first user message when the
// span opens the session. "" for a turn prefix, or when the earlier
// summary already quotes it.
func conversationFirstRequest(req *compact.SummaryRequest) string {
	if req.Kind == compact.SummaryTurnPrefix {
		return ""
	}
	first := req.FirstRequest
	if first == nil && strings.TrimSpace(req.PreviousSummary) == "" {
		for _, m := range req.Messages {
			if m.Role == compact.RoleUser {
				first = m
				break
			}
		}
	}
	if first == nil {
		return ""
	}
	words := usersWords(first)
	if words == "" || strings.Contains(req.PreviousSummary, words) {
		return ""
	}
	return words
}

// turnRequestLabel opens the line of a turn prefix's instruction that
// quotes the turn's request, which the notes must keep.
const turnRequestLabel = "The turn's request, word for word: "

// turnRequest is, for a turn prefix, the user's words that open the turn
// (the span's first user message), "" otherwise.
func turnRequest(req *compact.SummaryRequest) string {
	if req.Kind != compact.SummaryTurnPrefix {
		return ""
	}
	for _, m := range req.Messages {
		if m.Role == compact.RoleUser {
			return usersWords(m)
		}
	}
	return ""
}
