package proxy

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"sync"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsontext"
	"github.com/compactkit/compact/proxy/store"
)

// Explaining cache misses. When the provider read much less of a
// request's prompt from its cache than the previous request of the
// conversation had sent, the proxy records why (store.CacheMiss, carried
// on the last call so that later hits keep it), counts it in
// compact_proxy_cache_misses_total{cause} and logs it. The explanation
// comes from what the proxy recorded itself: the compaction applied, the
// time since the previous answer, and a fingerprint of what it sent
// upstream last time (sentPrint, kept in memory on this replica). When
// the answer carries Anthropic's cache diagnostics, the provider's own
// reason is recorded beside it.
//
// All of it runs after the answer, from what the request's reading
// already computed (the units' digests); nothing is parsed again.

// Thresholds of a cache miss: the previous prompt must have been at
// least minCacheablePrompt tokens (the providers' smallest cacheable
// prefix, 1,024 tokens for most models), and the request must have read
// less than missShare of it.
const (
	minCacheablePrompt = 1024
	missShare          = 0.9
)

// CacheDiagnostics is what an Anthropic answer's cache diagnostics said
// (the response's "diagnostics", for a request that carried a
// "diagnostics" object): Reason is cache_miss_reason.type
// ("model_changed", "system_changed", "tools_changed",
// "messages_changed", "previous_message_not_found", "unavailable"), ""
// when the reason was null (no divergence, or the comparison still
// running); Missed is cache_missed_input_tokens (the *_changed reasons
// only).
type CacheDiagnostics struct {
	Reason string
	Missed int
}

// anthropicDiagnostics is the wire form of the diagnostics object of an
// Anthropic message (platform.claude.com/docs/en/build-with-claude/cache-diagnostics).
type anthropicDiagnostics struct {
	CacheMissReason *struct {
		Type   string `json:"type"`
		Missed int    `json:"cache_missed_input_tokens"`
	} `json:"cache_miss_reason"`
}

// observed maps the wire form; nil stays nil.
func (d *anthropicDiagnostics) observed() *CacheDiagnostics {
	if d == nil {
		return nil
	}
	out := &CacheDiagnostics{}
	if r := d.CacheMissReason; r != nil {
		out.Reason, out.Missed = r.Type, r.Missed
	}
	return out
}

// sentPrint is the fingerprint of what one request sent upstream: its
// model, a hash of everything around the message list (system prompt,
// tools, settings; the per-request diagnostics object left out) and one
// hash per list entry as sent (a head item, the summary, a unit of kept
// items).
type sentPrint struct {
	// request is the request's place in its conversation
	// (LastCall.Totals.Requests): a print is compared only with the next
	// request's previous one.
	request  int
	model    string
	envelope uint64
	entries  []printEntry
	at       time.Time
}

// printEntry is one entry of the list as sent: its hash, the number of
// its first message in the list (from 1), and where it came from: a unit
// of the request (its index), entryHead or entrySummary.
type printEntry struct {
	hash uint64
	item int32
	unit int32
}

const (
	entryHead    = -1
	entrySummary = -2
)

// Bounds of the prints kept: an entry older than the longest cache
// lifetime cannot explain a miss (idleness does), and past
// maxPrintEntries list entries in all the oldest prints are dropped.
const (
	printTTL        = extendedCacheTTL + 10*time.Minute
	maxPrintEntries = 1 << 21 // 16 bytes each: 32 MiB at most
)

// sentPrints keeps the latest print of each conversation on this
// replica. The zero value is ready to use.
type sentPrints struct {
	mu      sync.Mutex
	seed    maphash.Seed
	seeded  bool
	byKey   map[string]*sentPrint
	entries int
}

// hashSeed returns the seed of the prints' hashes (they never leave the
// process).
func (c *sentPrints) hashSeed() maphash.Seed {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.seeded {
		c.seed, c.seeded = maphash.MakeSeed(), true
	}
	return c.seed
}

// swap stores p as key's print and returns the one before it (nil when
// none, or expired).
func (c *sentPrints) swap(key string, p *sentPrint) *sentPrint {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byKey == nil {
		c.byKey = map[string]*sentPrint{}
	}
	old := c.byKey[key]
	if old != nil {
		c.entries -= len(old.entries)
	}
	c.byKey[key] = p
	c.entries += len(p.entries)
	for c.entries > maxPrintEntries && len(c.byKey) > 1 {
		c.trim(p.at)
	}
	if old != nil && (p.at.Sub(old.at) > printTTL || p.at.Before(old.at)) {
		return nil
	}
	return old
}

// trim drops the expired prints, then those older than halfway from the
// oldest to now; c.mu is held.
func (c *sentPrints) trim(now time.Time) {
	var oldest time.Time
	for k, p := range c.byKey {
		if now.Sub(p.at) > printTTL {
			c.entries -= len(p.entries)
			delete(c.byKey, k)
		} else if oldest.IsZero() || p.at.Before(oldest) {
			oldest = p.at
		}
	}
	if c.entries <= maxPrintEntries {
		return
	}
	cut := oldest.Add(now.Sub(oldest) / 2)
	for k, p := range c.byKey {
		if !p.at.After(cut) && len(c.byKey) > 1 {
			c.entries -= len(p.entries)
			delete(c.byKey, k)
		}
	}
}

