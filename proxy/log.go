package proxy

import (
	"net/http"
	"time"

	"github.com/compactkit/compact/internal/apihttp"
)

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

// warnOnce logs msg once per key for the life of the server.
func (s *Server) warnOnce(key, msg string, args ...any) {
	s.mu.Lock()
	seen := s.warned[key]
	s.warned[key] = true
	s.mu.Unlock()
	if !seen {
		s.log.Warn(msg, args...)
	}
}

// warnEvery logs msg at most once a minute per key, so that a condition
// that lasts (a store down, a flood of refused requests) says so without
// flooding the log.
func (s *Server) warnEvery(key, msg string, args ...any) {
	now := s.now()
	s.mu.Lock()
	last, seen := s.failLast[key]
	logIt := !seen || now.Sub(last) >= time.Minute
	if logIt {
		s.failLast[key] = now
	}
	s.mu.Unlock()
	if logIt {
		s.log.Warn(msg, args...)
	}
}
