//go:build !plan9

package session

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/compactkit/compact"
)

// diskFull writes the first half of b for real, then fails the way a full
// disk does.
func diskFull(f *os.File, b []byte) (int, error) {
	n, _ := f.Write(b[:len(b)/2])
	return n, &fs.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
}

// failOnce returns a sync call that fails the first time only.
func failOnce(err error) func(*os.File) error {
	failed := false
	return func(f *os.File) error {
		if failed {
			return f.Sync()
		}
		failed = true
		return err
	}
}

// A write that fails part way (a full disk) or whose fsync fails is
// undone: the file is truncated back to its size before the append, the
// error says so and names the cause, nothing is recorded, and the next
// append writes a clean line. When even the truncation fails the error
// says that the file may end with a partial line, and the session refuses
// further appends until the file is read again, which reports the partial
// line as torn and appends after it on a new line.
func TestAppendFailureUndone(t *testing.T) {
	eio := &fs.PathError{Op: "sync", Path: "x", Err: syscall.EIO}
	cases := []struct {
		name string
		ops  *fakeOps
		is   error
		want string
	}{
		{"short write, disk full", &fakeOps{onWrite: diskFull}, syscall.ENOSPC, "no space left on device; the file was truncated back to its"},
		{"short write without error", &fakeOps{onWrite: func(f *os.File, b []byte) (int, error) { return f.Write(b[:10]) }},
			nil, "short write; the file was truncated back"},
		{"fsync fails", &fakeOps{onSync: failOnce(eio)}, syscall.EIO, "fsync"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := writeSession(t, v3Header, msgLine("00000001", "", "user", "one"))
			before := readFile(t, p)
			s := mustOpen(t, p, Options{})
			s.ops = c.ops
			_, err := s.AppendMessage(bg, compact.TextMessage(compact.RoleAssistant, strings.Repeat("long answer ", 1000)))
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "unchanged") {
				t.Fatalf("Append: %v; want an error with %q saying the file is unchanged", err, c.want)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("error %v does not wrap %v", err, c.is)
			}
			if !bytes.Equal(readFile(t, p), before) {
				t.Fatalf("the failed append left %d bytes behind", len(readFile(t, p))-len(before))
			}
			if len(s.Entries()) != 1 {
				t.Fatal("the failed append was recorded")
			}
			s.ops = nil
			e, err := s.AppendMessage(bg, compact.TextMessage(compact.RoleAssistant, "short answer"))
			if err != nil {
				t.Fatalf("append after the failure: %v", err)
			}
			again := mustOpen(t, p, Options{})
			if len(again.Warnings()) != 0 || len(again.Entries()) != 2 || again.Entry(e.ID).ParentID != "00000001" {
				t.Errorf("re-read: %d entries, warnings %q", len(again.Entries()), again.Warnings())
			}
		})
	}

	t.Run("truncate fails too", func(t *testing.T) {
		p := writeSession(t, v3Header, msgLine("00000001", "", "user", "one"))
		s := mustOpen(t, p, Options{})
		s.ops = &fakeOps{onWrite: diskFull, onTruncate: func(*os.File, int64) error {
			return &fs.PathError{Op: "truncate", Path: "x", Err: syscall.EIO}
		}}
		_, err := s.AppendMessage(bg, compact.TextMessage(compact.RoleAssistant, strings.Repeat("long answer ", 1000)))
		if err == nil || !errors.Is(err, syscall.ENOSPC) || !errors.Is(err, ErrPartialLine) || !strings.Contains(err.Error(), "truncating the file back") ||
			strings.Contains(err.Error(), "unchanged") {
			t.Fatalf("Append: %v; want the write's and the truncation's failures, and no claim that the file is unchanged", err)
		}
		s.ops = nil
		_, err = s.AppendMessage(bg, compact.TextMessage(compact.RoleAssistant, "short"))
		if !errors.Is(err, ErrChanged) {
			t.Fatalf("append after an undone failure that could not be undone: %v, want ErrChanged", err)
		}
		again := mustOpen(t, p, Options{})
		if again.TornLine() != 3 {
			t.Fatalf("re-read: torn line %d, want 3", again.TornLine())
		}
		if _, err := again.AppendMessage(bg, compact.TextMessage(compact.RoleAssistant, "strict")); !errors.Is(err, ErrTornEnd) {
			t.Fatalf("strict append after the partial line: %v, want ErrTornEnd", err)
		}
		again = mustOpen(t, p, Options{Lenient: true})
		if again.TornLine() != 3 {
			t.Fatalf("re-read: torn line %d, want 3", again.TornLine())
		}
		e, err := again.AppendMessage(bg, compact.TextMessage(compact.RoleAssistant, "after the re-read"))
		if err != nil {
			t.Fatal(err)
		}
		last := mustOpen(t, p, Options{Lenient: true})
		if got := last.Entry(e.ID); got == nil || got.ParentID != "00000001" || last.TornLine() != 3 {
			t.Errorf("the append after the partial line read back as %+v (torn line %d)", got, last.TornLine())
		}
	})
}

