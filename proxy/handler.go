package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/apihttp"
	"github.com/compactkit/compact/proxy/store"
)

// exchange is one request to a model API on its way through the proxy.
type exchange struct {
	api   API
	r     *http.Request
	start time.Time
	// raw is the body as the client sent it; decoded the same body
	// without its Content-Encoding (nil when it could not be decoded).
	raw, decoded []byte
	// v is the request read for compaction, nil when it is passed through
	// unread (not parsed, unknown window, the client manages its context).
	v *view
	// body is the rewritten (decoded) body, nil when the original goes.
	body []byte
	// decision says what was done, for the log line.
	decision string
	// compacted is set when this request wrote a new compaction.
	compacted *store.Checkpoint
	// retried is set once an overflow retry was made.
	retried bool
	// streamed is set when the request went upstream while it was read
	// (see Server.streamable).
	streamed bool
	// unknownWindow is set when the request was not read because its
	// model's window is unknown.
	unknownWindow bool
	// light is the conversation of a streamed request that is not read
	// at all, only its size and usage recorded (zero otherwise), and
	// lightLast its record's last call as it was before the request.
	light     identity
	lightLast *store.LastCall
	// headerKey is the conversation key a streamed request's headers
	// name, known before the request is read.
	headerKey string
	// release gives back the pooled buffer raw lives in (nil when it is
	// not pooled); handedOff is set once background work owns it.
	release   func()
	handedOff bool
	// elapsed is how long the exchange took, up to the end of the answer.
	elapsed time.Duration
}

// serveAPI handles a request to one of the model APIs. Its body is held
// in memory under the admission budget (see admit.go): the reservation is
// made before the body is read and given back once nothing holds the
// bytes, background work included.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request, api API) {
	if r.ContentLength > s.cfg.MaxBodyBytes {
		s.tooLarge(w, api)
		return
	}
	ch, err := s.admit.reserve(r.Context(), max(r.ContentLength, 0))
	if err != nil {
		if errors.Is(err, errBusy) {
			s.refuseBusy(w, api)
		}
		return
	}
	if sr := s.streamable(r, api); sr.ok {
		sr.release = ch.release
		s.serveStreamed(w, r, api, sr)
		return
	}
	x := &exchange{api: api, r: r, start: s.now(), decision: "pass", release: ch.release}
	defer func() {
		if !x.handedOff {
			x.releaseBody()
		}
	}()
	body := r.Body
	if r.ContentLength < 0 && body != nil {
		// Length unknown (chunked): reserve as it comes.
		r2 := new(http.Request)
		*r2 = *r
		r2.Body = struct {
			io.Reader
			io.Closer
		}{&chargedReader{ctx: r.Context(), r: body, c: ch}, body}
		r = r2
	}
	// A compressed body is held twice, as sent and decoded: its decoding
	// is charged as it goes.
	raw, decoded, err := readBodyCharged(r, s.cfg.MaxBodyBytes, ch)
	switch {
	case errors.Is(err, errBusy):
		s.refuseBusy(w, api)
		return
	case errors.Is(err, errBodyTimeout):
		s.metrics.request(api, http.StatusRequestTimeout)
		s.warnEvery("bodytimeout", "request body not received in time; connection closed", "body_timeout", s.cfg.BodyTimeout.String())
		w.Header().Set("Connection", "close")
		writeError(w, api, http.StatusRequestTimeout, "invalid_request_error",
			fmt.Sprintf("compact proxy: request body not received within %s", s.cfg.BodyTimeout))
		return
	case errors.Is(err, errTooLarge):
		s.tooLarge(w, api)
		return
	case errors.Is(err, errUnknownEncoding), errors.Is(err, errBadEncoding):
		s.failOpen(stageBody, err)
		decoded = nil
	case err != nil:
		if r.Context().Err() != nil {
			return
		}
		s.metrics.request(api, http.StatusBadRequest)
		writeError(w, api, http.StatusBadRequest, "invalid_request_error", "compact proxy: could not read the request body")
		return
	}
	x.raw, x.decoded = raw, decoded
	defer func() {
		if p := recover(); p != nil {
			s.rescue(w, x, p)
		}
	}()
	if decoded != nil {
		s.prepare(x)
	}
	s.send(w, x)
}

