package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/sharedtest"
	"github.com/compactkit/compact/session"
)

// agentAt returns a beforeAppend hook that, at the calls numbered in at
// (1 for the first append), appends a user message to the file the way an
// agent at work would, and the list of the ids it appended.
func agentAt(t *testing.T, at ...int) (func(string), *[]string) {
	calls := 0
	var ids []string
	return func(file string) {
		calls++
		if !slices.Contains(at, calls) {
			return
		}
		s, err := session.Open(file, session.Options{})
		if err != nil {
			t.Errorf("agent: %v", err)
			return
		}
		e, err := s.AppendMessage(context.Background(), compact.TextMessage(compact.RoleUser, fmt.Sprintf("typed meanwhile (%d)", calls)))
		if err != nil {
			t.Errorf("agent: %v", err)
			return
		}
		ids = append(ids, e.ID)
	}, &ids
}

// runWithHook runs the program with beforeAppend set.
func runWithHook(hook func(string), args ...string) result {
	var stdout, stderr bytes.Buffer
	a := &app{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, logger: slog.New(slog.DiscardHandler),
		getenv: func(string) string { return "" }, beforeAppend: hook}
	code := a.execute(context.Background(), args)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// stderrLines splits stderr into its lines.
func stderrLines(r result) []string {
	return strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
}

// When the agent appends between the load and the append, run warns,
// reads the file again and compacts what is there now: the compaction
// follows the agent's message. When the agent appends again, run gives up
// with one clear error line and writes nothing.
func TestRunFileChanged(t *testing.T) {
	t.Run("once", func(t *testing.T) {
		file := sharedtest.TempCopy(t, demoSession)
		hook, agent := agentAt(t, 1)
		r := runWithHook(hook, "run", "--json", file)
		lines := stderrLines(r)
		if r.code != 0 || len(lines) != 1 || !strings.HasPrefix(lines[0], "compact: warning: "+file+" changed while compacting") {
			t.Fatalf("exit %d, stderr %q; want success after one warning", r.code, r.stderr)
		}
		var rep runReport
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatal(err)
		}
		s := open(t, file)
		e := s.Entry(rep.EntryID)
		if e == nil || e.Kind != compact.KindCompaction || len(*agent) != 1 || e.ParentID != (*agent)[0] || s.Leaf() != e.ID {
			t.Fatalf("compaction %+v; want it the leaf, following the agent's entry %v", e, *agent)
		}
	})
	t.Run("twice", func(t *testing.T) {
		file := sharedtest.TempCopy(t, demoSession)
		before := readFile(t, file)
		hook, agent := agentAt(t, 1, 2)
		r := runWithHook(hook, "run", file)
		lines := stderrLines(r)
		if r.code != exitFailure || len(lines) != 2 || !strings.HasPrefix(lines[1], "compact: "+file+": the file changed while compacting, and again") ||
			!strings.Contains(lines[1], "nothing was written") {
			t.Fatalf("exit %d, stderr %q; want a warning and one error line", r.code, r.stderr)
		}
		s := open(t, file)
		n := len(s.Entries())
		if len(*agent) != 2 || n != len(open(t, sharedtest.TempCopy(t, demoSession)).Entries())+2 || s.Leaf() != (*agent)[1] {
			t.Errorf("the file holds %d entries, leaf %s; want only the agent's two more", n, s.Leaf())
		}
		if !bytes.HasPrefix(readFile(t, file), before) {
			t.Error("the existing lines changed")
		}
	})
}