// printOf fingerprints what the read request x sent upstream: its head
// items, the summary when a compaction went with it, and its units from
// there on (their digests, computed when the request was read: moved
// cache_control markers do not count).
func (s *Server) printOf(x *exchange, request int, at time.Time) *sentPrint {
	v, p := x.v, x.v.p
	seed := s.prints.hashSeed()
	sp := &sentPrint{request: request, model: p.Model, envelope: envelopeHash(seed, p), at: at,
		entries: make([]printEntry, 0, p.Head+1+len(p.Units))}
	n := int32(0)
	for _, it := range p.Items[:p.Head] {
		n++
		sp.entries = append(sp.entries, printEntry{hash: maphash.Bytes(seed, it), item: n, unit: entryHead})
	}
	from := 0
	if sentCompacted(x) {
		n++
		sp.entries = append(sp.entries, printEntry{hash: maphash.Bytes(seed, v.cp.Item), item: n, unit: entrySummary})
		from = v.cp.Covered
	}
	for k := from; k < len(p.Units); k++ {
		u := p.Units[k]
		sp.entries = append(sp.entries, printEntry{hash: binary.LittleEndian.Uint64(u.Digest[:8]), item: n + 1, unit: int32(k)})
		n += int32(u.End - u.Start)
	}
	return sp
}

// sentCompacted reports whether x went upstream with its conversation's
// compaction applied (a rewrite that failed sends the client's bytes).
func sentCompacted(x *exchange) bool {
	return x.v != nil && x.v.cp != nil && x.body != nil
}

// volatileKeys are the top-level fields that change on every request
// without touching the prompt: left out of the envelope's hash.
var volatileKeys = [][]byte{[]byte(`"diagnostics"`), []byte(`"previous_response_id"`)}

// envelopeHash hashes the body around the message list, the volatile
// keys (and their values) left out.
func envelopeHash(seed maphash.Seed, p *Parsed) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	if p.ListEnd <= p.ListStart {
		hashWithout(&h, p.Body)
	} else {
		hashWithout(&h, p.Body[:p.ListStart])
		h.WriteByte(0)
		hashWithout(&h, p.Body[p.ListEnd:])
	}
	return h.Sum64()
}

// hashWithout writes b to h without the members named by volatileKeys
// (key, value and one comma).
func hashWithout(h *maphash.Hash, b []byte) {
	for len(b) > 0 {
		i, key := -1, []byte(nil)
		for _, k := range volatileKeys {
			if j := bytes.Index(b, k); j >= 0 && (i < 0 || j < i) {
				i, key = j, k
			}
		}
		if i < 0 {
			h.Write(b)
			return
		}
		h.Write(b[:i])
		j := jsontext.SkipSpace(b, i+len(key))
		if j >= len(b) || b[j] != ':' {
			h.Write(b[i : i+len(key)])
			b = b[i+len(key):]
			continue
		}
		end := jsontext.SkipValue(b, j+1)
		if end < 0 {
			h.Write(b[i:])
			return
		}
		end = jsontext.SkipSpace(b, end)
		if end < len(b) && b[end] == ',' {
			end++
		}
		b = b[end:]
	}
}

// missInput is what explaining one answer needs.
type missInput struct {
	x    *exchange
	key  string
	last *store.LastCall // this request's, with its totals counted
	prev *store.LastCall // the previous request's (newestLast), nil for none
	u    *compact.Usage
	diag *CacheDiagnostics
}

// noteMiss sets in.last.LastMiss when this answer missed the prompt
// cache (see CacheMiss), counts and logs it; on a read request it first
// keeps the print of what was sent. It runs after the answer.
func (s *Server) noteMiss(in missInput) {
	x := in.x
	var cur, before *sentPrint
	if x.v != nil && in.u != nil {
		cur = s.printOf(x, in.last.Totals.Requests, in.last.At)
		before = s.prints.swap(in.key, cur)
	}
	m := s.explainMiss(in, cur, before)
	if m == nil {
		return
	}
	in.last.LastMiss = m
	s.metrics.cacheMiss(m.Cause)
	args := []any{"conversation", shortOf(x), "cause", m.Cause, "expected", m.Expected, "read", m.Read}
	if m.DivergedAt != nil {
		args = append(args, "diverged_at", *m.DivergedAt, "role", m.Role)
	}
	if m.Idle > 0 {
		args = append(args, "idle_s", int(m.Idle.Seconds()))
	}
	if m.ProviderReason != "" {
		args = append(args, "provider_reason", m.ProviderReason, "provider_missed", m.ProviderMissed)
	}
	s.log.Info("cache miss", args...)
}

// shortOf is the short id of x's conversation, as the log prints it.
func shortOf(x *exchange) string {
	if x.v != nil {
		return x.v.id.short
	}
	return x.light.short
}

