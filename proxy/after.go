package proxy

import (
	"context"
	"time"
)

// What happens after an answer (reading a streamed request for its
// accounting, writing the usage to the store, the log line) runs once the
// handler has returned: for HTTP/1.1 the client's response only ends, with
// its last chunk, when the handler returns, so store round trips there
// would add to every request's latency.
//
// The next request of the same conversation on this replica waits for that
// work before it reads the conversation's record (see waitPending), so a
// client that sends its next turn at once still sees this turn's usage.
// Another replica may read the record before it is written; it then works
// from the turn before, which only makes its token estimate a little
// coarser. Server.Close waits for all of it.

// pendingWork counts the background work of one conversation key.
type pendingWork struct {
	n    int
	done chan struct{}
}

// maxPendingWait bounds how long a request waits for the background work
// of its conversation: a store that hangs must not hold requests up.
const maxPendingWait = time.Second

// afterResponse runs fn in the background, once the handler returns, as
// work of conversation key ("" when it has none).
func (s *Server) afterResponse(x *exchange, key string, fn func()) {
	// The request's context ends with the handler.
	x.r = x.r.WithContext(context.WithoutCancel(x.r.Context()))
	x.handedOff = true
	p := s.beginPending(key)
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		defer s.endPending(key, p)
		defer x.releaseBody()
		s.safely(x.r.Header, fn)
	}()
}

// beginPending notes one more piece of background work on key.
func (s *Server) beginPending(key string) *pendingWork {
	if key == "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending == nil {
		s.pending = map[string]*pendingWork{}
	}
	p := s.pending[key]
	if p == nil {
		p = &pendingWork{done: make(chan struct{})}
		s.pending[key] = p
	}
	p.n++
	return p
}

// endPending notes the end of one piece of background work on key.
func (s *Server) endPending(key string, p *pendingWork) {
	if p == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p.n--
	if p.n == 0 {
		close(p.done)
		delete(s.pending, key)
	}
}

// waitPending waits until the background work of key has finished, the
// context ends, or maxPendingWait passes.
func (s *Server) waitPending(ctx context.Context, key string) {
	s.mu.Lock()
	p := s.pending[key]
	s.mu.Unlock()
	if p == nil {
		return
	}
	t := time.NewTimer(maxPendingWait)
	defer t.Stop()
	select {
	case <-p.done:
	case <-ctx.Done():
	case <-t.C:
	}
}
