package compact

import (
	"math"

	"github.com/compactkit/compact/internal/jsontext"
)

// Calibration defaults, used when the matching Calibrator field is zero.
const (
	// DefaultCharsPerToken is the ratio assumed for a model before any of
	// its calls has been observed: the four characters per token that
	// EstimateTokens divides by.
	DefaultCharsPerToken = 4.0
	// DefaultMinCalibrationChars is the smallest addition, in characters,
	// that an observation must cover to teach anything. Small steps are
	// dominated by per-message framing the character count cannot see.
	DefaultMinCalibrationChars = 400
	// DefaultCalibrationHalfLife is how many characters of observed
	// additions halve the weight of older observations.
	DefaultCalibrationHalfLife = 200_000
)

// The learned ratio is kept inside these bounds whatever the
// observations say: below one character per token or above six, the
// observation is more likely a cache reset or a hidden change of the
// context than a property of the tokenizer.
const (
	minCharsPerToken = 1.0
	maxCharsPerToken = 6.0
)

// Calibrator learns, for each model, how many characters of this
// package's character count (UTF-16 code units, counted as EstimateTokens
// counts them) make one token of the provider's tokenizer. It learns from
// pairs of consecutive calls: the growth of the prompt the provider
// reports, against the characters of the messages added between the two
// calls.
//
// The estimate is a ratio of sums with exponential forgetting: every
// accepted observation adds its characters and its tokens to two running
// sums after both are scaled down by a factor that depends on how many
// characters were added, so that the ratio follows a drift in the kind of
// content (code, prose, JSON) while long runs of content dominate short
// ones. Observations whose addition is under MinChars, whose token growth
// is zero or negative (a compaction, a context edit, a cache reset) or
// whose ratio lies outside [1, 6] are ignored.
//
// The zero value is ready to use with the documented defaults. A
// Calibrator is not safe for concurrent use.
type Calibrator struct {
	// Default is the ratio of a model with no accepted observation
	// (DefaultCharsPerToken when zero).
	Default float64
	// MinChars is the smallest addition an observation must cover
	// (DefaultMinCalibrationChars when zero).
	MinChars int
	// HalfLife is the number of observed characters after which an
	// observation counts half as much (DefaultCalibrationHalfLife when
	// zero).
	HalfLife int

	models map[string]*modelRatio
}

// modelRatio holds the forgetting sums of one model.
type modelRatio struct {
	chars, tokens float64
	n             int
}

// CalibrationStats describes what a Calibrator has learned about one model.
type CalibrationStats struct {
	// CharsPerToken is the ratio Estimate uses for the model.
	CharsPerToken float64
	// Observations is the number of accepted observations.
	Observations int
	// Learned reports whether at least one observation was accepted; when
	// false, CharsPerToken is the default.
	Learned bool
}

func (c *Calibrator) defaultRatio() float64 {
	if c.Default > 0 {
		return c.Default
	}
	return DefaultCharsPerToken
}

func (c *Calibrator) minChars() int {
	if c.MinChars > 0 {
		return c.MinChars
	}
	return DefaultMinCalibrationChars
}

func (c *Calibrator) halfLife() float64 {
	if c.HalfLife > 0 {
		return float64(c.HalfLife)
	}
	return DefaultCalibrationHalfLife
}

// Observe records that charsAdded characters of new messages grew the
// prompt model saw by usageDelta tokens. It reports whether the
// observation was accepted (see Calibrator for the ones that are not).
func (c *Calibrator) Observe(model string, charsAdded, usageDelta int) bool {
	if charsAdded < c.minChars() || usageDelta <= 0 {
		return false
	}
	r := float64(charsAdded) / float64(usageDelta)
	if r < minCharsPerToken || r > maxCharsPerToken {
		return false
	}
	if c.models == nil {
		c.models = make(map[string]*modelRatio)
	}
	m := c.models[model]
	if m == nil {
		m = &modelRatio{}
		c.models[model] = m
	}
	keep := math.Exp2(-float64(charsAdded) / c.halfLife())
	m.chars = m.chars*keep + float64(charsAdded)
	m.tokens = m.tokens*keep + float64(usageDelta)
	m.n++
	return true
}

// CharsPerToken returns the learned ratio of model, or the default ratio
// when nothing was learned about it yet.
func (c *Calibrator) CharsPerToken(model string) float64 {
	return c.Stats(model).CharsPerToken
}

