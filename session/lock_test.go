package session

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/compactkit/compact"
)

// checkChain reads the file again and checks that it is one valid chain of
// want entries: no warnings, no blank line, every entry the child of the
// one before it.
func checkChain(tb testing.TB, path string, want int) {
	tb.Helper()
	data := readFile(tb, path)
	if !strings.HasSuffix(string(data), "\n") || strings.Contains(string(data), "\n\n") {
		tb.Fatal("the file has a blank line or lacks its final newline")
	}
	s := mustOpen(tb, path, Options{})
	if len(s.Warnings()) != 0 {
		tb.Fatalf("warnings: %q", s.Warnings())
	}
	entries := s.Entries()
	if len(entries) != want {
		tb.Fatalf("%d entries, want %d", len(entries), want)
	}
	for i := 1; i < len(entries); i++ {
		if entries[i].ParentID != entries[i-1].ID {
			tb.Fatalf("entry %d (%s) has parent %q, not the entry before it (%s): a branch", i, entries[i].ID, entries[i].ParentID, entries[i-1].ID)
		}
	}
}

// raceOps widens the window between an append's checks and its write, so
// that a race lost without the lock is lost every time: every append
// signals when it reaches the lock (before taking it), and the write
// waits for release. With the lock only its holder reaches the write,
// and the others wait at the lock; without it, all of them pass the
// checks before any writes.
func raceOps(reached func(), release func()) *fakeOps {
	return &fakeOps{
		onLock: func(ctx context.Context, f *os.File) error {
			reached()
			return lockFile(ctx, f)
		},
		onWrite: func(f *os.File, b []byte) (int, error) {
			release()
			return f.Write(b)
		},
	}
}

// Sessions read from the same state and appending at once, each through
// its own descriptor: in every round exactly one append succeeds, the
// others fail with ErrChanged, and the file stays one chain.
func TestConcurrentAppendsOneWins(t *testing.T) {
	if !locking {
		t.Skip("no file locks on this system")
	}
	p := writeSession(t, v3Header, msgLine("00000001", "", "user", "one"))
	const writers, rounds = 8, 10
	for r := range rounds {
		var atLock sync.WaitGroup
		atLock.Add(writers)
		sessions := make([]*Session, writers)
		for i := range sessions {
			sessions[i] = mustOpen(t, p, Options{})
			sessions[i].ops = raceOps(atLock.Done, atLock.Wait)
		}
		errs := make([]error, writers)
		var wg sync.WaitGroup
		for i, s := range sessions {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = s.AppendMessage(bg, compact.TextMessage(compact.RoleUser, fmt.Sprintf("round %d writer %d", r, i)))
			}()
		}
		wg.Wait()
		wins := 0
		for _, err := range errs {
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, ErrChanged):
				t.Fatalf("round %d: append failed with %v, want ErrChanged", r, err)
			}
		}
		if wins != 1 {
			t.Fatalf("round %d: %d appends succeeded, want exactly 1", r, wins)
		}
	}
	checkChain(t, p, 1+rounds)
}

// appendChildEnv names the file a child process of
// TestConcurrentAppendProcesses appends to.
const appendChildEnv = "COMPACT_TEST_APPEND_CHILD"

// TestAppendChild is the child of TestConcurrentAppendProcesses. It reads
// the session and says "ready"; at the line "go" it appends one entry,
// saying "locking" when it reaches the lock and waiting for the line
// "write" before it writes; then it prints "won", "changed" or the error.
// It does nothing in a normal test run.
func TestAppendChild(t *testing.T) {
	path := os.Getenv(appendChildEnv)
	if path == "" {
		t.Skip("runs only as the child of TestConcurrentAppendProcesses")
	}
	in := bufio.NewReader(os.Stdin)
	expect := func(want string) {
		if line, err := in.ReadString('\n'); line != want+"\n" {
			fmt.Printf("error: read %q (%v), want %q\n", line, err, want)
			os.Exit(1)
		}
	}
	s, err := Open(path, Options{})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	s.ops = raceOps(func() { fmt.Println("locking") }, func() { expect("write") })
	fmt.Println("ready")
	expect("go")
	_, err = s.AppendMessage(bg, compact.TextMessage(compact.RoleUser, fmt.Sprintf("from process %d", os.Getpid())))
	switch {
	case err == nil:
		fmt.Println("won")
	case errors.Is(err, ErrChanged):
		fmt.Println("changed")
	default:
		fmt.Println("error:", err)
	}
}

