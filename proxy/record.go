package proxy

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/proxy/store"
)

// record stores the usage of a finished response for the next request's
// measurement, and feeds the calibrator. The conversation's totals
// (store.LastCall.Totals) and the metrics count the usage, the tokens the
// applied compaction saved and the estimated cost.
func (s *Server) record(x *exchange, obs Observed) {
	v := x.v
	if strings.HasSuffix(x.r.URL.Path, "/count_tokens") {
		return
	}
	if v == nil {
		if obs.Usage != nil {
			s.account(x.api, "", *obs.Usage, 0)
		}
		return
	}
	if obs.Usage == nil && !obs.Overflow {
		return
	}
	applied := ""
	saved := 0
	if v.cp != nil {
		applied = v.cp.Chain
		saved = tokensSaved(v.cp)
	}
	last := &store.LastCall{Units: len(v.p.Units), Chain: hexChain(v.chain[len(v.p.Units)]), Applied: applied, Overflow: obs.Overflow,
		Bytes: len(x.decoded), Model: v.p.Model, At: s.now().UTC()}
	last.Agent, last.IDSource = agentOf(x.r.Header), v.id.source
	mark := store.Mark{At: last.At, Client: v.client, Applied: v.cp != nil, Compaction: x.compacted != nil, Overflow: obs.Overflow}
	// tally counts this answer over the totals before it, and explains
	// a cache miss against the request before it.
	tally := func(prev *store.LastCall) {
		before := s.carry(last, v.id.key, prev, obs.Usage, saved, mark)
		s.noteMiss(missInput{x: x, key: v.id.key, last: last, prev: before, u: obs.Usage, diag: obs.Diagnostics})
	}
	if obs.Usage != nil {
		s.account(x.api, v.p.Model, *obs.Usage, saved)
	}
	if th, ok := s.policyFor(v.info).Threshold(v.info); ok {
		last.Threshold = th
	}
	ctx := context.WithoutCancel(x.r.Context())
	// calibrate feeds the calibrator with what the provider counted for
	// the units added since the previous call of the same history.
	calibrate := func(prev *store.LastCall) {
		if prev == nil || prev.Units >= len(v.p.Units) {
			return
		}
		var added []*compact.Message
		for _, u := range v.p.Units[prev.Units:] {
			added = append(added, u.Messages...)
		}
		growth := last.Usage.PromptTokens() - prev.Usage.PromptTokens()
		s.mu.Lock()
		s.calib.ObserveMessages(v.p.Model, added, growth)
		s.mu.Unlock()
	}
	var err error
	if ls, ok := s.store.(store.LastStore); ok && v.rec != nil {
		// The record as this request read it is enough to calibrate, and
		// writing the last call alone cannot undo a compaction another
		// replica stored since (a read-modify-write could).
		if obs.Usage == nil {
			if v.rec.Last != nil {
				last.Usage = v.rec.Last.Usage
			}
		} else {
			last.Usage = *obs.Usage
			calibrate(lastFor(v.rec, v.chain, applied))
		}
		tally(v.rec.Last)
		err = s.putLast(ctx, ls, v.id.key, last)
	} else {
		err = s.update(ctx, v.id.key, func(rec *store.Record) bool {
			tally(rec.Last)
			if obs.Usage == nil {
				if rec.Last != nil {
					last.Usage = rec.Last.Usage
				}
				rec.Last = last
				return true
			}
			last.Usage = *obs.Usage
			calibrate(lastFor(rec, v.chain, applied))
			rec.Last = last
			return true
		})
	}
	// From here on last is not modified: it may be shared.
	if x.compacted == nil && v.cp == nil && (v.rec == nil || len(v.rec.Checkpoints) == 0) {
		s.cacheLight(v.id.key, last)
	} else {
		s.forgetLight(v.id.key)
	}
	if err != nil {
		s.failOpen(stageStore, err)
	}
}

// putLast writes a conversation's last call alone, under the
// conversation's lock stripe: a read-modify-write of its record on this
// replica (update: a checkpoint, a summary written ahead in the
// background) then cannot put back the last call it had read before.
func (s *Server) putLast(ctx context.Context, ls store.LastStore, key string, last *store.LastCall) error {
	mu := s.lockFor(key)
	mu.Lock()
	defer mu.Unlock()
	return ls.PutLast(ctx, key, last)
}

