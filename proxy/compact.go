package proxy

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/redact"
	"github.com/compactkit/compact/proxy/store"
)

// compactNow writes a compaction for the request (one at a time per
// conversation: concurrent requests of the same conversation wait for it
// and share it) and makes it the applied one when it covers the request's
// prefix.
func (s *Server) compactNow(ctx context.Context, x *exchange, reason compact.Reason, threshold int) bool {
	v := x.v
	type out struct {
		cp  *store.Checkpoint
		res *compact.Result
		// written is set when this flight wrote the compaction (not when
		// it found one another request or replica wrote): the requests
		// sharing the flight count it once between them.
		written *atomic.Bool
	}
	key := v.id.key
	if v.pending == nil {
		// A summary this replica writes ahead for the conversation is
		// waited for: decide let the request over its trigger through
		// to here only when it would overflow without it (or after an
		// overflow, or to compact it when idle).
		wctx, cancel := context.WithTimeout(ctx, s.summaryTTL+10*time.Second)
		if s.waitAhead(wctx, key) {
			s.metrics.ahead(aheadWaited)
		}
		cancel()
	}
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
		calls := &summaryRun{}
		sum := safeSummarizer{s.summarizerFor(x.api, x.r.Header, v, newCallLimit(s.cfg.MaxSummaryCalls, stop), calls), s, secretsOf(x.r.Header)}
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
			case lock == nil && s.aheadMark > 0 && reason == compact.ReasonThreshold && !overflows(v):
				// Another replica writes the summary (ahead, or in line):
				// this request goes as it is, a later one swaps it in.
				return nil, errAheadElsewhere
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
		pend := v.pending
		if rec, err := s.store.Get(cctx, key); err == nil {
			// The newest pending summary: one may have been stored since
			// the request was read.
			pend = usablePending(rec, v.chain, v.cp)
		}
		cp, res, err := s.compactView(cctx, v, reason, threshold, sum, pend)
		if cause := context.Cause(cctx); errors.Is(cause, errWorkBound) {
			// Past the work one request may cause: no compaction at all,
			// not even the offline one, and nothing stored.
			s.warnEvery("workbound", "compaction abandoned: it needs more summary calls than allowed; request passed through", "conversation", v.id.short, "max_summary_calls", s.cfg.MaxSummaryCalls)
			return nil, cause
		}
		if err != nil {
			return nil, err
		}
		s.finishCheckpoint(v, cp, calls)
		// With the store down the compaction serves this request only.
		if !v.storeDown {
			if err := s.saveCheckpoint(cctx, v.id, cp); err != nil {
				s.failOpen(stageStore, err)
			}
		}
		return out{cp, res, new(atomic.Bool)}, nil
	})
	o, ok := ch.(out)
	if errors.Is(ferr, errAheadElsewhere) {
		x.decision = "pass (summary being prepared)"
		s.metrics.ahead(aheadNotReady)
		return false
	}
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
	if o.written == nil || !o.written.CompareAndSwap(false, true) {
		// Written by another request of the conversation (here or on
		// another replica), which counted and logged it.
		return true
	}
	s.metrics.compaction(reason, summarizerLabel(cp.Summarizer), v.tokens, after)
	if o.res != nil && o.res.FallbackErr != nil {
		what, msg := fallbackExtractive, "model summary failed; used the offline summary"
		if errors.Is(o.res.FallbackErr, compact.ErrSummaryRejected) {
			what, msg = fallbackRejected, "model summary refused by the review; used the offline summary"
		}
		s.metrics.fallback(what)
		s.log.Warn(msg, "conversation", v.id.short, "err", redact.String(o.res.FallbackErr.Error(), secretsOf(x.r.Header)...))
	}
	if o.res != nil && len(o.res.Refused) > 0 {
		s.log.Info("model's first summary refused by the review; its second was used", "conversation", v.id.short,
			"problems", strings.Join(o.res.Refused, "; "))
	}
	ahead := o.res != nil && o.res.Ahead != nil
	if ahead {
		x.decision = "compacted (" + string(reason) + ", summary ahead)"
	}
	s.log.Info("compacted", append([]any{"conversation", v.id.short, "api", x.api, "model", v.p.Model, "reason", reason,
		"tokens_before", v.tokens, "tokens_after", after, "units_summarized", cp.Covered, "summarizer", cp.Summarizer,
		"summary_requests", summaryCallsLog(cp), "ahead", ahead, "remainder", ahead && o.res.Remainder != nil && o.res.Remainder.Summarized()},
		s.noteSummary(x.api, cp)...)...)
	s.notifyCompaction(x, cp, o.res)
	return true
}