// When a writer that takes no lock appends right after a partial write,
// truncating would cut its line off: the append leaves the file alone and
// says that it may end with a partial line.
func TestAppendFailureNotUndoneOverOthers(t *testing.T) {
	p := writeSession(t, v3Header, msgLine("00000001", "", "user", "one"))
	s := mustOpen(t, p, Options{})
	other := msgLine("00000002", "00000001", "assistant", "from pi") + "\n"
	s.ops = &fakeOps{onWrite: func(f *os.File, b []byte) (int, error) {
		n, err := diskFull(f, b)
		g, _ := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		g.WriteString(other)
		g.Close()
		return n, err
	}}
	_, err := s.AppendMessage(bg, compact.TextMessage(compact.RoleAssistant, strings.Repeat("long answer ", 100)))
	if !errors.Is(err, syscall.ENOSPC) || !errors.Is(err, ErrPartialLine) || !strings.Contains(err.Error(), "another process wrote after the line") {
		t.Fatalf("Append: %v; want ENOSPC and ErrPartialLine, naming the other writer", err)
	}
	if !strings.HasSuffix(string(readFile(t, p)), other) {
		t.Error("the other process's line was cut off")
	}
}

// Migrate's failures name the file or its directory and the operation,
// never the temporary file, keep the cause for errors.Is, leave the file
// as it was and leave no temporary file behind.
func TestMigrateFailureMessages(t *testing.T) {
	cases := []struct {
		name string
		ops  func(t *testing.T) *fakeOps
		is   error
		want string
	}{
		{"directory refuses new files", func(t *testing.T) *fakeOps {
			return &fakeOps{onCreate: func(dir, pattern string) (*os.File, error) {
				// What os.CreateTemp reports: the name it tried.
				name := filepath.Join(dir, strings.Replace(pattern, "*", "123456789", 1))
				return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.EACCES}
			}}
		}, fs.ErrPermission, "creating a new file in the directory "},
		{"disk full", func(t *testing.T) *fakeOps { return &fakeOps{onWrite: diskFull} }, syscall.ENOSPC, "writing the new file in "},
		{"fsync fails", func(t *testing.T) *fakeOps {
			return &fakeOps{onSync: func(f *os.File) error { return &fs.PathError{Op: "sync", Path: f.Name(), Err: syscall.EIO} }}
		}, syscall.EIO, "syncing the new file in "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := writeSession(t, v1Header, v1MsgLine("user", "a"), v1MsgLine("assistant", "b"))
			before := readFile(t, p)
			s := mustOpen(t, p, Options{})
			s.ops = c.ops(t)
			rewrote, err := s.Migrate()
			if err == nil || rewrote {
				t.Fatalf("Migrate = %v, %v; want a failure", rewrote, err)
			}
			msg := err.Error()
			dir := filepath.Dir(p)
			if !strings.Contains(msg, c.want+dir) || !strings.HasPrefix(msg, p+": migrate: ") || strings.Contains(msg, ".tmp-") {
				t.Errorf("error %q: want it to start with the file, name the operation %q and the directory %s, and no temporary file", msg, c.want, dir)
			}
			if !errors.Is(err, c.is) {
				t.Errorf("error %v does not wrap %v", err, c.is)
			}
			if !bytes.Equal(readFile(t, p), before) {
				t.Error("the failed Migrate changed the file")
			}
			if names := dirNames(t, dir); len(names) != 1 {
				t.Errorf("files left in the directory: %q", names)
			}
		})
	}
}

// A directory the process may not write to is named in the error of
// Migrate and Fork, not the temporary file they tried to create. Root
// writes anyway, so this runs for other users only; the injected case
// above covers root.
func TestUnwritableDirectory(t *testing.T) {
	p := writeSession(t, v1Header, v1MsgLine("user", "a"))
	dir := filepath.Dir(p)
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	if f, err := os.CreateTemp(dir, "probe"); err == nil {
		f.Close()
		os.Remove(f.Name())
		t.Skip("the directory is writable despite its mode (running as root?); the injected failure in TestMigrateFailureMessages covers this")
	}
	s := mustOpen(t, p, Options{})
	_, err := s.Migrate()
	if err == nil || !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "directory "+dir) || strings.Contains(err.Error(), ".tmp-") {
		t.Errorf("Migrate: %v; want permission denied naming the directory %s", err, dir)
	}
	out := filepath.Join(dir, "fork.jsonl")
	_, err = s.Fork(s.Leaf(), out)
	if err == nil || !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "directory "+dir) || strings.Contains(err.Error(), ".tmp-") {
		t.Errorf("Fork: %v; want permission denied naming the directory %s", err, dir)
	}
}