// prune does the same. Passes appended before the change stay, and the
// warning names them.
func TestPruneFileChanged(t *testing.T) {
	args := []string{"prune", "--strategy", "mask,truncate", "--mask-turns", "1", "--min-free", "0"}
	t.Run("before the first pass", func(t *testing.T) {
		file := sharedtest.TempCopy(t, demoSession)
		hook, agent := agentAt(t, 1)
		r := runWithHook(hook, append(args, file)...)
		lines := stderrLines(r)
		if r.code != 0 || len(lines) != 1 || !strings.HasPrefix(lines[0], "compact: warning: "+file+" changed while pruning") ||
			strings.Contains(lines[0], "already appended") {
			t.Fatalf("exit %d, stderr %q; want success after one warning", r.code, r.stderr)
		}
		checkEditsFollow(t, file, (*agent)[0], 1)
	})
	t.Run("between two passes", func(t *testing.T) {
		file := sharedtest.TempCopy(t, demoSession)
		hook, agent := agentAt(t, 2)
		r := runWithHook(hook, append(args, file)...)
		lines := stderrLines(r)
		if r.code != 0 || len(lines) != 1 || !strings.Contains(lines[0], "changed while pruning") || !strings.Contains(lines[0], "already appended: ") ||
			!strings.Contains(lines[0], "(mask)") {
			t.Fatalf("exit %d, stderr %q; want success after a warning naming the mask pass", r.code, r.stderr)
		}
		s := open(t, file)
		m := s.Entry((*agent)[0])
		if m == nil || s.Entry(m.ParentID) == nil || s.Entry(m.ParentID).Kind != compact.KindContextEdit {
			t.Fatalf("the agent's entry %+v does not follow the mask pass", m)
		}
		checkEditsFollow(t, file, m.ID, 1)
	})
	t.Run("twice", func(t *testing.T) {
		file := sharedtest.TempCopy(t, demoSession)
		before := readFile(t, file)
		hook, _ := agentAt(t, 1, 2)
		r := runWithHook(hook, append(args, file)...)
		lines := stderrLines(r)
		if r.code != exitFailure || len(lines) != 2 || !strings.HasPrefix(lines[1], "compact: "+file+": the file changed while pruning, and again") ||
			!strings.Contains(lines[1], "nothing was written") {
			t.Fatalf("exit %d, stderr %q; want a warning and one error line", r.code, r.stderr)
		}
		for _, e := range open(t, file).Entries() {
			if e.Kind == compact.KindContextEdit {
				t.Errorf("a pass was appended: %s", e.ID)
			}
		}
		if !bytes.HasPrefix(readFile(t, file), before) {
			t.Error("the existing lines changed")
		}
	})
}

// checkEditsFollow checks that the file ends with the entry after and
// then at least min context edits, the first a child of after and each a
// child of the one before.
func checkEditsFollow(t *testing.T, file, after string, min int) {
	t.Helper()
	s := open(t, file)
	entries := s.Entries()
	i := s.Index(after)
	if i < 0 || len(entries)-1-i < min {
		t.Fatalf("%d entries follow %s, want at least %d", len(entries)-1-i, after, min)
	}
	parent := after
	for _, e := range entries[i+1:] {
		if e.Kind != compact.KindContextEdit || e.ParentID != parent {
			t.Fatalf("entry %s (%s) has parent %s, want a context edit following %s", e.ID, e.Kind, e.ParentID, parent)
		}
		parent = e.ID
	}
}

// migrate refuses a read-only file, as run and prune do, and leaves it.
func TestMigrateReadOnlyCLI(t *testing.T) {
	file := filepath.Join(t.TempDir(), "old.jsonl")
	writeFile(t, file, `{"type":"session","id":"x","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}`+"\n"+
		`{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}`+"\n")
	if err := os.Chmod(file, 0o444); err != nil {
		t.Fatal(err)
	}
	msg := newCLI(t).failsKeeping(file, "migrate", file)
	if !strings.HasPrefix(msg, "compact: "+file+": migrate: the file is read-only") {
		t.Errorf("stderr %q", msg)
	}
	if st, _ := os.Stat(file); st.Mode().Perm() != 0o444 {
		t.Errorf("mode %v", st.Mode().Perm())
	}
}

// The session package's sentinel reaches the command's error.
func TestChangedAgainWraps(t *testing.T) {
	if err := changedAgain("f", "pruning", nil); !errors.Is(err, session.ErrChanged) {
		t.Errorf("%v does not wrap session.ErrChanged", err)
	}
}
