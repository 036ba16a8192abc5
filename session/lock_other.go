//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package session

import "os"

// locking reports whether writers lock the session file on this system:
// not here, for want of flock. Writers rely on the checks made before
// writing, and Migrate leaves stale temporary files alone, since it cannot
// tell whether another process still writes them.
const locking = false

// tryLock does nothing on systems without flock.
func tryLock(*os.File) (bool, error) { return true, nil }

// fileOwner is unknown on systems without Unix owners.
func fileOwner(os.FileInfo) (uid, gid int, ok bool) { return 0, 0, false }
