package session

import (
	"context"
	"errors"
	"io/fs"
	"os"
)

// fileOps are the calls by which the writers of this package change
// files. Session.ops is nil in normal use, meaning osOps; tests set it to
// inject faults (a short write on a full disk, a failing truncate, a
// directory that refuses new files) that a real file system produces
// only with effort.
type fileOps interface {
	lock(ctx context.Context, f *os.File) error
	write(f *os.File, b []byte) (int, error)
	sync(f *os.File) error
	truncate(f *os.File, size int64) error
	createTemp(dir, pattern string) (*os.File, error)
}

// osOps are the real calls.
type osOps struct{}

func (osOps) lock(ctx context.Context, f *os.File) error       { return lockFile(ctx, f) }
func (osOps) write(f *os.File, b []byte) (int, error)          { return f.Write(b) }
func (osOps) sync(f *os.File) error                            { return f.Sync() }
func (osOps) truncate(f *os.File, size int64) error            { return f.Truncate(size) }
func (osOps) createTemp(dir, pattern string) (*os.File, error) { return os.CreateTemp(dir, pattern) }

// fileOps returns the calls to use: the injected ones or the real ones.
func (s *Session) fileOps() fileOps {
	if s.ops != nil {
		return s.ops
	}
	return osOps{}
}

// bare returns the cause of err without the file name an *fs.PathError or
// *os.LinkError adds, so that the name of a temporary file never reaches
// an error message; callers name the file or directory themselves.
// errors.Is still finds the cause (fs.ErrPermission, syscall.ENOSPC, ...).
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