// tooLarge answers a request whose body is over Config.MaxBodyBytes.
func (s *Server) tooLarge(w http.ResponseWriter, api API) {
	s.metrics.request(api, http.StatusRequestEntityTooLarge)
	writeError(w, api, http.StatusRequestEntityTooLarge, "request_too_large",
		fmt.Sprintf("compact proxy: request body larger than %d bytes", s.cfg.MaxBodyBytes))
}

// prepare reads the request and decides what goes upstream. It never fails
// the request: whatever goes wrong leaves x.body nil, so the client's own
// bytes are sent.
func (s *Server) prepare(x *exchange) {
	defer func() {
		if p := recover(); p != nil {
			_ = s.recovered(stageInternal, p, secretsOf(x.r.Header))
			x.body, x.decision = nil, "pass (internal error)"
		}
	}()
	if !s.read(x) {
		return
	}
	v := x.v
	if v.storeDown {
		return
	}
	if s.refusedKey(v.id.key) {
		x.decision = "pass (provider refused a compacted request before)"
		return
	}
	ctx := x.r.Context()
	countOnly := strings.HasSuffix(x.r.URL.Path, "/count_tokens")
	if !countOnly {
		d := compact.Check(s.policyFor(v.info), v.info, compact.ContextUsage{Tokens: v.tokens, UsageTokens: v.usageTokens, TrailingTokens: v.tokens - v.usageTokens}, false)
		if d.Compact && !v.forced && d.Threshold > 0 && d.Threshold <= v.envelope {
			// The system prompt and tools alone pass the trigger: no
			// summary can bring the request under it, so only an overflow
			// (forced, below) is worth a compaction.
			d.Compact = false
			x.decision = "pass (system and tools fill the trigger)"
		}
		if d.Compact && !v.forced && v.cp != nil && d.Threshold > 0 {
			// Compacting again right after a compaction cannot help: the
			// history since is too short to summarize, and each pass would
			// rewrite the cached prefix. Wait until a quarter of the room
			// has filled again (an overflow still forces it).
			room := d.Threshold - v.envelope
			if v.tokens-v.cp.TokensAfter < room/4 {
				d.Compact = false
				x.decision = "pass (compacted recently)"
			}
		}
		if d.Compact || v.forced {
			reason := compact.ReasonThreshold
			if v.forced && !d.Compact {
				reason = compact.ReasonOverflow
			}
			threshold := d.Threshold
			if threshold <= 0 {
				threshold, _ = s.policyFor(v.info).Threshold(v.info)
			}
			s.compactNow(ctx, x, reason, threshold)
		}
	}
	if v.cp != nil {
		s.rewrite(x)
	}
}

