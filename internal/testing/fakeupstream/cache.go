package fakeupstream

import (
	"encoding/json"
	"sync"
	"time"
)

// Prompt-cache accounting by prefix, per credential and model, on the
// clock Config.Now.
//
// Anthropic (docs build-with-claude/prompt-caching; PROXY.md §3.1): the
// prompt is read as blocks in render order — tools, system, then each
// message's content blocks. A block with cache_control is a breakpoint
// (the top-level cache_control, "automatic caching" in the docs, sets one
// at the last block). A request reads the longest stored prefix that ends at a block
// boundary no more than CacheLookback blocks before one of its
// breakpoints, writes entries at each of its breakpoints after that, and
// is billed: cache_read_input_tokens for the prefix read,
// cache_creation_input_tokens from there to its last breakpoint (split by
// TTL in cache_creation), input_tokens for the rest. An entry lives 5
// minutes, or 1 hour when its breakpoint says "ttl":"1h", and each hit
// refreshes it. Prefixes shorter than Config.CacheMinTokens are not
// cached. Changing the thinking settings changes the prefix of the
// messages (system and tools stay cached).
//
// OpenAI Chat and Responses (PROXY.md §3.2, §8): caching is automatic at
// every message or item boundary whose prefix holds at least
// CacheMinTokens; an entry lives 30 minutes from its last use; the read is
// reported as cached_tokens.
//
// A block's tokens are CountTokens of its canonical form (see canonical);
// what the blocks leave of the body's tokens counts as uncached input.

// Cache lifetimes and limits of the providers.
const (
	AnthropicCacheTTL   = 5 * time.Minute
	AnthropicCacheTTL1h = time.Hour
	OpenAICacheTTL      = 30 * time.Minute
	// CacheLookback is how many blocks before a breakpoint Anthropic looks
	// for an earlier cache entry.
	CacheLookback = 20
	// DefaultCacheMinTokens is the smallest prefix that is cached (Sonnet
	// and OpenAI: 1024 tokens).
	DefaultCacheMinTokens = 1024
)

// cacheEntry is one stored prefix.
type cacheEntry struct {
	expires time.Time
	ttl     time.Duration
}

// promptCache holds the stored prefixes by credential, model and prefix
// hash.
type promptCache struct {
	mu      sync.Mutex
	entries map[cacheKey]*cacheEntry
}

type cacheKey struct {
	cred, model string
	prefix      digest
}

// unit is one cacheable block of a prompt: the hash of the prompt up to
// and including it, the tokens up to and including it, and, for a
// breakpoint, its TTL.
type unit struct {
	hash       digest
	cum        int
	breakpoint time.Duration // 0 when the block is not a breakpoint
}

// usage is what a request is billed: Total tokens in all, of which Read
// came from the cache and Write (Write1h of it with a 1-hour TTL) was
// written to it.
type usage struct {
	Total, Read, Write, Write1h int
}

// usageOf is the billing recorded in rec.
func usageOf(rec *Request) usage {
	return usage{Total: rec.Tokens, Read: rec.CacheRead, Write: rec.CacheWrite, Write1h: rec.CacheWrite1h}
}

// account bills a request that is about to be answered and records the
// figures in rec.
func (f *Fake) account(api API, b *body, rec *Request) {
	if f.cfg.NoCache {
		return
	}
	var units []unit
	var read, write, write1h int
	if api == Anthropic {
		units = anthropicUnits(b)
		read, write, write1h = f.cache.anthropic(rec.Credential, b.model, units, f.cfg.Now(), f.cfg.CacheMinTokens)
	} else {
		units = openaiUnits(api, b)
		read = f.cache.openai(rec.Credential, b.model, units, f.cfg.Now(), f.cfg.CacheMinTokens)
	}
	if read+write > rec.Tokens {
		// The blocks' canonical forms can outweigh a body written without
		// spaces; the bill never exceeds the body.
		write = max(rec.Tokens-read, 0)
		write1h = min(write1h, write)
	}
	rec.CacheRead, rec.CacheWrite, rec.CacheWrite1h = read, write, write1h
}

// anthropicUnits lists the blocks of a Messages prompt in render order.
func anthropicUnits(b *body) []unit {
	var units []unit
	d, cum := digest{}, 0
	add := func(raw json.RawMessage, tag string) {
		c := canonical(raw)
		d = chain(d, []byte(tag), c)
		cum += CountTokens(c)
		units = append(units, unit{hash: d, cum: cum, breakpoint: ttlOf(raw)})
	}
	for _, t := range b.rawTools {
		add(t, "tool")
	}
	var sys string
	switch {
	case len(b.system) == 0 || string(b.system) == "null":
	case json.Unmarshal(b.system, &sys) == nil:
		add(b.system, "system")
	default:
		var blocks []json.RawMessage
		_ = json.Unmarshal(b.system, &blocks)
		for _, bl := range blocks {
			add(bl, "system")
		}
	}
	// The thinking settings are part of the messages' prefix.
	var think json.RawMessage
	if b.thinking != nil {
		think, _ = json.Marshal(b.thinking)
	}
	d = chain(d, []byte("thinking"), think)
	for _, raw := range b.items {
		m, ok := parseMessage(raw)
		if !ok {
			continue
		}
		for i, bl := range m.blocks {
			tag := "block"
			if i == 0 {
				tag = "message " + m.role
			}
			add(bl, tag)
		}
	}
	if len(b.cacheControl) > 0 && string(b.cacheControl) != "null" && len(units) > 0 {
		units[len(units)-1].breakpoint = ttlOf(json.RawMessage(`{"cache_control":` + string(b.cacheControl) + `}`))
	}
	return units
}