// compactView writes a new compaction for the request: the engine plans the
// cut over the request's messages (merging the applied compaction), the
// summarizer writes the summary, and the result is recorded as a
// checkpoint covering whole units.
//
// With pend, the summary written ahead for the request's history, the
// engine applies it instead (compact.Engine.Apply: no summarizer call,
// unless the kept part has grown past the target and its remainder is
// compacted in line); when it no longer fits, the compaction is written in
// line as without it.
func (s *Server) compactView(ctx context.Context, v *view, reason compact.Reason, threshold int, sum compact.Summarizer, pend *store.Pending) (*store.Checkpoint, *compact.Result, error) {
	b := s.budgetsFor(v, threshold)
	eng := &compact.Engine{
		Summarizer:       sum,
		Fallback:         s.extractive(),
		KeepRecentTokens: b.keep,
		Logger:           s.log,
		Now:              s.now,
	}
	log := engineLog(v)
	req := compact.Request{
		Reason:       reason,
		TargetTokens: b.target,
		MaxTokens:    b.maxSummary,
		Fallback:     compact.FallbackAuto,
	}
	var res *compact.Result
	var err error
	if pend != nil {
		// A swap that leaves the context between the target and the
		// trigger, a quarter of the room under it, is kept as it is:
		// summarizing the remainder now would make the request wait
		// for a summary after all.
		prep, lenient := pend.Prepared, req
		room := max(threshold-v.envelope, 2000)
		lenient.TargetTokens = max(b.target, room*3/4)
		if res, err = eng.Apply(ctx, log, &prep, lenient); err != nil {
			s.metrics.ahead(aheadStale)
			s.log.Info("summary prepared ahead no longer fits; compacting in line", "conversation", v.id.short, "err", err)
			res, log = nil, engineLog(v)
		} else {
			s.metrics.ahead(aheadSwapped)
		}
	}
	if res == nil {
		res, err = eng.Compact(ctx, log, req)
	}
	if err != nil {
		return nil, res, err
	}
	entry, final := res.Last()
	if entry == nil || entry.Compaction == nil {
		return nil, res, compact.ErrNothingToCompact
	}
	ui, _, ok := parseEntryID(entry.Compaction.FirstKeptID)
	if !ok || ui <= 0 || ui >= len(v.p.Units) {
		return nil, res, fmt.Errorf("%w: first kept %q", errNoCut, entry.Compaction.FirstKeptID)
	}
	if v.cp != nil && ui <= v.cp.Covered {
		return nil, res, fmt.Errorf("%w: the cut does not move past the previous compaction", errNoCut)
	}
	text := compact.SummaryText(final.Summary) + "\n\n" + compact.ContinuationNote
	cp := &store.Checkpoint{
		Covered:       ui,
		Chain:         hexChain(v.chain[ui]),
		Item:          codecFor(v.api).summaryItem(text),
		Summary:       final.Summary,
		ReadFiles:     entry.Compaction.ReadFiles,
		ModifiedFiles: entry.Compaction.ModifiedFiles,
		TokensBefore:  v.tokens,
		Reason:        reason,
		Summarizer:    final.Summarizer,
		Created:       s.now().UTC(),
		Duration:      res.Duration,
	}
	if res.Ahead != nil {
		cp.Ahead, cp.Duration = true, res.Ahead.Duration
		if pend != nil {
			cp.AheadCalls = pend.SummaryCalls
		}
	}
	if ms := v.p.Units[ui].Messages; len(ms) > 0 {
		cp.KeptRole, cp.KeptPreview = ms[0].Role, keptPreview(ms[0])
	}
	cp.TokensAfter = v.envelope + s.estimateBytes(v.p.Model, cp.Item) + s.estimateUnits(v.p.Model, v.p.Units[ui:])
	return cp, res, nil
}

// budgets are the engine's targets for one compaction, in the engine's own
// estimate of the messages (the envelope is apart).
type budgets struct {
	keep, target, maxSummary int
}

// budgetsFor sizes a compaction: after it, the request must sit well under
// the trigger, with room for the summary and the newest messages.
func (s *Server) budgetsFor(v *view, threshold int) budgets {
	room := threshold - v.envelope
	if room < 2000 {
		room = 2000
	}
	// Aim at half the room the system prompt and tools leave under the
	// trigger, or lower when the policy's own target (half the window, by
	// default) asks for it and still leaves the messages a fair share: a
	// large envelope must not squeeze the kept part to nothing.
	target := room / 2
	if t := s.policyFor(v.info).Target(v.info) - v.envelope; t >= room/4 && t < target {
		target = t
	}
	if target < 1000 {
		target = 1000
	}
	keep := s.cfg.KeepRecentTokens
	if keep <= 0 {
		keep = compact.DefaultKeepRecentTokens
	}
	if keep > target/2 {
		keep = target / 2
	}
	maxSummary := target / 3
	if maxSummary > 13107 {
		maxSummary = 13107
	}
	if maxSummary < 500 {
		maxSummary = 500
	}
	return budgets{keep: keep, target: target, maxSummary: maxSummary}
}

