package proxy

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/compactkit/compact"
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

// view is one request read for compaction: the parsed body, its
// conversation and what is stored about it.
type view struct {
	api   API
	p     *Parsed
	id    identity
	chain [][32]byte
	rec   *store.Record
	// cp is the stored compaction that applies to this request (its chain
	// matches the request's prefix), nil when none does.
	cp *store.Checkpoint
	// info is the model's limits; info.ContextWindow is 0 when unknown.
	info compact.ModelInfo
	// envelope is the estimated size of everything outside the summarized
	// and kept units: system prompt, tools, head items.
	envelope int
	// tokens is the measured size of the request as it would go upstream
	// now (with cp applied); usageTokens the part the provider reported.
	tokens, usageTokens int
	// forced is true when the previous response reported an overflow.
	forced bool
	// storeDown is true when the store could not be read: the request is
	// only compacted if the provider refuses it as too long, and that
	// compaction is not stored.
	storeDown bool
}

// releaseBody gives the pooled body buffer back (see serveStreamed).
func (x *exchange) releaseBody() {
	if x.release != nil {
		x.release()
		x.release = nil
	}
}
