package compact

import (
	"fmt"
	"math"
)

// Prices are a model's list prices, in US dollars per million tokens, as
// the registry (models.json) or a configuration's models section gives
// them. A model whose prices are not known has none (ModelInfo.Prices is
// nil): its cost is unknown, never zero.
//
// Providers bill a prompt in parts: tokens read from the prompt cache are
// cheaper than input (Anthropic and OpenAI: a tenth of it on current
// models), tokens written to it dearer on Anthropic (1.25 times input for
// the five-minute cache, twice for the one-hour cache). A price left at 0
// bills its tokens at the price it falls back to: CacheRead and
// CacheWrite at Input (OpenAI bills the prompt it caches as input),
// CacheWrite1h at CacheWrite.
type Prices struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
	// CacheRead is the price of a prompt token read from the cache.
	CacheRead float64 `json:"cacheRead,omitempty"`
	// CacheWrite is the price of a prompt token written to the cache (on
	// Anthropic, the five-minute cache).
	CacheWrite float64 `json:"cacheWrite,omitempty"`
	// CacheWrite1h is the price of a token written to Anthropic's
	// one-hour cache (Usage.CacheWrite1h).
	CacheWrite1h float64 `json:"cacheWrite1h,omitempty"`
	// Source says where the prices were read (a provider's pricing
	// page) and Date when (YYYY-MM-DD): prices change.
	Source string `json:"source,omitempty"`
	Date   string `json:"date,omitempty"`
}

// Cost is what a call costs, in US dollars, by the part of the usage
// billed.
type Cost struct {
	// Input is the uncached prompt; CacheRead the prompt read from the
	// cache; CacheWrite the prompt written to it (both lifetimes);
	// Output what the model wrote. The provider's own compaction step
	// (Usage.Compaction) is counted in each part like the answer's.
	Input      float64 `json:"input"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
	Output     float64 `json:"output"`
}

// Total is the whole cost: the parts added.
func (c Cost) Total() float64 { return c.Input + c.CacheRead + c.CacheWrite + c.Output }

// Plus returns the parts of c and d added.
func (c Cost) Plus(d Cost) Cost {
	return Cost{Input: c.Input + d.Input, CacheRead: c.CacheRead + d.CacheRead, CacheWrite: c.CacheWrite + d.CacheWrite, Output: c.Output + d.Output}
}

// Cost prices u: each count times its price per million tokens. The
// five-minute cache writes are CacheWrite - CacheWrite1h, the one-hour
// ones CacheWrite1h; the usage of the provider's own compaction step
// (u.Compaction) is added to the answer's, since the provider bills it in
// the same call. Prices left at 0 fall back as the Prices doc says.
//
// For example, Claude Sonnet 4.5 ($3 input, $15 output, $0.30 cache read,
// $3.75 five-minute write) answering a prompt of 1,000 uncached tokens,
// 100,000 read from the cache and 2,000 written to it with 500 tokens
// costs $0.003 + $0.03 + $0.0075 + $0.0075 = $0.048.
func (p Prices) Cost(u Usage) Cost {
	read, write, write1h := p.cacheRead(), p.cacheWrite(), p.cacheWrite1h()
	in := u.Input + u.Compaction.Input
	cr := u.CacheRead + u.Compaction.CacheRead
	w1h := u.CacheWrite1h + u.Compaction.CacheWrite1h
	w5m := u.CacheWrite + u.Compaction.CacheWrite - w1h
	out := u.Output + u.Compaction.Output
	return Cost{
		Input:      perMillion(in, p.Input),
		CacheRead:  perMillion(cr, read),
		CacheWrite: perMillion(w5m, write) + perMillion(w1h, write1h),
		Output:     perMillion(out, p.Output),
	}
}

// CacheSavings is what the prompt cache saved on u's prompt: what it
// would have cost billed all as uncached input, less what it cost (reads
// cheaper, writes dearer on Anthropic). It is negative when the writes
// cost more than the reads saved.
func (p Prices) CacheSavings(u Usage) float64 {
	c := p.Cost(u)
	prompt := u.Input + u.Compaction.Input + u.CacheRead + u.Compaction.CacheRead + u.CacheWrite + u.Compaction.CacheWrite
	return p.InputCost(prompt) - (c.Input + c.CacheRead + c.CacheWrite)
}

// InputCost is what tokens cost as uncached prompt.
func (p Prices) InputCost(tokens int) float64 { return perMillion(tokens, p.Input) }

// CacheReadCost is what tokens cost read from the prompt cache.
func (p Prices) CacheReadCost(tokens int) float64 { return perMillion(tokens, p.cacheRead()) }

// CacheWriteCost is what tokens cost written to the (five-minute) prompt
// cache.
func (p Prices) CacheWriteCost(tokens int) float64 { return perMillion(tokens, p.cacheWrite()) }

func (p Prices) cacheRead() float64 {
	if p.CacheRead > 0 {
		return p.CacheRead
	}
	return p.Input
}

func (p Prices) cacheWrite() float64 {
	if p.CacheWrite > 0 {
		return p.CacheWrite
	}
	return p.Input
}

func (p Prices) cacheWrite1h() float64 {
	if p.CacheWrite1h > 0 {
		return p.CacheWrite1h
	}
	return p.cacheWrite()
}

func perMillion(tokens int, price float64) float64 { return float64(tokens) * price / 1e6 }

// Cost prices u at m's prices; ok is false when m has none (the cost is
// unknown, not zero).
func (m ModelInfo) Cost(u Usage) (c Cost, ok bool) {
	if m.Prices == nil {
		return Cost{}, false
	}
	return m.Prices.Cost(u), true
}

// check returns the first problem of p as a one-line error naming the
// field, nil when there is none: every price must be a finite number, not
// negative.
func (p *Prices) check() error {
	if p == nil {
		return nil
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"input", p.Input}, {"output", p.Output}, {"cacheRead", p.CacheRead}, {"cacheWrite", p.CacheWrite}, {"cacheWrite1h", p.CacheWrite1h}} {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("prices.%s: %v is not a price in dollars per million tokens", f.name, f.v)
		}
	}
	return nil
}
