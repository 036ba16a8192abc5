package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"
)

// memLockState is one held lock of a Memory.
type memLockState struct {
	token   string
	expires time.Time
}

// memLock is a lock held on a Memory.
type memLock struct {
	s     *Memory
	key   string
	token string
}

// TryLock implements Locker, for replicas that share one Memory in a
// process (tests) and for a single proxy.
func (s *Memory) TryLock(ctx context.Context, key string, ttl time.Duration) (Lock, error) {
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("store: lock token: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	now := s.now()
	if l, ok := s.locks[key]; ok && now.Before(l.expires) {
		return nil, nil
	}
	if s.locks == nil {
		s.locks = map[string]memLockState{}
	}
	tok := hex.EncodeToString(b[:])
	s.locks[key] = memLockState{token: tok, expires: now.Add(ttl)}
	return &memLock{s: s, key: key, token: tok}, nil
}

// Extend implements Lock.
func (l *memLock) Extend(ctx context.Context, ttl time.Duration) error {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	now := l.s.now()
	cur, ok := l.s.locks[l.key]
	if !ok || cur.token != l.token || !now.Before(cur.expires) {
		return fmt.Errorf("%w: %s", ErrLockLost, l.key)
	}
	cur.expires = now.Add(ttl)
	l.s.locks[l.key] = cur
	return nil
}

// Release implements Lock.
func (l *memLock) Release(ctx context.Context) error {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	if cur, ok := l.s.locks[l.key]; ok && cur.token == l.token {
		delete(l.s.locks, l.key)
	}
	return nil
}
