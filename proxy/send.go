package proxy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/proxy/store"
)

// send forwards the exchange upstream and relays the answer. An overflow
// error that arrives before anything was written to the client triggers one
// forced compaction and one retry, so the client only sees the answer.
func (s *Server) send(w http.ResponseWriter, x *exchange) {
	ctx := x.r.Context()
	for {
		body := x.outBody()
		if x.body == nil && !bytes.Equal(body, x.raw) {
			// Never expected: without a rewrite the client's bytes go.
			s.metrics.passthroughModified()
		}
		req, err := newUpstreamRequest(ctx, s.upstreamFor(x.api), x.r, body)
		if err != nil {
			writeError(w, x.api, http.StatusBadGateway, "api_error", "compact proxy: bad upstream request")
			return
		}
		s.metrics.overhead(x.api, since(s.now, x.start))
		sent := s.now()
		resp, err := s.client.Do(req)
		if err != nil {
			s.upstreamFailed(w, x.r, x.api, err)
			return
		}
		if resp.StatusCode >= 400 && (x.v != nil || x.unknownWindow) && !x.retried && !strings.HasSuffix(x.r.URL.Path, "/count_tokens") {
			errBody, whole, _ := peekError(resp)
			overflow := whole && isOverflow(x.api, resp.StatusCode, errBody, resp.Header)
			if overflow && x.v == nil {
				// A model whose window nobody gave: the error may name it,
				// and then the request can be read and compacted after all.
				if model, _ := compact.TopLevelString(x.decoded, "model"); model != "" {
					s.learnWindow(s.learnScope(x.api, x.r), model, "", errBody)
					if !s.read(x) {
						overflow = false
					}
				}
			}
			if overflow && x.v != nil {
				scope := s.learnScope(x.api, x.r)
				s.learnWindow(scope, x.v.p.Model, x.v.id.short, errBody)
				x.v.info = s.learnedInfo(scope, x.v.info)
			}
			if overflow && s.retryAfterOverflow(ctx, x) {
				s.metrics.overflowRetry(x.api)
				continue
			}
			if !overflow && x.body != nil && (resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusUnprocessableEntity) {
				// The provider refused our rewrite for a reason of its
				// own: send the client's request as it came instead.
				s.failOpen(stageSplice, fmt.Errorf("upstream refused the compacted request with status %d", resp.StatusCode))
				if x.v != nil {
					s.refuse(x.v.id.key)
				}
				x.body, x.retried, x.decision = nil, true, "pass (compacted request refused)"
				resp.Body.Close()
				continue
			}
			s.metrics.upstreamLatency(x.api, since(s.now, sent))
			_ = relayError(w, resp, errBody)
			s.metrics.request(x.api, resp.StatusCode)
			s.logRequest(x, resp.StatusCode, nil)
			return
		}
		s.finish(w, x, resp, sent)
		return
	}
}

// finish relays a successful (or non-retried) upstream response to the
// client, reading the usage from a copy, and records it.
func (s *Server) finish(w http.ResponseWriter, x *exchange, resp *http.Response, sent time.Time) {
	ctx := x.r.Context()
	stream := strings.HasPrefix(strings.ToLower(resp.Header.Get("Content-Type")), "text/event-stream")
	var obs observer
	if x.v != nil || x.streamed {
		obs = &safeObserver{obs: codecFor(x.api).newObserver(stream), s: s}
	}
	_, rerr := relay(w, resp, obs, func() { s.metrics.upstreamLatency(x.api, since(s.now, sent)) })
	s.metrics.request(x.api, resp.StatusCode)
	x.elapsed = since(s.now, x.start)
	if rerr != nil && ctx.Err() != nil {
		x.decision += " (client gone)"
	}
	var o Observed
	if obs != nil {
		o = obs.Observed()
		if stream && !o.Complete {
			s.metrics.streamTruncated(x.api)
		}
		if o.Overflow && x.v != nil {
			s.learnWindow(s.learnScope(x.api, x.r), x.v.p.Model, x.v.id.short, []byte(o.ErrorBody))
		}
	}
	after := func() {
		if obs != nil {
			switch {
			case resp.StatusCode >= 300:
			case x.light.key != "":
				s.recordLight(x, s.plausible(x, o))
			default:
				if x.streamed && (o.Usage != nil || o.Overflow) {
					// Read the request now that the answer is on its
					// way: the client did not wait for it.
					s.read(x)
				}
				s.record(x, s.plausible(x, o))
			}
		}
		s.logRequest(x, resp.StatusCode, &o)
	}
	if o.Overflow {
		// The next request must see it: compact first.
		s.safely(x.r.Header, after)
		return
	}
	key := x.headerKey
	if x.v != nil {
		key = x.v.id.key
	}
	s.afterResponse(x, key, after)
}

// outBody is the body to send: the rewrite (encoded as the client encoded
// its own), or the client's bytes.
func (x *exchange) outBody() []byte {
	if x.body == nil {
		return x.raw
	}
	enc := contentEncoding(x.r.Header)
	if enc == "" {
		return x.body
	}
	b, err := encodeBody(enc, x.body)
	if err != nil {
		return x.raw
	}
	return b
}

// retryAfterOverflow forces a compaction after the upstream refused the
// request as too long. It reports whether the request was rewritten and
// may be sent again.
func (s *Server) retryAfterOverflow(ctx context.Context, x *exchange) bool {
	x.retried = true
	v := x.v
	threshold, _ := s.policyFor(v.info).Threshold(v.info)
	if threshold <= 0 {
		threshold = v.info.ContextWindow
	}
	// The provider's count was over the window whatever our estimate said.
	if v.tokens <= v.info.ContextWindow {
		v.tokens = v.info.ContextWindow + 1
	}
	if !s.compactNow(ctx, x, compact.ReasonOverflow, threshold) {
		return false
	}
	s.rewrite(x)
	return x.body != nil
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
		args = append(args, "usage_prompt", promptTokens(*o.Usage), "usage_output", o.Usage.Output)
	}
	if o != nil && o.Overflow {
		args = append(args, "stream_overflow", true)
	}
	s.log.Info("request", args...)
}

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
	est := promptTokens(l.Usage) + l.Usage.Output + growth/2
	if est < l.Threshold*7/10 {
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

// recordLight records the size and usage of a request that was not read
// (see streamable). The unit count and chain are cleared, so the usage is
// not mistaken for that of an older prefix.
func (s *Server) recordLight(x *exchange, o Observed) {
	if o.Usage == nil && !o.Overflow {
		return
	}
	ctx := context.WithoutCancel(x.r.Context())
	last := &store.LastCall{Bytes: len(x.raw), Threshold: x.lightLast.Threshold, Overflow: o.Overflow, Usage: x.lightLast.Usage}
	if o.Usage != nil {
		last.Usage = *o.Usage
	}
	var err error
	s.cacheLight(x.light.key, last) // last is not modified from here on
	if ls, ok := s.store.(store.LastStore); ok {
		// One write, no read: the checkpoints are not touched.
		err = ls.PutLast(ctx, x.light.key, last)
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
