package proxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/redact"
)

// A panic on the request path (in the proxy's own code, a Store, a
// summarizer, a Policy or a Transport given in Config) fails open like any
// other failure: it is recovered where it happens, counted in
// compact_proxy_fail_open_total and logged in one line without a stack
// trace or a credential, and the request still gets an answer. Where
// nothing has been written to the client yet, that answer is the
// upstream's to the client's own bytes; once the answer has started, the
// connection is cut (the client sees a broken response, not a hang).
// Background work after an answer recovers on its own, so a panic there
// never ends the process.

// errPanic marks an error made from a recovered panic.
var errPanic = errors.New("panic")

// panicError returns the recovered value p as an error wrapping errPanic,
// with the values of secrets (a request's credentials) redacted from it.
func panicError(p any, secrets []string) error {
	if err, ok := p.(error); ok {
		return fmt.Errorf("%w: %s", errPanic, redact.String(err.Error(), secrets...))
	}
	return fmt.Errorf("%w: %s", errPanic, redact.String(fmt.Sprint(p), secrets...))
}

// recovered counts and logs the panic p recovered in stage. It re-panics
// with http.ErrAbortHandler, net/http's quiet way to cut a connection,
// which is not a failure of the proxy's.
func (s *Server) recovered(stage string, p any, secrets []string) error {
	if p == http.ErrAbortHandler {
		panic(p)
	}
	err := panicError(p, secrets)
	s.failOpen(stage, err)
	return err
}

// safely runs fn, background work of a request with headers h, recovering
// a panic in it.
func (s *Server) safely(h http.Header, fn func()) {
	defer func() {
		if p := recover(); p != nil {
			_ = s.recovered(stageInternal, p, secretsOf(h))
		}
	}()
	fn()
}

// answerWriter notes whether anything of the answer was written to the
// client, so that a panic can tell whether the request may still be
// forwarded (see Server.rescue).
type answerWriter struct {
	http.ResponseWriter
	wrote bool
}

// WriteHeader notes that the answer started.
func (w *answerWriter) WriteHeader(code int) {
	if code >= 200 {
		w.wrote = true
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write notes that the answer started.
func (w *answerWriter) Write(p []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(p)
}

// FlushError notes that the answer started (http.ResponseController.Flush
// finds it).
func (w *answerWriter) FlushError() error {
	w.wrote = true
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Flush implements http.Flusher for callers that assert it.
func (w *answerWriter) Flush() { _ = w.FlushError() }

// Unwrap returns the wrapped writer, for http.ResponseController.
func (w *answerWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// answered reports whether anything was written to w; a writer that does
// not say counts as written.
func answered(w http.ResponseWriter) bool {
	aw, ok := w.(*answerWriter)
	return !ok || aw.wrote
}

// recoverRequest is the last line of recovery of a request (deferred by
// ServeHTTP): a panic that nothing nearer caught gets a 502 in the API's
// shape when nothing was written yet, else the connection is cut.
func (s *Server) recoverRequest(w http.ResponseWriter, r *http.Request, api API) {
	p := recover()
	if p == nil {
		return
	}
	_ = s.recovered(stageInternal, p, secretsOf(r.Header))
	if answered(w) {
		panic(http.ErrAbortHandler)
	}
	s.metrics.request(api, http.StatusBadGateway)
	writeError(w, api, http.StatusBadGateway, "api_error", "compact proxy: internal error; the request was not sent")
}

// rescue answers a request whose handling panicked (p) after its body was
// read: when nothing was written to the client yet, the client's own bytes
// go upstream as they came, with no other work of the proxy's; otherwise
// the connection is cut.
func (s *Server) rescue(w http.ResponseWriter, x *exchange, p any) {
	_ = s.recovered(stageInternal, p, secretsOf(x.r.Header))
	if answered(w) {
		panic(http.ErrAbortHandler)
	}
	if x.raw == nil {
		s.metrics.request(x.api, http.StatusBadGateway)
		writeError(w, x.api, http.StatusBadGateway, "api_error", "compact proxy: internal error; the request was not sent")
		return
	}
	x.decision = "pass (internal error)"
	req, err := newUpstreamRequest(x.r.Context(), s.upstreamFor(x.api), x.r, x.raw)
	if err != nil {
		writeError(w, x.api, http.StatusBadGateway, "api_error", "compact proxy: bad upstream request")
		return
	}
	resp, err := s.client.Do(req)
	if err != nil {
		s.upstreamFailed(w, x.r, x.api, err)
		return
	}
	_, _ = relay(w, resp, nil, nil)
	s.metrics.request(x.api, resp.StatusCode)
	x.v = nil // what was read of it may be what panicked
	s.logRequest(x, resp.StatusCode, nil)
}

// safeObserver reads a response for its usage, and stops reading it, with
// nothing observed, if the observer panics: the answer itself is relayed
// whatever happens to the copy.
type safeObserver struct {
	obs    observer
	s      *Server
	failed bool
}

// Write feeds the observer, recovering a panic.
func (o *safeObserver) Write(p []byte) (n int, err error) {
	if o.failed {
		return len(p), nil
	}
	defer func() {
		if r := recover(); r != nil {
			o.fail(r)
			n, err = len(p), nil
		}
	}()
	return o.obs.Write(p)
}

// Observed returns what the observer read, nothing when it panicked.
func (o *safeObserver) Observed() (obs Observed) {
	if o.failed {
		return Observed{}
	}
	defer func() {
		if r := recover(); r != nil {
			o.fail(r)
			obs = Observed{}
		}
	}()
	return o.obs.Observed()
}

// fail notes the observer's panic r.
func (o *safeObserver) fail(r any) {
	o.failed = true
	_ = o.s.recovered(stageObserve, r, nil)
}

// safeSummarizer turns a panic of the summarizer it wraps into an error,
// so that the offline summary is written instead (the engine's fallback).
type safeSummarizer struct {
	compact.Summarizer
	s       *Server
	secrets []string
}

// Summarize calls the wrapped summarizer, recovering a panic.
func (w safeSummarizer) Summarize(ctx context.Context, req *compact.SummaryRequest) (sum *compact.Summary, err error) {
	defer func() {
		if p := recover(); p != nil {
			sum, err = nil, w.s.recovered(stageSummarize, p, w.secrets)
		}
	}()
	return w.Summarizer.Summarize(ctx, req)
}
