package proxy

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/compactkit/compact/proxy/store"
)

// The defaults of the conversation lock (Config.LockTTL, Config.LockWait).
const (
	// DefaultLockTTL is how long a conversation lock lives unless its owner
	// extends it; a replica that dies holding one frees it that long after.
	DefaultLockTTL = 30 * time.Second
	// lockPoll is how often a waiting replica looks for the result.
	lockPoll = 50 * time.Millisecond
	// lockRetry is every how many polls a waiting replica checks whether
	// the lock was let go without a result (see waitCheckpoint).
	lockRetry = 4
)

// errLockWait says another replica's compaction did not arrive in time.
var errLockWait = errors.New("proxy: waited too long for another replica's compaction")

// lockKey names the lock of a conversation key ("c:<hash>" -> "l:<hash>").
func lockKey(key string) string { return "l:" + strings.TrimPrefix(key, "c:") }

// newerCheckpoint returns a stored compaction that applies to v and covers
// more than the one v already has, nil when there is none (or the store
// cannot say).
func (s *Server) newerCheckpoint(ctx context.Context, key string, v *view) *store.Checkpoint {
	rec, err := s.store.Get(ctx, key)
	if err != nil {
		return nil
	}
	cp := findCheckpoint(rec, v.chain)
	if cp == nil || (v.cp != nil && cp.Covered <= v.cp.Covered) {
		return nil
	}
	return cp
}

// waitCheckpoint waits, up to Config.LockWait, for another replica to
// store the compaction of v's conversation, and returns it. Every
// lockRetry polls it also tries the conversation's lock: when the holder
// let it go without storing a compaction (its write failed, or it died
// and the lock expired), waiting on would only run out the clock, so it
// returns the lock, now held by this replica, to write the compaction
// itself. Both are nil when the wait ran out.
func (s *Server) waitCheckpoint(ctx context.Context, key string, v *view, lk store.Locker) (*store.Checkpoint, store.Lock) {
	ctx, cancel := context.WithTimeout(ctx, s.lockWait)
	defer cancel()
	t := time.NewTicker(lockPoll)
	defer t.Stop()
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return nil, nil
		case <-t.C:
			if cp := s.newerCheckpoint(ctx, key, v); cp != nil {
				return cp, nil
			}
			if n%lockRetry != 0 {
				continue
			}
			if lock, err := lk.TryLock(ctx, lockKey(key), s.lockTTL); err == nil && lock != nil {
				// The compaction may have landed just before the lock
				// was let go.
				if cp := s.newerCheckpoint(ctx, key, v); cp != nil {
					rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
					_ = lock.Release(rctx)
					cancel()
					return cp, nil
				}
				return nil, lock
			}
		}
	}
}

// holdLock extends lock every third of its lifetime until the returned
// function is called, which stops the extension and releases the lock.
func (s *Server) holdLock(ctx context.Context, lock store.Lock) (release func()) {
	s.mu.Lock()
	if s.held == nil {
		s.held = map[store.Lock]struct{}{}
	}
	s.held[lock] = struct{}{}
	s.mu.Unlock()
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		defer func() {
			// A Lock that panics only stops the renewal.
			if p := recover(); p != nil {
				_ = s.recovered(stageStore, p, nil)
			}
		}()
		t := time.NewTicker(s.lockTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if err := lock.Extend(ctx, s.lockTTL); err != nil {
					s.warnOnce("lock-extend", "could not extend a conversation lock; another replica may compact too", "err", err)
					return
				}
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
		s.mu.Lock()
		delete(s.held, lock)
		s.mu.Unlock()
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = lock.Release(rctx)
	}
}

// releaseLocks frees every lock this server still holds (at shutdown, when
// a summary outlived the drain timeout), so that other replicas need not
// wait for their expiry.
func (s *Server) releaseLocks() {
	s.mu.Lock()
	held := s.held
	s.held = nil
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for l := range held {
		s.safely(nil, func() { _ = l.Release(ctx) })
	}
}
