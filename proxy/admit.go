package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/compactkit/compact/summarize"
)

// Admission control: the request bodies the proxy holds in memory share one
// byte budget (Config.MaxInFlightBytes). A request reserves its body's size
// before reading it (as it reads, for a body of unknown length) and gives it
// back when nothing holds the bytes any more, background work included. A
// request that finds no room waits in line, up to Config.AdmitWait, then
// gets 503 with Retry-After. The work one request can cause is bounded too:
// the messages read (Config.MaxMessages) and the summary calls of one compaction
// (Config.MaxSummaryCalls); beyond them the request is passed through.

// errBusy is wrapped by the admission errors: the budget had no room in
// time. The proxy answers 503 with Retry-After.
var errBusy = errors.New("compact proxy is at its in-flight body budget")

// errBodyTimeout is wrapped when a request body did not arrive within
// Config.BodyTimeout. The proxy answers 408.
var errBodyTimeout = errors.New("request body not received in time")

// errWorkBound is the cause a compaction is cancelled with when it needs
// more summary calls than Config.MaxSummaryCalls.
var errWorkBound = errors.New("compaction needs more summary calls than allowed")

// retryAfterSeconds is the Retry-After sent with a 503 for a full budget.
const retryAfterSeconds = 2

// chargeStep is how much more a body of unknown length reserves each time
// it outgrows its reservation.
const chargeStep = 1 << 20

// admission is the byte budget of the bodies in memory.
type admission struct {
	size int64
	wait time.Duration
	sem  *semaphore.Weighted
	// held is the number of bytes reserved now (for the tests and the
	// metrics).
	held atomic.Int64
}

// setLimits checks the admission, work and timeout fields of s.cfg and
// fills in their defaults.
func (s *Server) setLimits() error {
	c := &s.cfg
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"max in-flight bytes", c.MaxInFlightBytes},
		{"admit wait", int64(c.AdmitWait)},
		{"max messages", int64(c.MaxMessages)},
		{"max summary calls", int64(c.MaxSummaryCalls)},
		{"body timeout", int64(c.BodyTimeout)},
		{"write idle timeout", int64(c.WriteIdleTimeout)},
	} {
		if f.v < 0 {
			return fmt.Errorf("proxy: %s %d: must not be negative", f.name, f.v)
		}
	}
	c.MaxInFlightBytes = orDefault(c.MaxInFlightBytes, DefaultMaxInFlightBytes)
	c.AdmitWait = orDefault(c.AdmitWait, DefaultAdmitWait)
	c.MaxMessages = orDefault(c.MaxMessages, DefaultMaxMessages)
	c.MaxSummaryCalls = orDefault(c.MaxSummaryCalls, DefaultMaxSummaryCalls)
	c.BodyTimeout = orDefault(c.BodyTimeout, DefaultBodyTimeout)
	c.WriteIdleTimeout = orDefault(c.WriteIdleTimeout, DefaultWriteIdleTimeout)
	s.admit = &admission{size: c.MaxInFlightBytes, wait: c.AdmitWait, sem: semaphore.NewWeighted(c.MaxInFlightBytes)}
	return nil
}

// orDefault returns v, or def when v is zero.
func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// charge is one request's reservation under the budget. Its methods are
// safe for concurrent use; release may be called more than once.
type charge struct {
	a        *admission
	deadline time.Time
	mu       sync.Mutex
	n        int64
}

// reserve reserves n bytes for a new request (at most the whole budget),
// waiting in line until the admission wait ends or ctx does.
func (a *admission) reserve(ctx context.Context, n int64) (*charge, error) {
	c := &charge{a: a, deadline: time.Now().Add(a.wait)}
	if err := c.grow(ctx, n); err != nil {
		return nil, err
	}
	return c, nil
}

// admitBody reserves room for the request's body under the in-flight
// budget (Config.MaxInFlightBytes), waiting up to Config.AdmitWait. A body
// over Config.MaxBodyBytes gets 413 and one that finds no room 503; ok is
// false then, and when the client went away while it waited.
func (s *Server) admitBody(w http.ResponseWriter, r *http.Request, api API) (ch *charge, ok bool) {
	if r.ContentLength > s.cfg.MaxBodyBytes {
		s.tooLarge(w, api)
		return nil, false
	}
	ch, err := s.admit.reserve(r.Context(), max(r.ContentLength, 0))
	if err != nil {
		if errors.Is(err, errBusy) {
			s.refuseBusy(w, api)
		}
		return nil, false
	}
	return ch, true
}

// grow reserves n more bytes, waiting no later than the charge's
// admission deadline. A charge never holds more than the whole budget.
func (c *charge) grow(ctx context.Context, n int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	n = min(n, c.a.size-c.n)
	if n <= 0 {
		return nil
	}
	wctx, cancel := context.WithDeadline(ctx, c.deadline)
	defer cancel()
	if err := c.a.sem.Acquire(wctx, n); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: no room for %d more bytes within %s", errBusy, n, c.a.wait)
	}
	c.n += n
	c.a.held.Add(n)
	return nil
}

// release gives the whole reservation back.
func (c *charge) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n > 0 {
		c.a.sem.Release(c.n)
		c.a.held.Add(-c.n)
		c.n = 0
	}
}

// chargedReader reserves budget for a body of unknown length as it is
// read, chargeStep bytes at a time.
type chargedReader struct {
	ctx  context.Context
	r    io.Reader
	c    *charge
	read int64
}

// Read reads from the body once its bytes have room under the budget.
func (cr *chargedReader) Read(p []byte) (int, error) {
	n, err := cr.r.Read(p)
	cr.read += int64(n)
	if cr.read > cr.c.held() {
		if gerr := cr.c.grow(cr.ctx, max(chargeStep, cr.read-cr.c.held())); gerr != nil {
			return n, gerr
		}
	}
	return n, err
}

