package proxy

import (
	"time"

	"github.com/compactkit/compact/proxy/store"
)

// The light cache keeps, per conversation key, the last call this replica
// knows of a conversation that has no compaction, so that a request far
// from its trigger (see Server.streamable) goes upstream without waiting
// for a store round trip. It is safe for the reason the light path is:
// the decision only uses the last call's size and usage, and an older last
// call makes the estimate larger (more of the request counts as growth, at
// two bytes a token), never smaller. A compaction another replica stores
// happens only when the conversation passed its trigger, and a later
// request is at least as large, so the estimate from an older entry is
// past the light limit as well and the store is read. A request smaller
// than the entry (a client that shrank its history) reads the store too.
// This replica's own compactions remove the entry.

// lightEntry is a cached last call and when it was cached.
type lightEntry struct {
	last *store.LastCall
	at   time.Time
}

// Limits of the light cache: entries live lightTTL, and past
// maxLightEntries the oldest eighth is dropped.
const (
	lightTTL        = 10 * time.Minute
	maxLightEntries = 1 << 16
)

// lightLast returns the cached last call of key, nil when there is none.
func (s *Server) lightLast(key string) *store.LastCall {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.light[key]
	if !ok {
		return nil
	}
	if now.Sub(e.at) > lightTTL || now.Before(e.at) {
		delete(s.light, key)
		return nil
	}
	return e.last
}

// cacheLight remembers last as key's last call; the conversation has no
// compaction.
func (s *Server) cacheLight(key string, last *store.LastCall) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.light == nil {
		s.light = map[string]lightEntry{}
	}
	if len(s.light) >= maxLightEntries {
		s.trimLight(now)
	}
	s.light[key] = lightEntry{last: last, at: now}
}

// forgetLight drops key's entry: the conversation has a compaction now.
func (s *Server) forgetLight(key string) {
	s.mu.Lock()
	delete(s.light, key)
	s.mu.Unlock()
}

// trimLight drops the expired entries, then the oldest eighth; s.mu is
// held.
func (s *Server) trimLight(now time.Time) {
	var cut time.Time
	for k, e := range s.light {
		if now.Sub(e.at) > lightTTL {
			delete(s.light, k)
		} else if cut.IsZero() || e.at.Before(cut) {
			cut = e.at
		}
	}
	if len(s.light) < maxLightEntries {
		return
	}
	// Without a sorted index: drop what is older than an eighth of the
	// way from the oldest entry to now (the oldest one at least).
	limit := cut.Add(now.Sub(cut) / 8)
	for k, e := range s.light {
		if !e.at.After(limit) {
			delete(s.light, k)
		}
	}
}