// Stats returns what was learned about model.
func (c *Calibrator) Stats(model string) CalibrationStats {
	m := c.models[model]
	if m == nil || m.n == 0 || m.tokens <= 0 {
		return CalibrationStats{CharsPerToken: c.defaultRatio()}
	}
	r := m.chars / m.tokens
	r = math.Min(math.Max(r, minCharsPerToken), maxCharsPerToken)
	return CalibrationStats{CharsPerToken: r, Observations: m.n, Learned: true}
}

// Estimate returns the tokens of m under model's ratio: ceil(chars /
// ratio) for its text, with each image still counted as ImageTokens. With
// the default ratio of 4 it equals EstimateTokens(m). The cost is one
// pass over the message.
func (c *Calibrator) Estimate(model string, m *Message) int {
	chars, images := messageSize(m)
	return charsToTokens(chars, c.CharsPerToken(model)) + images*ImageTokens
}

// EstimateChars returns the tokens of chars characters (UTF-16 code
// units, as EstimateTokens counts them) of text outside any message, such
// as a request's system prompt and tool schemas, under model's ratio:
// ceil(chars / ratio). It is the conversion Estimate and the Predictor
// use; the proxy measures the parts of a request it does not decode with
// it.
func (c *Calibrator) EstimateChars(model string, chars int) int {
	return charsToTokens(chars, c.CharsPerToken(model))
}

// charsToTokens is ceil(chars / ratio), exact for the ratio 4 used by
// EstimateTokens.
func charsToTokens(chars int, ratio float64) int {
	if chars <= 0 {
		return 0
	}
	if ratio == 4 {
		return (chars + 3) / 4
	}
	return int(math.Ceil(float64(chars) / ratio))
}

// messageSize counts what EstimateTokens counts (see its rules), keeping
// the images apart: chars are the UTF-16 code units of everything but
// images, images the number of image parts. EstimateTokens(m) is
// ceil((chars + images*imageChars) / 4); the Calibrator divides chars by
// its learned ratio instead.
func messageSize(m *Message) (chars, images int) {
	if m.Role == RoleBash {
		run := m.Metadata()
		return jsontext.UTF16Len(run.Command) + jsontext.UTF16Len(run.Output), 0
	}
	for i := range m.Content {
		p := &m.Content[i]
		switch p.Type {
		case PartText:
			chars += jsontext.UTF16Len(p.Text)
		case PartThinking:
			if m.Role == RoleAssistant {
				chars += jsontext.UTF16Len(p.Thinking)
			}
		case PartImage:
			images++
		case PartToolCall:
			if m.Role == RoleAssistant && p.ToolCall != nil {
				chars += jsontext.UTF16Len(p.ToolCall.Name) + JSStringifyLen(p.ToolCall.Arguments)
			}
		}
	}
	return chars, images
}

// messageChars is the character count EstimateTokens divides by four,
// images included as imageChars each.
func messageChars(m *Message) int {
	chars, images := messageSize(m)
	return chars + images*imageChars
}

// Predictor keeps a running prediction of the prompt size the next model
// call will report, and feeds a Calibrator from the calls it sees. It is
// Meter with a learned ratio: the last valid provider report (prompt plus
// the reply it produced, Usage.ContextTokens) plus the messages appended
// since, estimated at the model's learned chars-per-token ratio instead of
// a fixed four.
//
// When a message with a valid report is added, the growth of the prompt
// since the previous report, less the previous reply's output tokens
// (which the report already counts exactly) and less ImageTokens per
// image, is matched against the characters of the messages in between and
// given to the Calibrator; so the ratio is learned only from what was
// known before each call. Observations are skipped across a change of
// model, since two tokenizers are involved.
//
// Failed assistant replies (aborted or errored) are not counted: pi does
// not send them back to the provider, and the reported usage of the real
// sessions confirms it.
//
// The prediction is the higher of two figures: the last known value
// grown by the estimate of what followed it, and an estimate of the whole
// context from scratch at the learned ratio. The second only matters when
// there is no usable report (a new context, or one just compacted).
//
// All methods cost O(1) apart from the estimate of the message added
// (O(its length)) and Reset (O(context)). The zero value is an empty
// context estimated at four characters per token, learning nothing.
type Predictor struct {
	// Cal, when set, supplies the ratios and learns from added messages.
	// With Cal nil the ratio is DefaultCharsPerToken.
	Cal *Calibrator

	model string

	known      bool   // a usable report was seen since the last reset
	base       int    // ContextTokens of that report
	prompt     int    // its prompt (input + cache read + cache write)
	baseModel  string // model that made the reported call
	lastIndex  int    // 1 + index of the reported message, 0 if none
	n          int    // messages seen
	chars      int    // characters added since the report
	images     int    // images added since the report
	totalChars int    // characters of the whole context
	totalImgs  int    // images of the whole context
}