// held returns the bytes c reserves now.
func (c *charge) held() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// tooManyMessages reports whether a request's body has more history
// items than Config.MaxMessages, by counting the keys every item carries
// ("role"; for Responses also "call_id") before anything is parsed: a
// body of a million tiny messages would otherwise cost a parse of a
// million messages. A quoted key cannot occur inside a JSON string (its
// quotes would be escaped there), so the count can only come out low,
// never high, for items without those keys: the exact count after
// parsing catches those (see Server.read).
func (s *Server) tooManyMessages(api API, body []byte) bool {
	n := bytes.Count(body, []byte(`"role"`))
	if api == Responses {
		n += bytes.Count(body, []byte(`"call_id"`))
	}
	return n > s.cfg.MaxMessages
}

// refuseBusy answers a request the budget had no room for.
func (s *Server) refuseBusy(w http.ResponseWriter, api API) {
	s.metrics.request(api, http.StatusServiceUnavailable)
	s.warnEvery("admission", "request refused: in-flight body budget full", "max_in_flight_bytes", s.admit.size, "admit_wait", s.admit.wait.String())
	w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds))
	typ := "api_error"
	if api == Anthropic {
		typ = "overloaded_error"
	}
	writeError(w, api, http.StatusServiceUnavailable, typ, "compact proxy: too many large requests in flight; retry shortly")
}

// timedBody bounds the reading of a request body: the connection's read
// deadline is the request's start plus Config.BodyTimeout while the body
// is read, and is cleared once the body has been read to its end, so that
// it cannot end a long stream that follows (net/http also clears it there
// for HTTP/1.1).
type timedBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done atomic.Bool
}

// Read reads the body, clearing the deadline at its end and naming a
// timeout as errBodyTimeout.
func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && b.done.CompareAndSwap(false, true) {
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		err = fmt.Errorf("%w: %w", errBodyTimeout, err)
	}
	return n, err
}

// limitBodyTime sets the body read deadline of r (see timedBody) and
// returns r with its body wrapped. A request without a body, or on a
// connection that has no deadlines (a test recorder), is returned as it
// is.
func (s *Server) limitBodyTime(w http.ResponseWriter, r *http.Request) *http.Request {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return r
	}
	rc := http.NewResponseController(w)
	// Deadlines are wall-clock time, whatever clock Config.Now gives.
	if rc.SetReadDeadline(time.Now().Add(s.cfg.BodyTimeout)) != nil {
		return r
	}
	r2 := new(http.Request)
	*r2 = *r
	r2.Body = &timedBody{ReadCloser: r.Body, rc: rc}
	return r2
}

// idleWriter gives every write to the client a deadline of
// Config.WriteIdleTimeout from the moment it starts, so that a client that
// stops reading is cut off while a stream that keeps moving lasts as long
// as it lasts.
type idleWriter struct {
	http.ResponseWriter
	rc   *http.ResponseController
	idle time.Duration
}

// newIdleWriter wraps w, or returns it as it is when its connection has
// no deadlines.
func newIdleWriter(w http.ResponseWriter, idle time.Duration) http.ResponseWriter {
	rc := http.NewResponseController(w)
	if rc.SetWriteDeadline(time.Now().Add(idle)) != nil {
		return w
	}
	return &idleWriter{ResponseWriter: w, rc: rc, idle: idle}
}

func (w *idleWriter) extend() { _ = w.rc.SetWriteDeadline(time.Now().Add(w.idle)) }

// Write writes p with a fresh deadline.
func (w *idleWriter) Write(p []byte) (int, error) {
	w.extend()
	return w.ResponseWriter.Write(p)
}

// FlushError flushes with a fresh deadline (http.ResponseController.Flush
// finds it).
func (w *idleWriter) FlushError() error {
	w.extend()
	return w.rc.Flush()
}

// Flush implements http.Flusher for callers that assert it.
func (w *idleWriter) Flush() { _ = w.FlushError() }

// Unwrap returns the wrapped writer, for http.ResponseController.
func (w *idleWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// callLimit counts the model calls of one compaction (a history too long
// for one call is summarized in chunks, each a call); past its number it
// cancels the compaction with errWorkBound, and the request is passed
// through.
type callLimit struct {
	left   atomic.Int64
	cancel context.CancelCauseFunc
}

// newCallLimit allows n calls; cancel ends the compaction's context once
// a call more is asked for.
func newCallLimit(n int, cancel context.CancelCauseFunc) *callLimit {
	l := &callLimit{cancel: cancel}
	l.left.Store(int64(n))
	return l
}

// wrap returns c counted against l (c itself when l is nil).
func (l *callLimit) wrap(c summarize.Completer) summarize.Completer {
	if l == nil {
		return c
	}
	return limitedCompleter{c, l}
}

// take counts one call against l (none when l is nil); past the limit it
// ends the compaction and returns errWorkBound.
func (l *callLimit) take() error {
	if l == nil {
		return nil
	}
	if l.left.Add(-1) < 0 {
		l.cancel(errWorkBound)
		return errWorkBound
	}
	return nil
}

// limitedCompleter is a Completer whose calls count against a callLimit.
type limitedCompleter struct {
	summarize.Completer
	l *callLimit
}

// Complete makes the call while calls are left.
func (c limitedCompleter) Complete(ctx context.Context, req *summarize.Request) (*summarize.Response, error) {
	if err := c.l.take(); err != nil {
		return nil, err
	}
	return c.Completer.Complete(ctx, req)
}