// read parses the request, finds its conversation and what is stored
// about it, and measures it (x.v). It reports false when the request is
// not one the proxy compacts; x.decision then says why.
func (s *Server) read(x *exchange) bool {
	if s.tooManyMessages(x.api, x.decoded) {
		s.passTooMany(x)
		return false
	}
	p, err := s.codec(x.api).parse(x.decoded)
	if err != nil {
		s.failOpen(stageParse, err)
		x.decision = "pass (unreadable body)"
		return false
	}
	if p.StandDown == "" && x.api == Responses {
		// The history lives on the provider's side: the request only
		// carries what is new, and there is nothing here to compact.
		if id, ok := compact.TopLevelString(x.decoded, "previous_response_id"); ok && id != "" {
			p.StandDown = "previous_response_id"
		}
	}
	if p.StandDown != "" {
		x.decision = "pass (" + p.StandDown + ")"
		return false
	}
	if len(p.Items) > s.cfg.MaxMessages {
		s.passTooMany(x)
		return false
	}
	info, ok := s.modelInfo(s.learnScope(x.api, x.r), p.Model)
	if !ok {
		s.warnOnce("window:"+p.Model, "model window unknown: passing its requests through uncompacted until an overflow error names it", "model", p.Model)
		x.decision = "pass (window unknown)"
		x.unknownWindow = true
		return false
	}
	v := &view{api: x.api, p: p, info: info}
	v.id = identify(x.api, s.namespace(x.api, x.r), x.r.Header, p)
	if !x.handedOff {
		// (Background work of this very request must not wait for
		// itself.)
		s.waitPending(x.r.Context(), v.id.key)
	}
	rec, err := s.store.Get(x.r.Context(), v.id.key)
	switch {
	case errors.Is(err, store.ErrUnauthenticated):
		// Forged, altered or moved, or written before the store key was
		// set: treated as absent (and overwritten).
		s.metrics.storeLookup(lookupRejected)
		s.log.Warn("stored record failed authentication; treated as absent", "conversation", v.id.short, "err", err)
	case errors.Is(err, store.ErrNotFound):
		s.metrics.storeLookup(lookupMiss)
	case err != nil:
		// The state cannot be read: the request goes as it came, unless
		// the provider refuses it as too long (then it is compacted with a
		// summary of this request alone; see storeDown).
		s.metrics.storeLookup(lookupError)
		s.failOpen(stageStore, err)
		x.decision = "pass (store unavailable)"
		v.storeDown = true
	default:
		s.metrics.storeLookup(lookupHit)
		v.rec = rec
	}
	v.chain = chainOf(p.Units)
	v.cp = findCheckpoint(v.rec, v.chain)
	if v.rec == nil && !v.storeDown && v.id.session != "" {
		s.adopt(x.r.Context(), v)
	}
	s.measure(v)
	x.v = v
	return true
}

// passTooMany notes that x has more messages than Config.MaxMessages
// and goes through unread.
func (s *Server) passTooMany(x *exchange) {
	x.decision = fmt.Sprintf("pass (more than %d messages)", s.cfg.MaxMessages)
	s.warnEvery("maxmessages", "request passed through unread: more messages than --max-messages", "max_messages", s.cfg.MaxMessages)
}

// rewrite splices the applicable compaction into the request, keeping the
// original when the result would break the API's rules.
func (s *Server) rewrite(x *exchange) {
	v := x.v
	body := splice(codecFor(x.api), v.p, v.cp)
	if err := validateBody(x.api, body); err != nil {
		s.failOpen(stageSplice, err)
		x.body, x.decision = nil, "pass (rewrite invalid)"
		return
	}
	x.body = body
	if x.compacted == nil {
		x.decision = "rewritten"
	}
}

