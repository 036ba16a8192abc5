// Package tiktoken counts tokens exactly for OpenAI models, with the BPE
// vocabularies those models use (o200k_base for GPT-4o, GPT-4.1, GPT-5
// and the o-series; cl100k_base for GPT-4 and GPT-3.5), embedded in the
// binary: no download, no network.
//
// It wraps github.com/tiktoken-go/tokenizer, a maintained pure-Go port of
// OpenAI's tiktoken whose vocabularies are compiled in; writing a BPE
// tokenizer here would duplicate it for nothing. The vocabularies add
// about 6 MB to a binary that imports this package, which is why it is a
// leaf package the root does not import.
//
// Other models keep compact's calibrated estimate: their tokenizers are
// not public.
package tiktoken

import (
	"strings"
	"sync"

	"github.com/tiktoken-go/tokenizer/codec"

	"github.com/compactkit/compact"
)

// Encodings this package knows.
const (
	O200kBase  = "o200k_base"
	Cl100kBase = "cl100k_base"
)

// PerMessage is the tokens a chat message costs beyond its content (the
// role and the separators around it), as OpenAI documents for its chat
// models.
const PerMessage = 3

// Counter counts the tokens of one encoding. It is safe for concurrent
// use.
type Counter struct {
	name  string
	codec *codec.Codec
}

// Loading a vocabulary builds large tables: once per process.
var (
	o200kOnce, cl100kOnce sync.Once
	o200k, cl100k         *Counter
)

// Encoding returns the counter of o200k_base or cl100k_base, and false for
// any other name.
func Encoding(name string) (*Counter, bool) {
	switch name {
	case O200kBase:
		o200kOnce.Do(func() { o200k = &Counter{name: O200kBase, codec: codec.NewO200kBase()} })
		return o200k, true
	case Cl100kBase:
		cl100kOnce.Do(func() { cl100k = &Counter{name: Cl100kBase, codec: codec.NewCl100kBase()} })
		return cl100k, true
	}
	return nil, false
}

// EncodingFor names the encoding of an OpenAI model ("gpt-4o-mini",
// "openai/gpt-5", "o3-mini"), "" when the model is not one it knows.
func EncodingFor(model string) string {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	switch {
	case strings.HasPrefix(m, "gpt-4o"), strings.HasPrefix(m, "gpt-4.1"), strings.HasPrefix(m, "gpt-4.5"),
		strings.HasPrefix(m, "gpt-5"), strings.HasPrefix(m, "chatgpt-4o"), strings.HasPrefix(m, "codex-"),
		strings.HasPrefix(m, "gpt-oss"), isOSeries(m):
		return O200kBase
	case strings.HasPrefix(m, "gpt-4"), strings.HasPrefix(m, "gpt-3.5"), strings.HasPrefix(m, "text-embedding-3"),
		strings.HasPrefix(m, "text-embedding-ada-002"):
		return Cl100kBase
	}
	return ""
}

// isOSeries reports o1, o3, o4-mini and the like.
func isOSeries(m string) bool {
	return len(m) >= 2 && m[0] == 'o' && m[1] >= '1' && m[1] <= '9' && (len(m) == 2 || m[2] == '-')
}

// ForModel returns the counter for an OpenAI model, and false for a model
// whose tokenizer is not known.
func ForModel(model string) (*Counter, bool) {
	return Encoding(EncodingFor(model))
}

// Name is the encoding's name.
func (c *Counter) Name() string { return c.name }

// Count returns the tokens of text. Invalid UTF-8 is counted as the
// replacement characters it decodes to.
func (c *Counter) Count(text string) int {
	n, err := c.codec.Count(text)
	if err != nil {
		n, _ = c.codec.Count(strings.ToValidUTF8(text, "\uFFFD"))
	}
	return n
}

// MessageTokens returns the tokens of a message as a chat model sees it:
// PerMessage, its text and thinking, and for each tool call its name and
// arguments. Images have no text to count; they keep compact's estimate.
// Its signature fits compact.MeasureWith.
func (c *Counter) MessageTokens(m *compact.Message) int {
	n := PerMessage
	for i := range m.Content {
		p := &m.Content[i]
		switch p.Type {
		case compact.PartText:
			n += c.Count(p.Text)
		case compact.PartThinking:
			n += c.Count(p.Thinking)
		case compact.PartToolCall:
			if p.ToolCall != nil {
				n += c.Count(p.ToolCall.Name) + c.Count(string(p.ToolCall.Arguments))
			}
		default:
			n += compact.EstimateTokens(&compact.Message{Role: m.Role, Content: []compact.Part{*p}})
		}
	}
	return n
}
