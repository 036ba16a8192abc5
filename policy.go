package compact

import "fmt"

// Policy decides when a context is too full. Each policy is a small value
// type; its zero value uses the documented defaults.
type Policy interface {
	// Name identifies the policy in reports ("default", "reserve",
	// "ratio", "input").
	Name() string
	// Threshold returns the context size, in tokens, above which the
	// policy asks for compaction. ok is false when the model's window is
	// unknown: the policy then never triggers.
	Threshold(m ModelInfo) (tokens int, ok bool)
	// Target returns the context size a compaction should aim for.
	Target(m ModelInfo) int
}

// Defaults used by the policies' zero values.
const (
	DefaultReserveTokens = 16384
	DefaultTargetRatio   = 0.5
	DefaultTriggerRatio  = 0.9
	DefaultOutputCap     = 32000
)

// Every policy respects a model's input limit as well as its window: a
// model such as GPT-5 takes 400,000 tokens in all but only 272,000 of
// input, and a request above the input limit is refused however much of
// the window is left. So each threshold below is the smaller of the rule
// applied to the window and the same rule applied to the input limit, and
// each target is a ratio of the usable input (ModelInfo.UsableInput).

// DefaultPolicy is the trigger every door uses unless told otherwise:
// the library's Guard, Check with a nil policy, the command line and the
// proxy. It is Reserve made safe for every window:
//
//   - the reserve is Tokens (DefaultReserveTokens when 0), but never more
//     than a fifth of the window, so that a small window is not over the
//     trigger before the conversation starts (a 20,000-token window
//     triggers at 16,000, where Reserve would trigger at 3,616);
//   - the threshold is the usable input (ModelInfo.UsableInput) less the
//     reserve: GPT-5, with a window of 400,000 and an input limit of
//     272,000, triggers at 255,616;
//   - the target is TargetRatio of the usable input (0.5 when 0), never
//     above half the threshold, so that a compaction frees real room.
//
// The zero value is the default. Config.Policy names it "default" (or
// leaves it empty); Reserve is pi's rule, kept for parity.
type DefaultPolicy struct {
	// Tokens kept free; 0 means DefaultReserveTokens. A fifth of the
	// window is kept instead when that is less.
	Tokens int
	// TargetRatio of the usable input to compact down to; 0 means 0.5.
	// The target never exceeds half the threshold.
	TargetRatio float64
}

// Name implements Policy.
func (p DefaultPolicy) Name() string { return "default" }

// reserve is the Reserve policy this one applies to m.
func (p DefaultPolicy) reserve(m ModelInfo) Reserve {
	r := p.Tokens
	if r <= 0 {
		r = DefaultReserveTokens
	}
	if w := m.ContextWindow / 5; w > 0 && w < r {
		r = w
	}
	return Reserve{Tokens: r, TargetRatio: p.TargetRatio}
}

// Threshold implements Policy.
func (p DefaultPolicy) Threshold(m ModelInfo) (int, bool) { return p.reserve(m).Threshold(m) }

// Target implements Policy.
func (p DefaultPolicy) Target(m ModelInfo) int {
	r := p.reserve(m)
	t := r.Target(m)
	if th, ok := r.Threshold(m); ok && t > th/2 {
		t = th / 2
	}
	return t
}

// Reserve triggers when tokens > window - Tokens, or > input limit -
// Tokens when that is lower: it keeps room for the next response and the
// summary. This is pi's rule, bounded by the input limit; unlike
// DefaultPolicy it keeps the full reserve on small windows and does not
// bound the target by the threshold.
type Reserve struct {
	// Tokens kept free; 0 means DefaultReserveTokens.
	Tokens int
	// TargetRatio of the usable input to compact down to; 0 means 0.5.
	TargetRatio float64
}

// Name implements Policy.
func (p Reserve) Name() string { return "reserve" }

// Threshold implements Policy.
func (p Reserve) Threshold(m ModelInfo) (int, bool) {
	if m.ContextWindow <= 0 {
		return 0, false
	}
	r := p.Tokens
	if r <= 0 {
		r = DefaultReserveTokens
	}
	return max(m.UsableInput()-r, 0), true
}

// Target implements Policy.
func (p Reserve) Target(m ModelInfo) int { return ratioOf(m.UsableInput(), p.TargetRatio) }

// Ratio triggers when tokens > Ratio x window, or > Ratio x input limit
// when that is lower (0.75 or 0.9 are common ratios).
type Ratio struct {
	// Ratio of the usable input that triggers; 0 means 0.9.
	Ratio float64
	// TargetRatio of the usable input to compact down to; 0 means 0.5.
	TargetRatio float64
}

