package proxy

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsontext"
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
		if x.body != nil {
			addBetas(req.Header, x.betas)
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
				if model, _ := jsontext.TopLevelString(x.decoded, "model"); model != "" {
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
					if s.read(x) && !x.v.storeDown {
						decision := x.decision
						if vd := s.decide(x); vd.ahead {
							s.startAhead(x, vd.threshold)
						}
						x.decision = decision // it went as it came
					}
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
	if !s.compactNow(ctx, x, compact.ReasonOverflow, s.decideOverflow(x.v)) {
		return false
	}
	s.rewrite(x)
	return x.body != nil
}
