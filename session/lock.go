package session

import (
	"context"
	"fmt"
	"os"
	"time"
)

// Writers of this package exclude each other with an advisory lock on the
// session file (flock on the systems that have it, see lock_unix.go):
// Append holds it from the size check to the fsync of its line, Migrate
// from its checks to the rename of the rewritten file. Each check is made
// again once the lock is held, so that of two sessions read from the
// same state only the first to write succeeds; the other gets ErrChanged.
//
// The lock is advisory: it binds only processes that take it. pi takes
// none, so an agent appending while compact writes is detected by the
// size and identity checks only, not prevented.
//
// The lock belongs to an open file description, so it is released when
// the file is closed, also when the process dies.

// lockPollMin and lockPollMax bound the wait between two attempts to take
// a lock held by another writer. Writers hold it for one write and an
// fsync, or for the rewrite of one file, so waits are short.
const (
	lockPollMin = time.Millisecond
	lockPollMax = 50 * time.Millisecond
)

// lockFile takes the exclusive lock on f, waiting while another writer
// holds it, until ctx is done. Closing f releases the lock. On systems
// without flock it does nothing.
func lockFile(ctx context.Context, f *os.File) error {
	wait := lockPollMin
	for {
		ok, err := tryLock(f)
		if err != nil {
			return fmt.Errorf("taking the write lock: %w", bare(err))
		}
		if ok {
			return nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("waiting for the write lock held by another process: %w", ctx.Err())
		case <-t.C:
		}
		if wait *= 2; wait > lockPollMax {
			wait = lockPollMax
		}
	}
}
