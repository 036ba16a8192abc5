package store

import (
	"context"
	"errors"
	"time"
)

// ErrLockLost is returned by Lock.Extend when the lock expired and another
// owner may hold it now.
var ErrLockLost = errors.New("store: lock lost")

// Locker is implemented by stores that several proxy replicas share (Redis):
// a lock per conversation, so that when several replicas see the same
// conversation over its trigger at once, exactly one writes the summary
// while the others wait for its result.
//
// A lock has an owner token and an expiry: it is released only by its
// owner (a Release after expiry does not free another owner's lock), and a
// replica that dies holding one loses it when the expiry passes.
type Locker interface {
	// TryLock takes the lock named key for ttl if nobody holds it. It
	// returns the held lock, or nil and no error when another owner holds
	// it. Lock keys follow the same rules as store keys (see CheckKey).
	TryLock(ctx context.Context, key string, ttl time.Duration) (Lock, error)
}

// Lock is a held lock.
type Lock interface {
	// Extend moves the expiry to ttl from now. It fails with an error
	// wrapping ErrLockLost when the lock is no longer held by this owner.
	Extend(ctx context.Context, ttl time.Duration) error
	// Release frees the lock if this owner still holds it; releasing a
	// lock that expired (and may belong to another owner now) does
	// nothing.
	Release(ctx context.Context) error
}

// Pinger is implemented by stores that can be checked for readiness
// (/readyz): Ping fails when the store cannot serve requests now.
type Pinger interface {
	Ping(ctx context.Context) error
}
