package session

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/sharedtest"
)

// BenchmarkLoad measures what every command starts with: open a fixture,
// migrate it in memory and build the context of its leaf.
func BenchmarkLoad(b *testing.B) {
	sharedtest.EachBenchFile(b, func(b *testing.B, p string) {
		st, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.SetBytes(st.Size())
		for b.Loop() {
			s, err := Open(p, Options{})
			if err != nil {
				b.Fatal(err)
			}
			path, err := s.PathTo(s.Leaf())
			if err != nil {
				b.Fatal(err)
			}
			if c := compact.BuildContext(path); len(c.Messages) == 0 {
				b.Fatal("empty context")
			}
		}
	})
}

// syntheticSession writes a version 3 session of n messages: turns of a
// user prompt, an assistant tool call, its result and an assistant answer
// with usage.
func syntheticSession(tb testing.TB, n int) string {
	tb.Helper()
	var sb strings.Builder
	sb.WriteString(v3Header + "\n")
	parent := "null"
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("%08x", i+1)
		var msg string
		switch i % 4 {
		case 0:
			msg = fmt.Sprintf(`{"role":"user","content":[{"type":"text","text":"Please look at file %d and fix the failing test; keep the change small."}],"timestamp":%d}`, i, 1735689600000+i)
		case 1:
			msg = fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":"Reading it."},{"type":"toolCall","id":"call_%d","name":"read","arguments":{"path":"pkg/file%d.go"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":%d,"output":40,"cacheRead":0,"cacheWrite":0,"totalTokens":%d,"cost":{"total":0}},"stopReason":"toolUse","timestamp":%d}`, i, i, 1000+i*50, 1040+i*50, 1735689600000+i)
		case 2:
			msg = fmt.Sprintf(`{"role":"toolResult","toolCallId":"call_%d","toolName":"read","content":[{"type":"text","text":"package pkg\n\nfunc F%d() int {\n\treturn %d\n}\n%s"}],"isError":false,"timestamp":%d}`, i-1, i, i, strings.Repeat("// filler line of source code\\n", 6), 1735689600000+i)
		case 3:
			msg = fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":"Fixed: F%d now returns the right value."}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":%d,"output":25,"cacheRead":0,"cacheWrite":0,"totalTokens":%d,"cost":{"total":0}},"stopReason":"stop","timestamp":%d}`, i, 1100+i*50, 1125+i*50, 1735689600000+i)
		}
		fmt.Fprintf(&sb, `{"type":"message","id":"%s","parentId":%s,"timestamp":"2025-01-01T00:00:00.000Z","message":%s}`+"\n", id, parent, msg)
		parent = `"` + id + `"`
	}
	p := filepath.Join(tb.TempDir(), "synthetic.jsonl")
	if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return p
}

// BenchmarkAppendMessage appends one message to a session file of 1,000
// and 10,000 messages and re-checks the trigger. "append+check" is the
// path an agent takes: the line is written and fsynced, and a
// compact.Meter updates the measure in constant time. "append" is the
// write alone (the fsync dominates), "measure" the full O(n) rebuild that
// the meter avoids.
func BenchmarkAppendMessage(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) { benchAppend(b, n) })
	}
}

func benchAppend(b *testing.B, n int) {
	src := syntheticSession(b, n)
	data, err := os.ReadFile(src)
	if err != nil {
		b.Fatal(err)
	}
	open := func(b *testing.B) *Session {
		p := filepath.Join(b.TempDir(), "s.jsonl")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
		s, err := Open(p, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if len(s.Entries()) != n {
			b.Fatalf("%d entries", len(s.Entries()))
		}
		return s
	}
	msg := func() *compact.Message {
		return compact.TextMessage(compact.RoleUser, "One more thing: run the tests again.")
	}
	// appendCheck is an agent's turn: append a message, add it to the
	// running meter and ask the policy whether to compact.
	appendCheck := func(b *testing.B, s *Session) {
		model := compact.ModelInfo{ID: "claude-sonnet-4-5", ContextWindow: 200000}
		meter := compact.NewMeter(s.Context())
		b.ReportAllocs()
		for b.Loop() {
			m := msg()
			if _, err := s.AppendMessage(bg, m); err != nil {
				b.Fatal(err)
			}
			meter.Add(m)
			if d := compact.Check(compact.Reserve{}, model, meter.Usage(), false); d.Tokens == 0 {
				b.Fatal("no tokens")
			}
		}
	}
	b.Run("append+check", func(b *testing.B) { appendCheck(b, open(b)) })
	// The same without the disk: a session read from a reader keeps its
	// appends in memory, which isolates the encoding and indexing work.
	b.Run("append+check/no-file", func(b *testing.B) {
		s, err := Read(bytes.NewReader(data), "mem", Options{})
		if err != nil {
			b.Fatal(err)
		}
		appendCheck(b, s)
	})
	b.Run("append", func(b *testing.B) {
		s := open(b)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.AppendMessage(bg, msg()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("measure", func(b *testing.B) {
		s := open(b)
		b.ReportAllocs()
		for b.Loop() {
			if u := compact.Measure(s.Context()); u.Tokens == 0 {
				b.Fatal("no tokens")
			}
		}
	})
}

// BenchmarkParse is BenchmarkLoad without the disk read and the context:
// parse and migrate a session already in memory, the part pi's
// parseSessionEntries + migrateSessionEntries do. It parses as Read does,
// which unescapes most strings into the buffer it parses: each iteration
// first copies the file's bytes into one buffer (the same each time, so
// that the copy allocates nothing), and that copy is timed too.
func BenchmarkParse(b *testing.B) {
	var buf []byte
	benchParse(b, func(data []byte, name string) error {
		if len(buf) != len(data) {
			buf = make([]byte, len(data))
		}
		copy(buf, data)
		_, err := parse(buf, name, Options{})
		return err
	})
}

// BenchmarkParseOpen is BenchmarkParse as Open parses (parseOwned:
// every escaped string unescaped into the buffer, the lines so changed
// read back from the file when written out). Each iteration first copies
// the file's bytes into a fresh buffer, which stands for the read, and
// that copy is timed too.
func BenchmarkParseOpen(b *testing.B) {
	benchParse(b, func(data []byte, name string) error {
		_, err := parseOwned(bytes.Clone(data), name, Options{})
		return err
	})
}

// benchParse times parse on the bytes of each bench file.
func benchParse(b *testing.B, parse func(data []byte, name string) error) {
	for _, p := range sharedtest.BenchFiles(b) {
		name := filepath.Base(p)
		b.Run(name, func(b *testing.B) {
			data, err := os.ReadFile(p)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if err := parse(data, name); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