// NewPredictor returns a predictor for an existing context, using and
// teaching cal (which may be nil). See Reset.
func NewPredictor(cal *Calibrator, c *Context) *Predictor {
	p := &Predictor{Cal: cal}
	p.Reset(c)
	return p
}

// Reset measures the context again from scratch, as after a compaction or
// a context edit, without teaching the Calibrator anything. The last valid
// report after the latest compaction is taken from Measure (so the tokens
// freed by later context edits are taken off it); the messages after it
// are estimated at the learned ratio of the context's model.
func (p *Predictor) Reset(c *Context) {
	*p = Predictor{Cal: p.Cal, model: c.Model}
	u := Measure(c)
	if u.LastUsageIndex >= 0 {
		p.known = true
		p.base = u.UsageTokens
		p.lastIndex = u.LastUsageIndex + 1
		if usage, ok := c.Messages[u.LastUsageIndex].ValidUsage(); ok {
			p.prompt = promptTokens(usage)
		}
		p.baseModel = c.Messages[u.LastUsageIndex].Model
	}
	for i, m := range c.Messages {
		if failedReply(m) {
			continue
		}
		chars, images := messageSize(m)
		p.totalChars += chars
		p.totalImgs += images
		if i >= p.lastIndex {
			p.chars += chars
			p.images += images
		}
	}
	p.n = len(c.Messages)
}

// SetModel names the model the next call will use (an assistant message
// added sets it too). Estimates use its learned ratio.
func (p *Predictor) SetModel(model string) { p.model = model }

// Model returns the model the predictions are for.
func (p *Predictor) Model() string { return p.model }

// Add accounts for one message appended to the context. A message with a
// valid, non-empty provider report becomes the new last known value and,
// when a Calibrator is set, teaches it the ratio of the messages added
// since the previous report.
func (p *Predictor) Add(m *Message) {
	p.n++
	if m.Role == RoleAssistant && m.Model != "" {
		p.model = m.Model
	}
	if failedReply(m) {
		return
	}
	chars, images := messageSize(m)
	p.totalChars += chars
	p.totalImgs += images
	u, ok := m.ValidUsage()
	if !ok || u.ContextTokens() <= 0 {
		p.chars += chars
		p.images += images
		return
	}
	prompt := promptTokens(u)
	if p.known && p.Cal != nil && p.baseModel == m.Model {
		p.Cal.Observe(m.Model, p.chars, prompt-p.base-p.images*ImageTokens)
	}
	p.known = true
	p.base, p.prompt, p.baseModel = u.ContextTokens(), prompt, m.Model
	p.lastIndex = p.n
	p.chars, p.images = 0, 0
}

// ratio is the chars-per-token ratio for the current model.
func (p *Predictor) ratio() float64 {
	if p.Cal == nil {
		return DefaultCharsPerToken
	}
	return p.Cal.CharsPerToken(p.model)
}

// Tokens predicts the prompt size the next call will report.
func (p *Predictor) Tokens() int { return p.Usage().Tokens }

// Usage returns the prediction in Measure's terms: UsageTokens is the last
// known value, TrailingTokens the rest of the prediction, LastUsageIndex
// the index of the reporting message (-1 when none).
func (p *Predictor) Usage() ContextUsage {
	r := p.ratio()
	u := ContextUsage{LastUsageIndex: p.lastIndex - 1}
	if p.known {
		u.UsageTokens = p.base
		u.TrailingTokens = charsToTokens(p.chars, r) + p.images*ImageTokens
	}
	u.Tokens = u.UsageTokens + u.TrailingTokens
	if whole := charsToTokens(p.totalChars, r) + p.totalImgs*ImageTokens; whole > u.Tokens {
		u.Tokens = whole
		u.TrailingTokens = whole - u.UsageTokens
	}
	return u
}

// LastPrompt returns the prompt size (input, cache read and cache write
// tokens) of the last known report, and whether there is one.
func (p *Predictor) LastPrompt() (int, bool) { return p.prompt, p.known }

// promptTokens is the size of the prompt a call saw, without its output.
func promptTokens(u Usage) int { return u.Input + u.CacheRead + u.CacheWrite }

// failedReply reports whether m is an assistant reply that was aborted or
// failed; such replies are not sent to the model again.
func failedReply(m *Message) bool {
	return m.Role == RoleAssistant && (m.StopReason == StopAborted || m.StopReason == StopError)
}
