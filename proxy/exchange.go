package proxy

import (
	"net/http"
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
	// body is the rewritten (decoded) body, nil when the original goes;
	// betas are the anthropic-beta values it needs on top of the client's.
	body  []byte
	betas []string
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

// serveAPI is the life of one request to a model API, from top to
// bottom, each step a function in a file of its own:
//
//	admitBody    its size is reserved under the in-flight budget (admit.go)
//	streamable   a conversation far from its trigger goes upstream while
//	             its body still arrives (streamed.go)
//	receiveBody  the body is read and decoded (body.go)
//	prepare      read, identify, measure, decide, compact, splice (below)
//	send         upstream, once more after an overflow, and the answer
//	             relayed; its usage recorded once it is over (send.go,
//	             record.go)
//
// The body is held in memory under the admission budget (see admit.go):
// the reservation is made before the body is read and given back once
// nothing holds the bytes, background work included.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request, api API) {
	ch, ok := s.admitBody(w, r, api)
	if !ok {
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
	if !s.receiveBody(w, x, ch) {
		return
	}
	defer func() {
		if p := recover(); p != nil {
			s.rescue(w, x, p)
		}
	}()
	if x.decoded != nil {
		s.prepare(x)
	}
	s.send(w, x)
}

// prepare reads the request and decides what goes upstream: read
// (parse, identify, measure), decide, compact, splice. It never fails the
// request: whatever goes wrong leaves x.body nil, so the client's own
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
	switch vd := s.decide(x); {
	case vd.compact:
		s.compactNow(x.r.Context(), x, vd.reason, vd.threshold)
	case vd.ahead:
		s.startAhead(x, vd.threshold)
	}
	if v.cp != nil {
		s.rewrite(x)
	}
}

// read parses the request, finds its conversation and what is stored
// about it, and measures it (x.v). It reports false when the request is
// not one the proxy compacts; x.decision then says why.
func (s *Server) read(x *exchange) bool {
	v, ok := s.parseBody(x)
	if !ok {
		return false
	}
	s.findConversation(x, v)
	v.pending = usablePending(v.rec, v.chain, v.cp)
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
	// pending is the summary written ahead that applies to this request
	// (see usablePending), nil when none does.
	pending *store.Pending
	// info is the model's limits; info.ContextWindow is 0 when unknown.
	info compact.ModelInfo
	// envelope is the estimated size of everything outside the summarized
	// and kept units: system prompt, tools, head items.
	envelope int
	// tokens is the measured size of the request as it would go upstream
	// now (with cp applied); usageTokens the part the provider reported;
	// client the measured size as the client sent it (set with tokens, and
	// not changed by a compaction this request makes).
	tokens, usageTokens, client int
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
