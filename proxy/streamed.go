package proxy

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/compactkit/compact/proxy/store"
)

// streamable decides whether a request can go upstream while it is still
// being read, before the proxy has looked at it: only when the
// conversation is known by a header, has no compaction to apply, and its
// last reported size plus a generous estimate of what was added (two bytes
// per token) stays clearly under its trigger. The request is then read
// from a copy once it has gone, for the accounting; should the upstream
// refuse it as too long, the copy is compacted and sent again as usual.
//
// Far from the trigger (under 70% of it) even that reading is skipped:
// light is then the conversation's key, and only the size and usage of
// the request are recorded.
func (s *Server) streamable(r *http.Request, api API) (sr streaming) {
	defer func() {
		// A store that panics (a damaged file) must not drop the
		// request: it goes the ordinary way, which fails open.
		if p := recover(); p != nil {
			_ = s.recovered(stageStore, p, secretsOf(r.Header))
			sr = streaming{}
		}
	}()
	if r.ContentLength <= 0 || r.ContentLength > s.cfg.MaxBodyBytes || contentEncoding(r.Header) != "" ||
		strings.HasSuffix(r.URL.Path, "/count_tokens") {
		return streaming{}
	}
	id, found := identifyByHeader(api, s.namespace(api, r), r.Header)
	if !found || s.refusedKey(id.key) {
		return streaming{}
	}
	l := s.lightLast(id.key)
	if l == nil {
		s.waitPending(r.Context(), id.key)
		rec, err := s.store.Get(r.Context(), id.key)
		if err != nil || len(rec.Checkpoints) > 0 || rec.Last == nil {
			return streaming{}
		}
		l = rec.Last
		s.cacheLight(id.key, l)
	}
	growth := int(r.ContentLength) - l.Bytes
	if l.Threshold <= 0 || l.Bytes <= 0 || l.Overflow || growth < 0 {
		return streaming{}
	}
	est := l.Usage.PromptTokens() + l.Usage.Output + growth/2
	if s.maybeCold(l, est) {
		return streaming{} // read first: it may be compacted for idleness
	}
	// Not read at all under 70 % of the trigger, or under a tenth below
	// an earlier mark for the summary ahead of time (which starts when a
	// read request passes it).
	light := 0.7
	if s.aheadMark > 0 {
		light = min(light, s.aheadMark-0.1)
	}
	if float64(est) < light*float64(l.Threshold) {
		return streaming{ok: true, key: id.key, light: id, last: l}
	}
	return streaming{ok: est < l.Threshold*9/10, key: id.key}
}

// streaming is what Server.streamable decided: ok when the request goes
// upstream while it is read; key is the conversation its headers name;
// light and last are set when it is not even read afterwards.
type streaming struct {
	ok    bool
	key   string
	light identity
	last  *store.LastCall
	// release, when set, gives back the request's admission reservation
	// with its body buffer.
	release func()
}

// serveStreamed forwards a request while reading it (see streamable).
func (s *Server) serveStreamed(w http.ResponseWriter, r *http.Request, api API, sr streaming) {
	x := &exchange{api: api, r: r, start: s.now(), decision: "pass (streamed)", streamed: true, light: sr.light, lightLast: sr.last, headerKey: sr.key}
	buf := getBuffer(int(r.ContentLength))
	x.release = func() {
		putBuffer(buf)
		if sr.release != nil {
			sr.release()
		}
	}
	defer func() {
		if !x.handedOff {
			x.releaseBody()
		}
	}()
	body := io.TeeReader(io.LimitReader(r.Body, r.ContentLength), buf)
	defer func() {
		if p := recover(); p != nil {
			// The client's bytes go again as they came, once all of
			// them are here.
			if _, err := io.Copy(io.Discard, body); err == nil && int64(buf.Len()) == r.ContentLength {
				x.raw = buf.Bytes()
			} else {
				x.raw = nil
			}
			s.rescue(w, x, p)
		}
	}()
	req, err := http.NewRequestWithContext(r.Context(), r.Method, upstreamURL(s.upstreamFor(api), r).String(), body)
	if err != nil {
		writeError(w, api, http.StatusBadGateway, "api_error", "compact proxy: bad upstream request")
		return
	}
	req.Header = forwardHeader(r.Header)
	req.ContentLength = r.ContentLength
	s.metrics.overhead(api, since(s.now, x.start))
	sent := s.now()
	resp, err := s.client.Do(req)
	if err != nil {
		s.upstreamFailed(w, r, api, err)
		return
	}
	if resp.StatusCode >= 400 {
		// Keep the whole request: it may have to be compacted and sent
		// again.
		_, _ = io.Copy(io.Discard, body)
		x.raw, x.decoded = buf.Bytes(), buf.Bytes()
		errBody, whole, _ := peekError(resp)
		overflow := whole && int64(len(x.raw)) == r.ContentLength && isOverflow(api, resp.StatusCode, errBody, resp.Header)
		if overflow && s.read(x) {
			scope := s.learnScope(api, r)
			s.learnWindow(scope, x.v.p.Model, x.v.id.short, errBody)
			x.v.info = s.learnedInfo(scope, x.v.info)
		}
		if overflow && x.v != nil && s.retryAfterOverflow(r.Context(), x) {
			s.metrics.overflowRetry(api)
			x.streamed, x.light = false, identity{}
			s.send(w, x)
			return
		}
		s.metrics.upstreamLatency(api, since(s.now, sent))
		_ = relayError(w, resp, errBody)
		s.metrics.request(api, resp.StatusCode)
		s.logRequest(x, resp.StatusCode, nil)
		return
	}
	_, _ = io.Copy(io.Discard, body)
	x.raw, x.decoded = buf.Bytes(), buf.Bytes()
	s.finish(w, x, resp, sent)
}

// maxPooledBuffer is the largest copy buffer kept for reuse: most request
// bodies are smaller, and a rare huge one should not stay in memory.
const maxPooledBuffer = 8 << 20

// buffers holds the copy buffers of streamed requests, so that forwarding
// a large conversation every turn does not allocate (and collect) a body's
// worth of memory each time.
var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// getBuffer returns an empty buffer with room for n bytes.
func getBuffer(n int) *bytes.Buffer {
	b := buffers.Get().(*bytes.Buffer)
	b.Reset()
	b.Grow(n)
	return b
}

// putBuffer gives a buffer back once nothing refers to its bytes.
func putBuffer(b *bytes.Buffer) {
	if b.Cap() <= maxPooledBuffer {
		buffers.Put(b)
	}
}