// engineLog builds the engine's view of the request: every unit's messages
// as entries, with the applied compaction recorded where it belongs, so
// that a new compaction merges the old summary.
func engineLog(v *view) *compact.SliceLog {
	var entries []*compact.Entry
	parent := ""
	add := func(e *compact.Entry) {
		e.ParentID = parent
		parent = e.ID
		entries = append(entries, e)
	}
	for i, u := range v.p.Units {
		if v.cp != nil && i == v.cp.Covered {
			add(&compact.Entry{ID: "cp", Kind: compact.KindCompaction, Compaction: &compact.Compaction{
				Summary:        v.cp.Summary,
				FirstKeptID:    entryID(i, 0),
				TokensBefore:   v.cp.TokensBefore,
				TokensAfter:    v.cp.TokensAfter,
				ReadFiles:      v.cp.ReadFiles,
				ModifiedFiles:  v.cp.ModifiedFiles,
				HasFileDetails: true,
				Details:        map[string]any{"reason": string(v.cp.Reason)},
			}})
		}
		for j, m := range unitMessages(u) {
			add(&compact.Entry{ID: entryID(i, j), Kind: compact.KindMessage, Message: m})
		}
	}
	return compact.NewSliceLog(entries...)
}

// unitMessages returns the engine messages of a unit arranged so that a cut
// can only fall on its first message: when the unit opens with tool results,
// any other message of it is folded into the last tool result (a copy), so
// the planner, which never cuts before a tool result, cannot split the unit.
func unitMessages(u Unit) []*compact.Message {
	ms := u.Messages
	if len(ms) < 2 || ms[0].Role != compact.RoleToolResult {
		return ms
	}
	out := make([]*compact.Message, 0, len(ms))
	var last *compact.Message
	for _, m := range ms {
		if m.Role == compact.RoleToolResult {
			c := *m
			last = &c
			out = append(out, last)
			continue
		}
		last.Content = append(append([]compact.Part(nil), last.Content...), m.Content...)
	}
	return out
}

// entryID names the engine entry of message j of unit i.
func entryID(i, j int) string { return "u" + strconv.Itoa(i) + "." + strconv.Itoa(j) }

// parseEntryID is the inverse of entryID.
func parseEntryID(id string) (unit, msg int, ok bool) {
	a, b, found := strings.Cut(strings.TrimPrefix(id, "u"), ".")
	if !found || !strings.HasPrefix(id, "u") {
		return 0, 0, false
	}
	u, err1 := strconv.Atoi(a)
	m, err2 := strconv.Atoi(b)
	return u, m, err1 == nil && err2 == nil
}

// errAheadElsewhere says another replica holds the conversation's lock
// while the request, over its trigger, would still fit the window: it goes
// uncompacted, and a later request swaps the summary in.
var errAheadElsewhere = errors.New("proxy: another replica writes the summary")

// errNoCut is returned when the planner's cut cannot be mapped onto the
// request's units.
var errNoCut = errors.New("proxy: no usable cut point")

// saveCheckpoint records cp first among the conversation's compactions,
// and among its session's (see identity.session).
func (s *Server) saveCheckpoint(ctx context.Context, id identity, cp *store.Checkpoint) error {
	s.forgetLight(id.key)
	add := func(rec *store.Record) bool {
		rec.Checkpoints = withCheckpoint(rec.Checkpoints, cp)
		if rec.Pending != nil && rec.Pending.Covered <= cp.Covered {
			// Swapped in, or overtaken by this compaction.
			rec.Pending = nil
		}
		return true
	}
	err := s.update(ctx, id.key, func(rec *store.Record) bool {
		rec.Summaries = s.summaryTally(rec.Summaries, cp)
		rec.Compactions++
		return add(rec)
	})
	// A provider compaction works only with the credential that made it:
	// it does not follow the session to another (see adopt).
	if id.session != "" && cp.Credential == "" {
		err = errors.Join(err, s.update(ctx, id.session, add))
	}
	return err
}

// maxCheckpoints bounds the compactions kept under one conversation key.
const maxCheckpoints = 4

// withCheckpoint returns cps with cp first, without an older compaction of
// the same chain, and at most maxCheckpoints long.
func withCheckpoint(cps []store.Checkpoint, cp *store.Checkpoint) []store.Checkpoint {
	out := []store.Checkpoint{*cp}
	for _, old := range cps {
		if old.Chain == cp.Chain || len(out) >= maxCheckpoints {
			continue
		}
		out = append(out, old)
	}
	return out
}

// summarizerLabel maps a summarizer name onto the bounded metric label set.
func summarizerLabel(name string) string {
	if name == "extractive" {
		return "extractive"
	}
	return "model"
}