// compactNow writes a compaction for the request (one at a time per
// conversation: concurrent requests of the same conversation wait for it
// and share it) and makes it the applied one when it covers the request's
// prefix.
func (s *Server) compactNow(ctx context.Context, x *exchange, reason compact.Reason, threshold int) bool {
	v := x.v
	type out struct {
		cp  *store.Checkpoint
		res *compact.Result
	}
	key := v.id.key
	ch, ferr, _ := s.flight.Do(key, func() (_ any, err error) {
		defer func() {
			// (singleflight would panic again in every caller.)
			if p := recover(); p != nil {
				err = panicError(p, secretsOf(x.r.Header))
			}
		}()
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.summaryTTL+30*time.Second)
		defer cancel()
		cctx, stop := context.WithCancelCause(cctx)
		defer stop(nil)
		sum := safeSummarizer{s.summarizerFor(x.api, x.r.Header, v, newCallLimit(s.cfg.MaxSummaryCalls, stop)), s, secretsOf(x.r.Header)}
		// A compaction that finished while this request was on its way
		// (another request of the conversation wrote it) is used as it is:
		// one crossing of the trigger, one summary.
		if cp := s.newerCheckpoint(cctx, key, v); cp != nil {
			return out{cp: cp}, nil
		}
		// Replicas sharing the store take the conversation's lock: one
		// writes the summary, the others wait for it.
		if lk, ok := s.store.(store.Locker); ok {
			lock, err := lk.TryLock(cctx, lockKey(key), s.lockTTL)
			switch {
			case err != nil && v.storeDown:
				// Nothing can be coordinated or stored; this request
				// still gets its compaction (an overflow forced it).
			case err != nil:
				// The store read the conversation but cannot lock it now
				// (it stalled, or is backing off after a timeout): this
				// request still gets its compaction, uncoordinated. At
				// worst another replica writes a summary too; a failed
				// lock never sends the client an overflow. It counts
				// as a store failure.
				s.metrics.failOpen(stageStore)
				s.warnEvery("lockfailed", "store could not lock the conversation; compacting without the lock", "err", err)
			case lock == nil:
				s.metrics.lockWait()
				cp, taken := s.waitCheckpoint(cctx, key, v, lk)
				if cp != nil {
					return out{cp: cp}, nil
				}
				if taken == nil {
					s.failOpen(stageStore, errors.New("another replica's compaction did not come in time"))
					return nil, errLockWait
				}
				// The holder let the lock go without storing a compaction
				// (its write failed, or it died and the lock expired):
				// this replica writes it.
				lock = taken
				fallthrough
			default:
				stop := s.holdLock(cctx, lock)
				defer stop()
				if cp := s.newerCheckpoint(cctx, key, v); cp != nil {
					return out{cp: cp}, nil
				}
			}
		}
		cp, res, err := s.compactView(cctx, v, reason, threshold, sum)
		if cause := context.Cause(cctx); errors.Is(cause, errWorkBound) {
			// Past the work one request may cause: no compaction at all,
			// not even the offline one, and nothing stored.
			s.warnEvery("workbound", "compaction abandoned: it needs more summary calls than allowed; request passed through", "conversation", v.id.short, "max_summary_calls", s.cfg.MaxSummaryCalls)
			return nil, cause
		}
		if err != nil {
			return nil, err
		}
		// With the store down the compaction serves this request only.
		if !v.storeDown {
			if err := s.saveCheckpoint(cctx, v.id, cp); err != nil {
				s.failOpen(stageStore, err)
			}
		}
		return out{cp, res}, nil
	})
	o, ok := ch.(out)
	if !ok || o.cp == nil {
		if errors.Is(ferr, errPanic) {
			s.failOpen(stageInternal, ferr)
		} else {
			s.metrics.failOpen(stageSummarize)
		}
		x.decision = "pass (compaction failed)"
		return false
	}
	cp := o.cp
	if cp.Covered >= len(v.chain) || hexChain(v.chain[cp.Covered]) != cp.Chain {
		// Written for another request of the conversation whose history
		// this one does not share.
		return false
	}
	after := cp.TokensAfter
	v.cp = cp
	x.compacted = cp
	x.decision = "compacted (" + string(reason) + ")"
	s.metrics.compaction(reason, summarizerLabel(cp.Summarizer), v.tokens, after)
	if o.res != nil && o.res.FallbackErr != nil {
		s.metrics.fallback(fallbackExtractive)
		s.log.Warn("model summary failed; used the offline summary", "conversation", v.id.short, "err", compact.Redact(o.res.FallbackErr.Error(), secretsOf(x.r.Header)...))
	}
	s.log.Info("compacted", "conversation", v.id.short, "api", x.api, "model", v.p.Model, "reason", reason,
		"tokens_before", v.tokens, "tokens_after", after, "units_summarized", cp.Covered, "summarizer", cp.Summarizer)
	return true
}

