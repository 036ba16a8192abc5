package session

import (
	"context"
	"os"
	"testing"
)

// fakeOps replaces some of the file calls of a session's writes; the nil
// ones are the real calls.
type fakeOps struct {
	osOps
	onLock     func(ctx context.Context, f *os.File) error
	onWrite    func(f *os.File, b []byte) (int, error)
	onSync     func(f *os.File) error
	onTruncate func(f *os.File, size int64) error
	onCreate   func(dir, pattern string) (*os.File, error)
}

func (o *fakeOps) lock(ctx context.Context, f *os.File) error {
	if o.onLock != nil {
		return o.onLock(ctx, f)
	}
	return o.osOps.lock(ctx, f)
}

func (o *fakeOps) write(f *os.File, b []byte) (int, error) {
	if o.onWrite != nil {
		return o.onWrite(f, b)
	}
	return o.osOps.write(f, b)
}

func (o *fakeOps) sync(f *os.File) error {
	if o.onSync != nil {
		return o.onSync(f)
	}
	return o.osOps.sync(f)
}

func (o *fakeOps) truncate(f *os.File, size int64) error {
	if o.onTruncate != nil {
		return o.onTruncate(f, size)
	}
	return o.osOps.truncate(f, size)
}

func (o *fakeOps) createTemp(dir, pattern string) (*os.File, error) {
	if o.onCreate != nil {
		return o.onCreate(dir, pattern)
	}
	return o.osOps.createTemp(dir, pattern)
}

// dirNames lists the names in dir.
func dirNames(tb testing.TB, dir string) []string {
	tb.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}
