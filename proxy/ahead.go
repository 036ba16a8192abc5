package proxy

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/redact"
	"github.com/compactkit/compact/proxy/store"
)

// Summary ahead of time. When a conversation passes its early mark
// (Config.AheadMark of its trigger; decide says verdict.ahead), the summary
// of a fixed span of the request's history is written in the background
// (compact.Engine.Prepare) while the conversation goes on, and stored in
// the conversation's record as its pending summary (store.Pending), bound
// to the span by the units' hash chain. The request that crosses the
// trigger finds it and swaps it in at once (compact.Engine.Apply in
// compactView): the summary, then everything after the span's cut, which
// has grown meanwhile; when that kept part is then larger than the
// target, the remainder is compacted in line, merging the prepared
// summary. A request over the trigger whose summary is still being written
// goes uncompacted ("pass (summary being prepared)") and a later one swaps
// it in, unless it would overflow the window: then it waits.
//
// One summary per crossing: on this replica one job per conversation (the
// ahead map); across replicas the conversation's lock (store.Locker), which
// in-line compactions take too — a replica that cannot take it does not
// prepare. A restarted proxy or another replica finds the pending summary
// in the store.

// aheadJob is a summary being written ahead on this replica.
type aheadJob struct {
	done chan struct{}
}

// maxAheadJobs bounds the summaries written ahead at once on one replica;
// beyond it a conversation is compacted in line when it crosses its
// trigger, as without the feature.
const maxAheadJobs = 256

// aheadOutcome labels of compact_proxy_summaries_ahead_total.
const (
	aheadStarted  = "started"   // a summary started being written ahead
	aheadStored   = "stored"    // it was written and stored as pending
	aheadFailed   = "failed"    // it failed; the crossing compacts in line
	aheadSkipped  = "skipped"   // another replica holds the lock, or the store cannot lock
	aheadSwapped  = "swapped"   // a crossing request swapped the pending summary in
	aheadStale    = "stale"     // a pending summary no longer fitted the request; compacted in line
	aheadNotReady = "not_ready" // a request over the trigger went uncompacted while the summary was written
	aheadWaited   = "waited"    // a request that would overflow waited for the summary being written
)

// aheadRunning reports whether this replica writes a summary ahead for the
// conversation key now.
func (s *Server) aheadRunning(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ahead[key] != nil
}

// waitAhead waits for the summary this replica writes ahead for key, if
// any, until it is done or ctx ends; it reports whether there was one.
func (s *Server) waitAhead(ctx context.Context, key string) bool {
	s.mu.Lock()
	job := s.ahead[key]
	s.mu.Unlock()
	if job == nil {
		return false
	}
	select {
	case <-job.done:
	case <-ctx.Done():
	}
	return true
}

// aheadInput is what a background summary needs of its request: copies,
// since the request's body and headers do not outlive it.
type aheadInput struct {
	api       API
	body      []byte
	header    http.Header
	id        identity
	cp        *store.Checkpoint
	info      compact.ModelInfo
	tokens    int
	threshold int
}

// startAhead has the summary of x's conversation written in the
// background, unless one is being written already on this replica.
func (s *Server) startAhead(x *exchange, threshold int) {
	v := x.v
	key := v.id.key
	s.mu.Lock()
	if s.ahead[key] != nil || len(s.ahead) >= maxAheadJobs || s.aheadCtx.Err() != nil {
		s.mu.Unlock()
		return
	}
	if s.ahead == nil {
		s.ahead = map[string]*aheadJob{}
	}
	job := &aheadJob{done: make(chan struct{})}
	s.ahead[key] = job
	s.bg.Add(1)
	s.mu.Unlock()
	in := aheadInput{api: x.api, body: bytes.Clone(x.decoded), header: http.Header{}, id: v.id, info: v.info,
		tokens: v.tokens, threshold: threshold}
	for _, name := range append([]string{s.tenantHeader}, credentialHeaders...) {
		if name != "" {
			in.header[name] = append([]string(nil), x.r.Header.Values(name)...)
		}
	}
	if v.cp != nil {
		cp := *v.cp
		in.cp = &cp
	}
	s.metrics.ahead(aheadStarted)
	go func() {
		defer s.bg.Done()
		defer func() {
			s.mu.Lock()
			delete(s.ahead, key)
			s.mu.Unlock()
			close(job.done)
		}()
		s.safely(in.header, func() { s.writeAhead(in) })
	}()
}