// summarizerLabel maps a summarizer name onto the bounded metric label set.
func summarizerLabel(name string) string {
	if name == "extractive" {
		return "extractive"
	}
	return "model"
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

// saveCheckpoint records cp first among the conversation's compactions,
// and among its session's (see identity.session).
func (s *Server) saveCheckpoint(ctx context.Context, id identity, cp *store.Checkpoint) error {
	s.forgetLight(id.key)
	add := func(rec *store.Record) bool {
		rec.Checkpoints = withCheckpoint(rec.Checkpoints, cp)
		return true
	}
	err := s.update(ctx, id.key, add)
	if id.session != "" {
		err = errors.Join(err, s.update(ctx, id.session, add))
	}
	return err
}

// record stores the usage of a finished response for the next request's
// measurement, and feeds the calibrator.
func (s *Server) record(x *exchange, obs Observed) {
	v := x.v
	if v == nil || (obs.Usage == nil && !obs.Overflow) || strings.HasSuffix(x.r.URL.Path, "/count_tokens") {
		return
	}
	applied := ""
	if v.cp != nil {
		applied = v.cp.Chain
	}
	last := &store.LastCall{Units: len(v.p.Units), Chain: hexChain(v.chain[len(v.p.Units)]), Applied: applied, Overflow: obs.Overflow,
		Bytes: len(x.decoded)}
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
		added := 0
		for _, u := range v.p.Units[prev.Units:] {
			for _, m := range u.Messages {
				added += compact.EstimateTokens(m) * int(compact.DefaultCharsPerToken)
			}
		}
		delta := promptTokens(last.Usage) - promptTokens(prev.Usage)
		s.mu.Lock()
		s.calib.Observe(v.p.Model, added, delta)
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
		err = ls.PutLast(ctx, v.id.key, last)
	} else {
		err = s.update(ctx, v.id.key, func(rec *store.Record) bool {
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

// promptTokens is the context a usage report measured: input plus cache.
func promptTokens(u compact.Usage) int { return u.Input + u.CacheRead + u.CacheWrite }

// lockFor returns the mutex that serializes record updates of key.
func (s *Server) lockFor(key string) *mutex {
	h := uint32(2166136261)
	for i := 0; i < len(key); i++ {
		h = (h ^ uint32(key[i])) * 16777619
	}
	return &s.locks[h%uint32(len(s.locks))]
}

// modelInfo returns the limits of model: the forced window, or the
// registry's entry, lowered to a window learned in scope (see
// learnWindow; "" for none). ok is false when the window is unknown.
func (s *Server) modelInfo(scope, model string) (compact.ModelInfo, bool) {
	if s.cfg.Window > 0 {
		return s.learnedInfo(scope, compact.ModelInfo{ID: model, ContextWindow: s.cfg.Window}), true
	}
	if model == "" {
		return compact.ModelInfo{}, false
	}
	m, ok := s.registry.Lookup(model)
	if !ok || m.ContextWindow <= 0 {
		// Known only from an overflow error, if at all.
		if l := s.learnedInfo(scope, compact.ModelInfo{ID: model}); l.ContextWindow > 0 {
			return l, true
		}
		return compact.ModelInfo{}, false
	}
	m.ID = model
	return s.learnedInfo(scope, m), true
}

// failOpen counts a failure of the proxy's own work (the request then goes
// through as the client sent it) and logs it, at most once a minute per
// stage, so that a store that stays down says so without flooding the log.
func (s *Server) failOpen(stage string, err error) {
	s.metrics.failOpen(stage)
	s.warnEvery("failopen:"+stage, "compaction skipped; requests forwarded unchanged", "stage", stage, "err", err)
}

// secretsOf returns the credential values of a request, for redaction:
// those apihttp.Secrets finds, and cookies.
func secretsOf(h http.Header) []string {
	return append(apihttp.Secrets(h), h.Values("Cookie")...)
}
