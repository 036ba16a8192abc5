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

// ObserveMessages records that the messages added between two calls of
// model grew its prompt by growth tokens, as a Meter learns: the
// characters of the messages the model is sent (see ForModel) against
// the growth less ImageTokens per image. The caller decides what the
// growth covers; the proxy, which keeps no Meter between requests, passes
// the growth of the prompt and the messages of the request since the
// previous call, the previous reply included. It reports whether the
// observation was accepted.
func (c *Calibrator) ObserveMessages(model string, added []*Message, growth int) bool {
	var sent sendFilter
	chars, images := 0, 0
	for _, m := range added {
		if sent.keep(m) {
			ch, im := messageSize(m)
			chars += ch
			images += im
		}
	}
	return c.observeAdded(model, chars, images, growth)
}

// observeAdded is Observe for chars characters and images images added
// between two calls whose prompts grew by growth tokens: the images are
// counted at ImageTokens each, the characters learn from the rest.
func (c *Calibrator) observeAdded(model string, chars, images, growth int) bool {
	return c.Observe(model, chars, growth-images*ImageTokens)
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
	return c.sizeTokens(model, chars, images)
}

// sizeTokens is the estimate of a message of chars characters and images
// images under model's ratio (see Estimate).
func (c *Calibrator) sizeTokens(model string, chars, images int) int {
	return charsToTokens(chars, c.CharsPerToken(model)) + images*ImageTokens
}

// EstimateChars returns the tokens of chars characters (UTF-16 code
// units, as EstimateTokens counts them) of text outside any message, such
// as a request's system prompt and tool schemas, under model's ratio:
// ceil(chars / ratio). It is the conversion Estimate and the Meter use;
// the proxy measures the parts of a request it does not decode with it.
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
