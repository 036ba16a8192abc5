package session

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact"
)

// v1File writes a small version 1 session and returns its path.
func v1File(t *testing.T) string {
	t.Helper()
	return writeSession(t, v1Header, v1MsgLine("user", "a"), v1MsgLine("assistant", "b"))
}

// A file whose mode allows no writing is refused, by root too, as Append
// refuses it; it keeps its bytes and mode.
func TestMigrateReadOnly(t *testing.T) {
	p := v1File(t)
	if err := os.Chmod(p, 0o444); err != nil {
		t.Fatal(err)
	}
	before := readFile(t, p)
	s := mustOpen(t, p, Options{})
	rewrote, err := s.Migrate()
	if rewrote || !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("Migrate = %v, %v; want a refusal: read-only", rewrote, err)
	}
	if !bytes.Equal(readFile(t, p), before) {
		t.Error("the file changed")
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o444 {
		t.Errorf("mode %v, want 0444", st.Mode().Perm())
	}
	if names := dirNames(t, filepath.Dir(p)); len(names) != 1 {
		t.Errorf("files in the directory: %q", names)
	}
}

// Migrating through a symbolic link rewrites its target; the link stays a
// link and no copy takes its place.
func TestMigrateSymlink(t *testing.T) {
	target := v1File(t)
	link := filepath.Join(t.TempDir(), "link.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Skip("cannot make a symbolic link:", err)
	}
	s := mustOpen(t, link, Options{})
	if rewrote, err := s.Migrate(); !rewrote || err != nil {
		t.Fatalf("Migrate = %v, %v", rewrote, err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v, %v", st.Mode(), err)
	}
	if got := mustOpen(t, target, Options{}); got.NeedsMigration() {
		t.Error("the link's target was not migrated")
	}
	for _, dir := range []string{filepath.Dir(target), filepath.Dir(link)} {
		if names := dirNames(t, dir); len(names) != 1 {
			t.Errorf("files in %s: %q", dir, names)
		}
	}
}

// The migrated file keeps the mode, owner and group of the old one. Only
// root may give a file to another user, so the owner part runs as root.
func TestMigrateKeepsOwner(t *testing.T) {
	p := v1File(t)
	if err := os.Chmod(p, 0o640); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(p)
	uid, gid, ok := fileOwner(st)
	if !ok {
		t.Skip("no file owners on this system")
	}
	if os.Geteuid() == 0 {
		uid, gid = 4321, 8765
		if err := os.Chown(p, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	s := mustOpen(t, p, Options{})
	if rewrote, err := s.Migrate(); !rewrote || err != nil {
		t.Fatalf("Migrate = %v, %v", rewrote, err)
	}
	st, _ = os.Stat(p)
	u, g, _ := fileOwner(st)
	if u != uid || g != gid || st.Mode().Perm() != 0o640 {
		t.Errorf("owner %d:%d mode %v; want %d:%d 0640", u, g, st.Mode().Perm(), uid, gid)
	}
}

// Migrate removes the temporary files that killed runs left for this
// file, and nothing else: not one another process holds locked (a run
// under way), not those of another file, not look-alikes.
func TestMigrateRemovesStaleTemps(t *testing.T) {
	if !locking {
		t.Skip("no file locks on this system: stale files are left alone")
	}
	p := v1File(t)
	dir := filepath.Dir(p)
	names := map[string]bool{ // name: whether it must stay
		".s.jsonl.tmp-1234567":   false,
		".s.jsonl.tmp-99":        false,
		".s.jsonl.tmp-555":       true, // locked below
		".s.jsonl.tmp-12ab":      true,
		".s.jsonl.tmp-":          true,
		"s.jsonl.tmp-42":         true,
		".other.jsonl.tmp-42":    true,
		".s.jsonl.tmp-42.backup": true,
	}
	for name := range names {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	holdLock(t, filepath.Join(dir, ".s.jsonl.tmp-555"))
	s := mustOpen(t, p, Options{})
	if rewrote, err := s.Migrate(); !rewrote || err != nil {
		t.Fatalf("Migrate = %v, %v", rewrote, err)
	}
	var want []string
	for name, stays := range names {
		if stays {
			want = append(want, name)
		}
	}
	want = append(want, "s.jsonl")
	slices.Sort(want)
	if got := dirNames(t, dir); !slices.Equal(got, want) {
		t.Errorf("directory holds %q, want %q", got, want)
	}
}

// While Migrate writes the new file, another process writes to the old
// one without taking the lock (pi takes none): by appending, or by
// rewriting bytes in place, which keeps the size. Migrate sees the size
// or modification time change before its rename and refuses with
// ErrChanged; the other process's bytes stay and no temporary file is
// left.
func TestMigrateChangedWhileWriting(t *testing.T) {
	cases := []struct {
		name   string
		change func(t *testing.T, p string)
	}{
		{"append", func(t *testing.T, p string) {
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(v1MsgLine("user", "typed meanwhile") + "\n")
			f.Close()
		}},
		{"same size", func(t *testing.T, p string) {
			data := readFile(t, p)
			if err := os.WriteFile(p, bytes.Replace(data, []byte(`"text":"a"`), []byte(`"text":"A"`), 1), 0o644); err != nil {
				t.Fatal(err)
			}
			// A modification time the file surely did not have.
			old := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := v1File(t)
			s := mustOpen(t, p, Options{})
			var want []byte
			s.ops = &fakeOps{onSync: func(f *os.File) error {
				if f.Name() != p && want == nil {
					c.change(t, p)
					want = readFile(t, p)
				}
				return f.Sync()
			}}
			rewrote, err := s.Migrate()
			if rewrote || !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), "while it was being rewritten") {
				t.Fatalf("Migrate = %v, %v; want ErrChanged", rewrote, err)
			}
			if want == nil || !bytes.Equal(readFile(t, p), want) {
				t.Error("the other process's write was lost")
			}
			if names := dirNames(t, filepath.Dir(p)); len(names) != 1 {
				t.Errorf("files in the directory: %q", names)
			}
		})
	}
}

// An appender of this package that reaches the file while Migrate
// rewrites it waits for the lock, and then refuses with ErrChanged, since
// the file it opened has been replaced: its entry is neither lost in the
// old file nor written on a stale view.
func TestMigrateWhileAppending(t *testing.T) {
	if !locking {
		t.Skip("no file locks on this system")
	}
	p := v1File(t)
	s := mustOpen(t, p, Options{})
	other := mustOpen(t, p, Options{})
	reached := make(chan struct{})
	other.ops = signalLock(reached)
	done := make(chan error, 1)
	started := false
	s.ops = &fakeOps{onSync: func(f *os.File) error {
		if f.Name() != p && !started {
			started = true
			go func() {
				_, err := other.AppendMessage(bg, compact.TextMessage(compact.RoleUser, "appended during the migration"))
				done <- err
			}()
			<-reached // the appender has the old file open and waits for the lock
		}
		return f.Sync()
	}}
	if rewrote, err := s.Migrate(); !rewrote || err != nil {
		t.Fatalf("Migrate = %v, %v", rewrote, err)
	}
	if err := <-done; !errors.Is(err, ErrChanged) {
		t.Fatalf("the append during the migration: %v, want ErrChanged", err)
	}
	again := mustOpen(t, p, Options{})
	if again.NeedsMigration() || len(again.Entries()) != 2 {
		t.Errorf("after the migration: version %d, %d entries", again.Header().Version, len(again.Entries()))
	}
	// The migrated session appends normally.
	if _, err := s.AppendMessage(bg, compact.TextMessage(compact.RoleUser, "after")); err != nil {
		t.Fatal(err)
	}
	checkChain(t, p, 3)
}

// WriteFileAtomic puts the whole of data in place of the old file with
// mode 0644, leaves no temporary file, and names the directory, not a
// temporary file, when it cannot write there.
func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "page.html")
	if err := os.WriteFile(path, []byte("old content, longer than the new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if got := string(readFile(t, path)); got != "new" {
		t.Errorf("content %q, want %q", got, "new")
	}
	if fi, err := os.Stat(path); err != nil {
		t.Fatal(err)
	} else if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, tempPrefix(path)+"*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}

	missing := filepath.Join(dir, "no-such-dir", "page.html")
	err := WriteFileAtomic(missing, []byte("x"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("into a missing directory: %v, want fs.ErrNotExist", err)
	}
	if msg := err.Error(); !strings.Contains(msg, filepath.Dir(missing)) || strings.Contains(msg, ".tmp-") {
		t.Errorf("error %q: want the directory named and no temporary file", msg)
	}
}