// Name implements Policy.
func (p Ratio) Name() string { return "ratio" }

// Threshold implements Policy.
func (p Ratio) Threshold(m ModelInfo) (int, bool) {
	if m.ContextWindow <= 0 {
		return 0, false
	}
	r := p.Ratio
	if r <= 0 || r > 1 {
		r = DefaultTriggerRatio
	}
	return int(r * float64(m.UsableInput())), true
}

// Target implements Policy.
func (p Ratio) Target(m ModelInfo) int { return ratioOf(m.UsableInput(), p.TargetRatio) }

// InputLimit triggers when tokens exceed window - min(max output,
// OutputCap), the room the next response may need, or the model's input
// limit when that is lower. This is OpenCode's rule.
type InputLimit struct {
	// OutputCap bounds the output reserve; 0 means DefaultOutputCap.
	OutputCap int
	// TargetRatio of the usable input to compact down to; 0 means 0.5.
	TargetRatio float64
}

// Name implements Policy.
func (p InputLimit) Name() string { return "input" }

// Threshold implements Policy.
func (p InputLimit) Threshold(m ModelInfo) (int, bool) {
	if m.ContextWindow <= 0 {
		if m.InputLimit > 0 {
			return m.InputLimit, true
		}
		return 0, false
	}
	capTokens := p.OutputCap
	if capTokens <= 0 {
		capTokens = DefaultOutputCap
	}
	reserve := capTokens
	if m.MaxOutput > 0 && m.MaxOutput < reserve {
		reserve = m.MaxOutput
	}
	t := max(m.ContextWindow-reserve, 0)
	if m.InputLimit > 0 && m.InputLimit < t {
		t = m.InputLimit
	}
	return t, true
}

// Target implements Policy.
func (p InputLimit) Target(m ModelInfo) int {
	t, ok := p.Threshold(m)
	if !ok {
		return 0
	}
	return ratioOf(t, p.TargetRatio)
}

func ratioOf(n int, r float64) int {
	if r <= 0 || r > 1 {
		r = DefaultTargetRatio
	}
	return int(r * float64(n))
}

// CompactedRecently reports whether a context above its threshold should
// wait before another compaction because it was summarized recently: it
// measured tokensAfter right after its latest summary and has grown by
// less than a quarter of the room since, the room being the threshold
// less fixed, the part no compaction can shrink (a system prompt and
// tools sent apart from the messages; 0 when they are counted with them).
// Compacting again so soon cannot help: the history since is too short to
// summarize, and each pass would rewrite the provider's cached prefix. An
// overflow still compacts.
//
// It is false when tokensAfter or threshold is unknown (0 or less). The
// Guard and the proxy both ask it before a threshold compaction.
func CompactedRecently(tokens, tokensAfter, threshold, fixed int) bool {
	if tokensAfter <= 0 || threshold <= 0 {
		return false
	}
	room := threshold - fixed
	return tokens-tokensAfter < room/4
}

// Decision is the outcome of checking a context against a policy.
type Decision struct {
	// Compact is true when automatic compaction should run now.
	Compact bool `json:"compact"`
	// Tokens is the measured context size.
	Tokens int `json:"tokens"`
	// Threshold is the size above which the policy triggers; 0 when the
	// window is unknown.
	Threshold int `json:"threshold"`
	// Policy names the policy that decided.
	Policy string `json:"policy"`
	// Reason explains the decision in one sentence.
	Reason string `json:"reason"`
	// Err is ErrUnknownWindow or ErrDisabled when the check could not
	// trigger for that reason, nil otherwise.
	Err error `json:"-"`
}

// Check applies a policy to a measured context; nil means DefaultPolicy{}.
// An unknown window never triggers (the decision says so); neither does a
// disabled switch.
func Check(p Policy, m ModelInfo, u ContextUsage, disabled bool) Decision {
	if p == nil {
		p = DefaultPolicy{}
	}
	d := Decision{Tokens: u.Tokens, Policy: p.Name()}
	if disabled {
		d.Err = ErrDisabled
		d.Reason = "automatic compaction is disabled"
		return d
	}
	t, ok := p.Threshold(m)
	if !ok {
		d.Err = ErrUnknownWindow
		d.Reason = fmt.Sprintf("the context window of model %q is unknown, so automatic compaction never triggers (set --window or the config's window)", m.ID)
		return d
	}
	d.Threshold = t
	if u.Tokens > t {
		d.Compact = true
		d.Reason = fmt.Sprintf("%d tokens exceed the %s threshold of %d", u.Tokens, p.Name(), t)
	} else {
		d.Reason = fmt.Sprintf("%d tokens are within the %s threshold of %d", u.Tokens, p.Name(), t)
	}
	return d
}