// update applies change to the conversation's record (an empty one when
// there is none) and stores it, one update per conversation at a time.
// change returns false to store nothing.
func (s *Server) update(ctx context.Context, key string, change func(rec *store.Record) bool) error {
	mu := s.lockFor(key)
	mu.Lock()
	defer mu.Unlock()
	rec, err := s.store.Get(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		rec, err = &store.Record{}, nil
	}
	if err != nil {
		return err
	}
	if !change(rec) {
		return nil
	}
	rec.Updated = s.now().UTC()
	if err := s.store.Put(ctx, key, rec); err != nil {
		return err
	}
	s.noteEvictions()
	return nil
}

// noteEvictions logs (at most once a minute) when the store dropped
// conversations to make room since it last looked: in a store shared by
// tenants one tenant's traffic can push out another's compactions, and
// that must not go unseen (compact_proxy_store_evictions_total counts
// them too).
func (s *Server) noteEvictions() {
	if s.evicter == nil {
		return
	}
	n := s.evicter.Evictions()
	if seen := s.evictionsSeen.Swap(n); n > seen {
		s.warnEvery("evicted", "store full: least recently used conversations dropped; their next requests are summarized again (raise --store-max-mb, or give tenants their own proxy)",
			"evicted", n-seen, "evicted_total", n)
	}
}

// lockFor returns the mutex that serializes record updates of key.
func (s *Server) lockFor(key string) *mutex {
	h := uint32(2166136261)
	for i := 0; i < len(key); i++ {
		h = (h ^ uint32(key[i])) * 16777619
	}
	return &s.locks[h%uint32(len(s.locks))]
}

// mutex is a sync.Mutex, named for the lock stripes.
type mutex = sync.Mutex

// recordLight records the size and usage of a request that was not read
// (see streamable). The unit count and chain are cleared, so the usage is
// not mistaken for that of an older prefix.
func (s *Server) recordLight(x *exchange, o Observed) {
	if o.Usage == nil && !o.Overflow {
		return
	}
	ctx := context.WithoutCancel(x.r.Context())
	last := &store.LastCall{Bytes: len(x.raw), Threshold: x.lightLast.Threshold, Overflow: o.Overflow, Usage: x.lightLast.Usage,
		Model: x.lightLast.Model, At: s.now().UTC()}
	if o.Usage != nil {
		last.Usage = *o.Usage
		s.account(x.api, last.Model, *o.Usage, 0)
	}
	mu := s.lockFor(x.light.key)
	mu.Lock()
	last.Agent, last.IDSource = agentOf(x.r.Header), x.light.source
	// A request that is not read has no compaction: it saved nothing.
	before := s.carry(last, x.light.key, x.lightLast, o.Usage, 0, store.Mark{At: last.At, Overflow: o.Overflow})
	s.noteMiss(missInput{x: x, key: x.light.key, last: last, prev: before, u: o.Usage, diag: o.Diagnostics})
	s.cacheLight(x.light.key, last) // last is not modified from here on
	mu.Unlock()
	var err error
	if ls, ok := s.store.(store.LastStore); ok {
		// One write, no read: the checkpoints are not touched.
		err = s.putLast(ctx, ls, x.light.key, last)
	} else {
		err = s.update(ctx, x.light.key, func(rec *store.Record) bool {
			if rec.Last == nil {
				return false
			}
			rec.Last = last
			return true
		})
	}
	if err != nil {
		s.failOpen(stageStore, err)
	}
}

// logRequest writes the per-request log line. It names the conversation by
// a short hash only and never carries a header or a body.
func (s *Server) logRequest(x *exchange, status int, o *Observed) {
	elapsed := x.elapsed
	if elapsed == 0 {
		elapsed = since(s.now, x.start)
	}
	args := []any{"api", x.api, "path", x.r.URL.Path, "status", status, "decision", x.decision,
		"ms", elapsed.Milliseconds()}
	if x.v == nil && x.light.key != "" {
		args = append(args, "conversation", x.light.short, "id_source", x.light.source)
	}
	if v := x.v; v != nil {
		args = append(args, "conversation", v.id.short, "id_source", v.id.source, "model", v.p.Model, "tokens", v.tokens)
		if v.cp != nil {
			args = append(args, "summarized_units", v.cp.Covered)
		}
	}
	if o != nil && o.Usage != nil {
		args = append(args, "usage_prompt", o.Usage.PromptTokens(), "usage_output", o.Usage.Output,
			"usage_cache_read", o.Usage.CacheRead, "usage_cache_write", o.Usage.CacheWrite)
	}
	if o != nil && o.Overflow {
		args = append(args, "stream_overflow", true)
	}
	s.log.Info("request", args...)
}

// tokensSaved is what a request sent with cp applied did not send: the
// context before the compaction minus the context after it, both
// measured when it was written. Later requests replace the same covered
// units by the same summary, so each saves the same.
func tokensSaved(cp *store.Checkpoint) int { return max(cp.TokensBefore-cp.TokensAfter, 0) }