// The same race between processes, as two compact commands started
// together run it: the test binary is started again as several children
// that read the file, then append together. Exactly one wins per round
// and the file stays one chain.
func TestConcurrentAppendProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	if !locking {
		t.Skip("no file locks on this system")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip("cannot find the test binary:", err)
	}
	p := writeSession(t, v3Header, msgLine("00000001", "", "user", "one"))
	const children, rounds = 4, 3
	type child struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
		out   *bufio.Reader
	}
	say := func(kids []child, line string) {
		for _, k := range kids {
			io.WriteString(k.stdin, line+"\n")
		}
	}
	hear := func(kids []child, want string) {
		for _, k := range kids {
			if line, err := k.out.ReadString('\n'); line != want+"\n" {
				t.Fatalf("child said %q (%v), want %q", line, err, want)
			}
		}
	}
	for r := range rounds {
		var kids []child
		for range children {
			cmd := exec.Command(exe, "-test.run=^TestAppendChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), appendChildEnv+"="+p)
			cmd.Stderr = os.Stderr
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			kids = append(kids, child{cmd, stdin, bufio.NewReader(stdout)})
		}
		hear(kids, "ready")
		say(kids, "go")
		hear(kids, "locking")
		say(kids, "write")
		outcomes := map[string]int{}
		for _, k := range kids {
			line, _ := k.out.ReadString('\n')
			outcomes[strings.TrimSpace(line)]++
			k.stdin.Close()
			io.Copy(io.Discard, k.out)
			if err := k.cmd.Wait(); err != nil {
				t.Errorf("child: %v", err)
			}
		}
		if outcomes["won"] != 1 || outcomes["changed"] != children-1 {
			t.Fatalf("round %d: outcomes %v, want 1 won and %d changed", r, outcomes, children-1)
		}
	}
	checkChain(t, p, 1+rounds)
}

// holdLock takes the write lock on path through a descriptor of its own,
// as another writer would, and returns that descriptor; closing it
// releases the lock.
func holdLock(t *testing.T, path string) *os.File {
	t.Helper()
	if !locking {
		t.Skip("no file locks on this system")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if ok, err := tryLock(f); !ok || err != nil {
		t.Fatalf("taking the lock: %v, %v", ok, err)
	}
	return f
}

// signalLock returns file calls whose lock first closes reached, then
// waits for the real lock.
func signalLock(reached chan struct{}) *fakeOps {
	return &fakeOps{onLock: func(ctx context.Context, f *os.File) error {
		close(reached)
		return lockFile(ctx, f)
	}}
}

// An append waits while another writer holds the lock, until its context
// is done, and then gives up without writing.
func TestAppendWaitsForLock(t *testing.T) {
	p := writeSession(t, v3Header, msgLine("00000001", "", "user", "one"))
	holdLock(t, p)
	s := mustOpen(t, p, Options{})
	reached := make(chan struct{})
	s.ops = signalLock(reached)
	ctx, cancel := context.WithCancel(bg)
	done := make(chan error)
	go func() {
		_, err := s.AppendMessage(ctx, compact.TextMessage(compact.RoleAssistant, "reply"))
		done <- err
	}()
	<-reached
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "lock") {
		t.Fatalf("Append: %v, want the cancelled wait for the lock", err)
	}
	checkChain(t, p, 1)
}

// An append that waited for the lock while another writer put a new file
// of the same size in place of the session file (as Migrate's rename
// does) refuses: its descriptor points at the old file, which no longer
// has a name, so the entry would be lost.
func TestAppendToReplacedFile(t *testing.T) {
	p := writeSession(t, v3Header, msgLine("00000001", "", "user", "one"))
	holder := holdLock(t, p)
	s := mustOpen(t, p, Options{})
	reached := make(chan struct{})
	s.ops = signalLock(reached)
	done := make(chan error)
	go func() {
		_, err := s.AppendMessage(bg, compact.TextMessage(compact.RoleAssistant, "reply"))
		done <- err
	}()
	<-reached
	other := strings.Replace(string(readFile(t, p)), `"one"`, `"two"`, 1)
	tmp := p + ".new"
	if err := os.WriteFile(tmp, []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	holder.Close()
	if err := <-done; !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), "another file was put in its place") {
		t.Fatalf("Append: %v, want ErrChanged naming the replacement", err)
	}
	if string(readFile(t, p)) != other {
		t.Error("the refused append wrote to the new file")
	}
}

// A session file whose mode allows no writing is refused by Append, by
// anyone, root included, and left as it is.
func TestAppendReadOnly(t *testing.T) {
	p := writeSession(t, v3Header, msgLine("00000001", "", "user", "one"))
	if err := os.Chmod(p, 0o444); err != nil {
		t.Fatal(err)
	}
	before := readFile(t, p)
	s := mustOpen(t, p, Options{})
	_, err := s.AppendMessage(bg, compact.TextMessage(compact.RoleAssistant, "reply"))
	if !errors.Is(err, os.ErrPermission) {
		t.Fatalf("Append to a read-only file: %v, want a permission error", err)
	}
	if string(readFile(t, p)) != string(before) {
		t.Error("the refused append wrote to the file")
	}
}
