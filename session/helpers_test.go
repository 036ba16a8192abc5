package session

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/sharedtest"
)

// The two real pi session files the tests use (both version 1).
const (
	largeSession     = "large-session.jsonl"
	beforeCompaction = "before-compaction.jsonl"
)

// fixture returns the path of a read-only fixture; never write to it.
func fixture(tb testing.TB, name string) string {
	tb.Helper()
	return sharedtest.PiSession(tb, name)
}

// copyFixture copies a fixture into a fresh temporary directory, writable.
func copyFixture(tb testing.TB, name string) string {
	tb.Helper()
	return sharedtest.TempCopy(tb, fixture(tb, name))
}

// writeSession writes lines (each followed by a newline) to a new file in
// a temporary directory and returns its path.
func writeSession(tb testing.TB, lines ...string) string {
	tb.Helper()
	return writeRaw(tb, strings.Join(lines, "\n")+"\n")
}

// writeRaw writes data as it is to a new file in a temporary directory.
func writeRaw(tb testing.TB, data string) string {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), "s.jsonl")
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		tb.Fatal(err)
	}
	return p
}

func mustOpen(tb testing.TB, path string, opts Options) *Session {
	tb.Helper()
	s, err := Open(path, opts)
	if err != nil {
		tb.Fatalf("Open(%s): %v", path, err)
	}
	return s
}

func readFile(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// fileLines splits a file into lines, without the final empty one.
func fileLines(tb testing.TB, path string) []string {
	tb.Helper()
	return strings.Split(strings.TrimSuffix(string(readFile(tb, path)), "\n"), "\n")
}

// v3Header is a version 3 session header line.
const v3Header = `{"type":"session","version":3,"id":"11111111-2222-4333-8444-555555555555","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/tmp/project"}`

// v1Header is a version 1 session header line.
const v1Header = `{"type":"session","id":"aaaaaaaa-2222-4333-8444-555555555555","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/tmp/project","provider":"anthropic","modelId":"claude-sonnet-4-5","thinkingLevel":"off"}`

// msgLine returns a version 3 message entry line. parent "" writes null.
func msgLine(id, parent, role, text string) string {
	p := "null"
	if parent != "" {
		p = `"` + parent + `"`
	}
	return `{"type":"message","id":"` + id + `","parentId":` + p + `,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"` + role + `","content":[{"type":"text","text":"` + text + `"}],"timestamp":1735689601000}}`
}

// v1MsgLine returns a version 1 message entry line (no id, no parent).
func v1MsgLine(role, text string) string {
	return `{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"` + role + `","content":[{"type":"text","text":"` + text + `"}],"timestamp":1735689601000}}`
}

// ids returns the ids of entries.
func ids(entries []*compact.Entry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.ID
	}
	return out
}

// snapshot is what must survive a migration: every entry's id, parent,
// kind and kept id, and the context at the leaf.
type snapshot struct {
	IDs, Parents, Kinds, FirstKept []string
	ContextIDs                     []string
	Context                        []*compact.Message
	Model, Thinking                string
}

func takeSnapshot(tb testing.TB, s *Session) snapshot {
	tb.Helper()
	var sn snapshot
	for _, e := range s.Entries() {
		sn.IDs = append(sn.IDs, e.ID)
		sn.Parents = append(sn.Parents, e.ParentID)
		sn.Kinds = append(sn.Kinds, string(e.Kind))
		if e.Compaction != nil {
			sn.FirstKept = append(sn.FirstKept, e.ID+"->"+e.Compaction.FirstKeptID)
		}
	}
	path, err := s.PathTo(s.Leaf())
	if err != nil {
		tb.Fatal(err)
	}
	c := compact.BuildContext(path)
	sn.ContextIDs, sn.Context, sn.Model, sn.Thinking = c.EntryIDs, c.Messages, c.Model, c.ThinkingLevel
	return sn
}

// canonical decodes a JSON object keeping numbers exact.
func canonical(tb testing.TB, line []byte) map[string]any {
	tb.Helper()
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		tb.Fatalf("not a JSON object: %v\n%.200s", err, line)
	}
	return m
}

var bg = context.Background()

// canonicalNumber is how canonical decodes the number s.
func canonicalNumber(s string) any { return json.Number(s) }
