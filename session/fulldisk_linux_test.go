//go:build linux

package session

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/compactkit/compact"
)

// smallDisk mounts a tmpfs of the given size (a mount option, "64k") on a
// new temporary directory and returns the directory. The test is skipped
// where mounting is not permitted.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a %s tmpfs to fill up (this needs root or CAP_SYS_ADMIN and a system that allows mounting): %v", size, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmounting %s: %v", dir, err)
		}
	})
	return dir
}

// On a disk that really fills up, an append that does not fit fails with
// ENOSPC and leaves the file as it was, without the partial line the
// kernel accepted; a smaller append then fits and the file reads back as
// one chain without warnings.
func TestAppendDiskFull(t *testing.T) {
	p := filepath.Join(smallDisk(t, "64k"), "s.jsonl")
	data := v3Header + "\n" + msgLine("00000001", "", "user", strings.Repeat("x", 36_000)) + "\n"
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	s := mustOpen(t, p, Options{})
	_, err := s.AppendMessage(bg, compact.TextMessage(compact.RoleAssistant, strings.Repeat("y", 48_000)))
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "unchanged") {
		t.Fatalf("Append of 48 KB to a 64 KB disk: %v, want ENOSPC and the file unchanged", err)
	}
	if got := readFile(t, p); !bytes.Equal(got, []byte(data)) {
		t.Fatalf("the failed append left %d bytes behind", len(got)-len(data))
	}
	if _, err := s.AppendMessage(bg, compact.TextMessage(compact.RoleAssistant, "short")); err != nil {
		t.Fatalf("a short append after the failure: %v", err)
	}
	checkChain(t, p, 2)
}

// On a disk without room for the new file, Migrate fails with ENOSPC
// naming the directory, leaves the file as it was and removes its partial
// temporary file.
func TestMigrateDiskFull(t *testing.T) {
	dir := smallDisk(t, "64k")
	p := filepath.Join(dir, "s.jsonl")
	data := v1Header + "\n" + v1MsgLine("user", strings.Repeat("x", 40_000)) + "\n"
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	s := mustOpen(t, p, Options{})
	rewrote, err := s.Migrate()
	if rewrote || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "in "+dir) || strings.Contains(err.Error(), ".tmp-") {
		t.Fatalf("Migrate on a full disk = %v, %v; want ENOSPC naming the directory %s and no temporary file", rewrote, err, dir)
	}
	if !bytes.Equal(readFile(t, p), []byte(data)) {
		t.Error("the file changed")
	}
	if names := dirNames(t, dir); len(names) != 1 {
		t.Errorf("files on the disk: %q", names)
	}
}