// pricesFor returns the registry's prices of model (the configuration's
// models applied), nil when they are not known.
func (s *Server) pricesFor(model string) *compact.Prices {
	if model == "" {
		return nil
	}
	m, ok := s.registry.Lookup(model)
	if !ok {
		return nil
	}
	return m.Prices
}

// costOf prices u at model's prices; priced is false when they are not
// known.
func (s *Server) costOf(model string, u compact.Usage) (c compact.Cost, priced bool) {
	p := s.pricesFor(model)
	if p == nil {
		return compact.Cost{}, false
	}
	return p.Cost(u), true
}

// tallied returns t with one more answer of model counted.
func (s *Server) tallied(t store.Tally, model string, u compact.Usage, saved int) store.Tally {
	c, priced := s.costOf(model, u)
	return t.Add(u, saved, c, priced)
}

// account counts an answer's usage, the tokens it saved and its
// estimated cost in the metrics.
func (s *Server) account(api API, model string, u compact.Usage, saved int) {
	c, priced := s.costOf(model, u)
	s.metrics.usage(api, whatRequests, u, saved, c, priced)
}

// summaryTally returns t with the requests that wrote cp's summary
// counted (cp.SummaryCalls; none for the offline summarizer), priced at
// the prices of the model that answered them (see summaryPrices).
func (s *Server) summaryTally(t store.Tally, cp *store.Checkpoint) store.Tally {
	p := s.summaryPrices(cp)
	for _, c := range cp.SummaryCalls {
		var cost compact.Cost
		if p != nil {
			cost = p.Cost(c.Usage)
		}
		t = t.Add(c.Usage, 0, cost, p != nil)
	}
	return t
}

// summaryPrices are the prices of the model that wrote cp's summary: the
// one cp.Summarizer names (a model summary names its model), else
// Config.SummaryModel; nil when unknown (a model summary refused by the
// review and replaced by the offline one names no model: its calls'
// cost is then unknown, not zero).
func (s *Server) summaryPrices(cp *store.Checkpoint) *compact.Prices {
	if p := s.pricesFor(cp.Summarizer); p != nil {
		return p
	}
	return s.pricesFor(s.cfg.SummaryModel)
}

// noteSummary counts the requests that wrote cp's summary in the metrics
// and returns what the compaction's log line adds about them: their
// estimated cost, when their model's prices are known (their tokens and
// cache read shares are in summary_requests, see summaryCallsLog).
func (s *Server) noteSummary(api API, cp *store.Checkpoint) []any {
	if len(cp.SummaryCalls) == 0 {
		return nil
	}
	p := s.summaryPrices(cp)
	var total float64
	for _, c := range cp.SummaryCalls {
		var cost compact.Cost
		if p != nil {
			cost = p.Cost(c.Usage)
			total += cost.Total()
		}
		s.metrics.usage(api, whatSummaries, c.Usage, 0, cost, p != nil)
	}
	if p == nil {
		return nil
	}
	return []any{"summary_cost_usd", math.Round(total*1e6) / 1e6}
}

// newestLast returns the last call a conversation's next answer is
// counted over (its totals and its timeline): prev (the last call as the
// request read it, nil for none) or the last call this replica cached
// since, whichever counted more requests (both only grow); nil when there
// is neither. The client's next request can leave before an answer is
// recorded and read the last call before it, so without the cache that
// answer would be counted over the same totals as the one before it, and
// one of them lost.
func (s *Server) newestLast(key string, prev *store.LastCall) *store.LastCall {
	if cur := s.lightLast(key); cur != nil && (prev == nil || cur.Totals.Requests > prev.Totals.Requests) {
		return cur
	}
	return prev
}

// carry sets last's totals, timeline and latest cache miss from the
// newest last call before it (see newestLast), with the answer of usage
// u (nil: none reported) counted: its tokens, the tokens it saved, its
// cost and its mark. It returns that newest last call (nil for none).
func (s *Server) carry(last *store.LastCall, key string, prev *store.LastCall, u *compact.Usage, saved int, mark store.Mark) *store.LastCall {
	var recent []store.Mark
	p := s.newestLast(key, prev)
	if p != nil {
		last.Totals, recent, last.LastMiss = p.Totals, p.Recent, p.LastMiss
	}
	if u != nil {
		last.Totals = s.tallied(last.Totals, last.Model, *u, saved)
		mark.Prompt, mark.CacheRead, mark.Output = u.PromptTokens(), u.CacheRead, u.Output
	}
	last.Recent = store.AppendRecent(recent, mark)
	return p
}