// ttlOf is the TTL of a block's cache_control, 0 when it has none.
func ttlOf(raw json.RawMessage) time.Duration {
	var bl struct {
		CacheControl *struct {
			TTL string `json:"ttl"`
		} `json:"cache_control"`
	}
	if json.Unmarshal(raw, &bl) != nil || bl.CacheControl == nil {
		return 0
	}
	if bl.CacheControl.TTL == "1h" {
		return AnthropicCacheTTL1h
	}
	return AnthropicCacheTTL
}

// openaiUnits lists the boundaries of a Chat or Responses prompt: the
// instructions and tools, then each message or item.
func openaiUnits(api API, b *body) []unit {
	var units []unit
	head := [][]byte{[]byte(api), canonical(b.instructions)}
	head = append(head, canonicalList(b.rawTools)...)
	d := chain(digest{}, head...)
	cum := 0
	for _, h := range head[1:] {
		cum += CountTokens(h)
	}
	for _, raw := range b.items {
		c := canonical(raw)
		d = chain(d, c)
		cum += CountTokens(c)
		units = append(units, unit{hash: d, cum: cum, breakpoint: OpenAICacheTTL})
	}
	return units
}

// live returns the entry for k when it has not expired.
func (c *promptCache) live(k cacheKey, now time.Time) *cacheEntry {
	e := c.entries[k]
	if e == nil || !now.Before(e.expires) {
		return nil
	}
	return e
}

// put stores or refreshes an entry.
func (c *promptCache) put(k cacheKey, ttl time.Duration, now time.Time) {
	if e := c.entries[k]; e != nil && e.ttl > ttl && now.Before(e.expires) {
		ttl = e.ttl
	}
	c.entries[k] = &cacheEntry{expires: now.Add(ttl), ttl: ttl}
}

// anthropic bills and updates the cache for one Messages request.
func (c *promptCache) anthropic(cred, model string, units []unit, now time.Time, minTokens int) (read, write, write1h int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	hit := -1
	for i, u := range units {
		if u.breakpoint == 0 {
			continue
		}
		for j := i; j >= 0 && j >= i-CacheLookback && j > hit; j-- {
			if c.live(cacheKey{cred, model, units[j].hash}, now) != nil {
				hit = j
				break
			}
		}
	}
	if hit >= 0 {
		read = units[hit].cum
		e := c.live(cacheKey{cred, model, units[hit].hash}, now)
		e.expires = now.Add(e.ttl)
	}
	from := read
	for i, u := range units {
		if u.breakpoint == 0 || i <= hit || u.cum < minTokens {
			continue
		}
		n := u.cum - from
		write += n
		if u.breakpoint == AnthropicCacheTTL1h {
			write1h += n
		}
		from = u.cum
		c.put(cacheKey{cred, model, u.hash}, u.breakpoint, now)
	}
	return read, write, write1h
}

// openai bills and updates the cache for one Chat or Responses request:
// the read is the longest stored boundary; every boundary of at least
// minTokens is stored.
func (c *promptCache) openai(cred, model string, units []unit, now time.Time, minTokens int) (read int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(units) - 1; i >= 0; i-- {
		if e := c.live(cacheKey{cred, model, units[i].hash}, now); e != nil {
			read = units[i].cum
			break
		}
	}
	for _, u := range units {
		if u.cum >= minTokens {
			c.put(cacheKey{cred, model, u.hash}, OpenAICacheTTL, now)
		}
	}
	return read
}

// CacheStats sums the prompt-cache figures of requests.
type CacheStats struct {
	// Requests is how many requests were billed (answered, not refused).
	Requests int
	// Input is their input tokens in all; Read of them came from the
	// cache, Write were written to it (Write1h with a 1-hour TTL).
	Input, Read, Write, Write1h int
}

// ReadShare is the part of the input read from the cache, 0 when there
// was none.
func (s CacheStats) ReadShare() float64 {
	if s.Input == 0 {
		return 0
	}
	return float64(s.Read) / float64(s.Input)
}

// SumCache sums the cache figures of the answered model calls among reqs
// (pass a subset, Summaries say, to sum part of a run).
func SumCache(reqs []Request) CacheStats {
	var s CacheStats
	for _, r := range reqs {
		if r.API == "" || r.Rejected || r.Status != 200 {
			continue
		}
		s.Requests++
		s.Input += r.Tokens
		s.Read += r.CacheRead
		s.Write += r.CacheWrite
		s.Write1h += r.CacheWrite1h
	}
	return s
}

// Cache sums the cache figures of every request so far (see SumCache).
func (f *Fake) Cache() CacheStats { return SumCache(f.Requests()) }