// explainMiss returns the explanation of the answer's cache miss, nil
// when it was not one: the previous prompt was cacheable (at least
// minCacheablePrompt tokens; on Anthropic, the client did cache it) and
// this request read less than missShare of it. cur is this request's
// print (nil when it was not read), before the previous one kept here.
func (s *Server) explainMiss(in missInput, cur, before *sentPrint) *store.CacheMiss {
	prev, u, x := in.prev, in.u, in.x
	if prev == nil || u == nil {
		return nil
	}
	expected := prev.Usage.PromptTokens()
	if expected < minCacheablePrompt || float64(u.CacheRead) >= missShare*float64(expected) {
		return nil
	}
	if x.api == Anthropic && prev.Usage.CacheRead+prev.Usage.CacheWrite == 0 {
		// Anthropic caches only what a request marks: the client did not.
		return nil
	}
	m := &store.CacheMiss{At: in.last.At, Request: in.last.Totals.Requests, Expected: expected, Read: u.CacheRead}
	if d := in.diag; d != nil {
		m.ProviderReason, m.ProviderMissed = d.Reason, d.Missed
	}
	v := x.v
	switch {
	case sentCompacted(x) && (x.compacted != nil || v.cp.Chain != prev.Applied):
		p := v.p
		covered := len(p.Items) // the last message replaced, counted from 1
		if v.cp.Covered < len(p.Units) {
			covered = p.Units[v.cp.Covered].Start
		}
		m.Cause, m.DivergedAt, m.Role = store.MissCompaction, new(p.Head+1), "summary"
		m.Detail = fmt.Sprintf("compact replaced messages %d–%d with its summary: expected, paid once", p.Head+1, covered)
		return m
	}
	if gap, ttl := x.start.Sub(prev.At), s.cacheLifetime(x); !prev.At.IsZero() && gap > ttl {
		m.Cause, m.Idle = store.MissIdle, gap
		m.Detail = fmt.Sprintf("idle for %s, longer than the %s the prompt cache lives", gap.Round(time.Second), ttl)
		return m
	}
	switch {
	case cur == nil:
		m.Cause, m.Detail = store.MissUnknown, "this request was passed through unread: position unknown"
		return m
	case before == nil || before.request != prev.Totals.Requests:
		m.Cause, m.Detail = store.MissUnknown, "the previous request went through another replica: position unknown"
		return m
	}
	at, role, detail := divergence(x, cur, before)
	if at < 0 {
		m.Cause = store.MissProvider
		m.Detail = "the same prefix was sent within the cache lifetime: the provider did not reuse it (an eviction, a prefix below its minimum, another region)"
		return m
	}
	m.Cause, m.DivergedAt, m.Role, m.Detail = store.MissPrefix, new(at), role, detail
	return m
}

// divergence finds the first place where cur differs from before within
// before's length: the message number (0 before the list), its role and
// a sentence; at is -1 when cur extends before unchanged.
func divergence(x *exchange, cur, before *sentPrint) (at int, role, detail string) {
	switch {
	case cur.model != before.model:
		return 0, "", fmt.Sprintf("the model changed (%s, was %s)", cur.model, before.model)
	case cur.envelope != before.envelope:
		return 0, "", "the system prompt, the tools or another field around the message list changed"
	}
	for i, b := range before.entries {
		if i >= len(cur.entries) {
			return int(b.item), "", fmt.Sprintf("the request ends before message %d: the previous one's later messages were dropped", b.item)
		}
		c := cur.entries[i]
		if c.hash == b.hash {
			continue
		}
		role = entryRole(x.v.p, c)
		return int(c.item), role, fmt.Sprintf("message %d (%s) differs from the one sent before", c.item, role)
	}
	return -1, "", ""
}

// entryRole is the role of a print entry's first message: the item's
// "role" (else its "type", for Responses items), "summary" for compact's.
func entryRole(p *Parsed, e printEntry) string {
	var item []byte
	switch {
	case e.unit == entrySummary:
		return "summary"
	case e.unit == entryHead:
		item = p.Items[e.item-1]
	default:
		item = p.Items[p.Units[e.unit].Start]
	}
	if r, ok := jsontext.TopLevelString(item, "role"); ok && r != "" {
		return r
	}
	if t, ok := jsontext.TopLevelString(item, "type"); ok && t != "" {
		return t
	}
	return "unknown"
}

// cacheLifetime is how long the provider keeps the prompt cache of x's
// conversation: Config.CacheTTL, an hour when the request marks its
// cache "ttl":"1h" (and CacheTTL is shorter). The one rule of the cache
// lifetime: cold-cache compaction (idle) and cache-miss explanations use
// it.
func (s *Server) cacheLifetime(x *exchange) time.Duration {
	body := x.decoded
	if body == nil {
		body = x.raw
	}
	if s.cacheTTL < extendedCacheTTL && marksHourCache(body) {
		return extendedCacheTTL
	}
	return s.cacheTTL
}
