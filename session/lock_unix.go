//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package session

import (
	"errors"
	"os"
	"syscall"
)

// locking reports whether writers lock the session file on this system.
const locking = true

// tryLock takes the exclusive flock on f without waiting. It reports
// false when another open file holds it. On a file system without flock
// support it reports true: writers then go unlocked, as before locking
// existed, and rely on the checks made before writing.
func tryLock(f *os.File) (bool, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	var lerr error
	if err := rc.Control(func(fd uintptr) {
		for {
			lerr = syscall.Flock(int(fd), syscall.LOCK_EX|syscall.LOCK_NB)
			if lerr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return false, err
	}
	switch {
	case lerr == nil:
		return true, nil
	case errors.Is(lerr, syscall.EWOULDBLOCK):
		return false, nil
	case errors.Is(lerr, syscall.ENOLCK), errors.Is(lerr, syscall.EOPNOTSUPP):
		return true, nil
	}
	return false, os.NewSyscallError("flock", lerr)
}

// fileOwner returns the user and group owning a file, from its stat.
func fileOwner(fi os.FileInfo) (uid, gid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return int(st.Uid), int(st.Gid), true
}