// writeAhead writes and stores the pending summary of in's conversation
// (see startAhead).
func (s *Server) writeAhead(in aheadInput) {
	key, short := in.id.key, in.id.short
	ctx, cancel := context.WithTimeout(s.aheadCtx, s.summaryTTL+30*time.Second)
	defer cancel()
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	p, err := s.codec(in.api).parse(in.body)
	if err != nil {
		s.metrics.ahead(aheadFailed)
		return
	}
	v := &view{api: in.api, p: p, id: in.id, chain: chainOf(p.Units), cp: in.cp, info: in.info, tokens: in.tokens}
	s.measure(v) // the envelope; tokens stays the request's measure
	v.tokens = in.tokens
	if lk, ok := s.store.(store.Locker); ok {
		lock, err := lk.TryLock(ctx, lockKey(key), s.lockTTL)
		if err != nil || lock == nil {
			// Another replica writes this conversation's summary (ahead
			// or in line), or the store cannot coordinate now: this
			// replica does not prepare.
			s.metrics.ahead(aheadSkipped)
			return
		}
		release := s.holdLock(ctx, lock)
		defer release()
	}
	if rec, err := s.store.Get(ctx, key); err == nil {
		if usablePending(rec, v.chain, v.cp) != nil {
			return // another replica stored it meanwhile
		}
		if cp := findCheckpoint(rec, v.chain); cp != nil && (v.cp == nil || cp.Covered > v.cp.Covered) {
			return // compacted meanwhile
		}
	}
	secrets := secretsOf(in.header)
	run := &summaryRun{}
	sum := safeSummarizer{s.summarizerFor(in.api, in.header, v, newCallLimit(s.cfg.MaxSummaryCalls, stop), run), s, secrets}
	b := s.budgetsFor(v, in.threshold)
	// The kept part grows until the trigger is crossed: keep that much
	// less now, so that the swap lands near the target.
	keep := max(b.keep-max(in.threshold-in.tokens, 0), min(b.keep, 1000))
	eng := &compact.Engine{Summarizer: sum, Fallback: s.extractive(), KeepRecentTokens: keep, Logger: s.log, Now: s.now}
	prep, err := eng.Prepare(ctx, engineLog(v), compact.Request{Reason: compact.ReasonThreshold, TargetTokens: b.target,
		MaxTokens: b.maxSummary, KeepRecentTokens: keep, Fallback: compact.FallbackAuto})
	if err == nil {
		err = checkPrepared(v, prep)
	}
	if err != nil {
		s.metrics.ahead(aheadFailed)
		if !errors.Is(err, compact.ErrNothingToCompact) {
			s.log.Warn("summary ahead of time failed; the conversation is compacted in line when it crosses its trigger",
				"conversation", short, "err", redact.String(err.Error(), secrets...))
		}
		return
	}
	// Stored data carries no credential: the fallback's error is
	// scrubbed with the request's own secrets as well.
	prep.FallbackError = redact.String(prep.FallbackError, secrets...)
	if e, ok := prep.Details["summarizerError"].(string); ok {
		prep.Details["summarizerError"] = redact.String(e, secrets...)
	}
	ui, _, _ := parseEntryID(prep.FirstKeptID)
	pd := &store.Pending{Covered: ui, Chain: hexChain(v.chain[ui]), Units: len(p.Units), UnitsChain: hexChain(v.chain[len(p.Units)]),
		Prepared: *prep, SummaryCalls: run.list()}
	if v.cp != nil {
		pd.Base = v.cp.Chain
	}
	// The summary's requests are counted now, when they were made (the
	// checkpoint of the swap carries only what is summarized in line
	// then): a summary written ahead and never swapped in still cost.
	calls := &store.Checkpoint{Summarizer: prep.Summarizer, SummaryCalls: pd.SummaryCalls}
	if err := s.update(ctx, key, func(rec *store.Record) bool {
		rec.Pending = pd
		rec.Summaries = s.summaryTally(rec.Summaries, calls)
		return true
	}); err != nil {
		s.failOpen(stageStore, err)
		s.metrics.ahead(aheadFailed)
		return
	}
	s.metrics.ahead(aheadStored)
	s.log.Info("summary prepared ahead", append([]any{"conversation", short, "units_summarized", ui, "tokens", in.tokens,
		"threshold", in.threshold, "summarizer", prep.Summarizer, "ms", prep.Duration.Milliseconds(),
		"summary_requests", summaryCallsLog(calls)}, s.noteSummary(in.api, calls)...)...)
}

// checkPrepared checks that a prepared compaction's cut maps onto v's
// units past its applied compaction.
func checkPrepared(v *view, prep *compact.Prepared) error {
	ui, _, ok := parseEntryID(prep.FirstKeptID)
	if !ok || ui <= 0 || ui >= len(v.p.Units) || (v.cp != nil && ui <= v.cp.Covered) {
		return errNoCut
	}
	return nil
}

// usablePending returns the record's pending summary when it applies to a
// request of chain with compaction cp applied: the request extends the
// history it was written from (same first Units units) and has the same
// compaction applied as it had; nil otherwise.
func usablePending(rec *store.Record, chain [][32]byte, cp *store.Checkpoint) *store.Pending {
	if rec == nil || rec.Pending == nil {
		return nil
	}
	pd := rec.Pending
	if pd.Covered <= 0 || pd.Covered >= pd.Units || pd.Units >= len(chain) ||
		hexChain(chain[pd.Units]) != pd.UnitsChain || hexChain(chain[pd.Covered]) != pd.Chain {
		return nil
	}
	base := ""
	if cp != nil {
		if pd.Covered <= cp.Covered {
			return nil
		}
		base = cp.Chain
	}
	if base != pd.Base {
		return nil
	}
	return pd
}
