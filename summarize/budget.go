package summarize

import (
	"fmt"
	"math"

	"github.com/compactkit/compact"
)

// Budget constants.
const (
	// MinSummaryTokens is the floor of the output budget, and the least
	// room left for the summary text above a thinking budget.
	MinSummaryTokens = 500
	// smallWindowShare is the largest share of the summarizer's window the
	// output budget may take (8%); it is what limits the budget on windows
	// under ten times the reserve.
	smallWindowShare = 0.08
	// ReserveShare is the share of the reserve a summary's output budget
	// takes, as in pi: the rest stays free for the model's next response.
	ReserveShare = 0.8
	// framingTokens is added to every estimate for what the provider wraps
	// around the system prompt and the message (roles, separators).
	framingTokens = 32
	// summaryCharsPerToken is the characters per token assumed for the
	// model's own output when room is kept for a running summary that does
	// not exist yet: generous, so that plans rarely need redoing.
	summaryCharsPerToken = 4
	// minChunkBytes is the least room for transcript text a request must
	// leave; below it the window is too small to be useful.
	minChunkBytes = 1024
)

// ReserveBudget is the output budget of a summary written with reserve
// tokens kept free: ReserveShare of it, 13,107 tokens for the default
// reserve of 16,384. It is the one home of the 0.8 x reserve rule: the
// command line passes it as compact.Request.MaxTokens and OutputBudget
// starts from it.
func ReserveBudget(reserve int) int { return int(ReserveShare * float64(reserve)) }

// OutputBudget returns the max tokens of a request of the given kind,
// before the thinking budget is taken into account:
//
//	base    = min(ReserveBudget(Reserve), max(500, 8% × window), MaxOutput)
//	history = min(base, engineMax)                 (engineMax 0: no bound)
//	prefix  = min(max(base/2, min(base, 500)), engineMax)
//
// The 8% term only bites on windows under ten times the reserve (below
// 163,840 tokens with the default reserve), so a small window is not
// spent on output. MaxOutput 0 means unknown and sets no bound.
func (s *Summarizer) OutputBudget(kind compact.SummaryKind, engineMax int) int {
	o := s.opts
	base := ReserveBudget(o.Reserve)
	small := int(smallWindowShare * float64(o.Info.ContextWindow))
	if small < MinSummaryTokens {
		small = MinSummaryTokens
	}
	base = min(base, small)
	if o.Info.MaxOutput > 0 {
		base = min(base, o.Info.MaxOutput)
	}
	if kind == compact.SummaryTurnPrefix {
		base = max(base/2, min(base, MinSummaryTokens))
	}
	if engineMax > 0 {
		base = min(base, engineMax)
	}
	return base
}

// MaxTokens returns the max tokens sent with a request: the output budget,
// raised when a thinking budget is set so that it exceeds the thinking
// budget by at least MinSummaryTokens (thinking counts against max tokens
// on the providers that have it). The raise comes after the engine's
// bound (SummaryRequest.MaxTokens), which limits the summary text, not
// the thinking. It fails with an error wrapping
// ErrThinkingBudget when the raise would pass the model's max output.
func (s *Summarizer) MaxTokens(kind compact.SummaryKind, engineMax int) (int, error) {
	out := s.OutputBudget(kind, engineMax)
	if tb := s.opts.ThinkingBudget; tb > 0 && out < tb+MinSummaryTokens {
		out = tb + MinSummaryTokens
		if mo := s.opts.Info.MaxOutput; mo > 0 && out > mo {
			return 0, fmt.Errorf("summarize: thinking budget %d plus %d tokens for the summary exceeds the model's max output of %d: %w",
				tb, MinSummaryTokens, mo, ErrThinkingBudget)
		}
	}
	return out, nil
}

// InputBudget returns the most tokens a request with the given max tokens
// may send, system prompt included:
//
//	window − maxTokens − SafetyMargin
//
// or InputLimit − SafetyMargin when the model has a lower input limit.
func (s *Summarizer) InputBudget(maxTokens int) int {
	o := s.opts
	return min(o.Info.ContextWindow-maxTokens, o.Info.UsableInput()) - o.SafetyMargin
}

// EstimateTokens is the conservative token count of a request's text:
// its bytes divided by CharsPerToken, rounded up, plus a fixed allowance
// for the provider's framing. Bytes rather than characters, so that text
// outside ASCII, which tokenizes less densely, counts for more.
func (s *Summarizer) EstimateTokens(system, prompt string) int {
	return s.tokens(len(system)+len(prompt)) + framingTokens
}

func (s *Summarizer) tokens(bytes int) int {
	return int(math.Ceil(float64(bytes) / s.opts.CharsPerToken))
}

// bytesFor is the inverse of tokens: how many bytes fit in n tokens.
func (s *Summarizer) bytesFor(n int) int {
	if n <= 0 {
		return 0
	}
	return int(math.Floor(float64(n) * s.opts.CharsPerToken))
}

// defaultMargin is the safety margin when none is given: 5% of the
// window, at least 1024 tokens.
func defaultMargin(window int) int {
	return max(1024, window/20)
}
