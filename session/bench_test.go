package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

// BenchmarkLoad measures what every command starts with: open a fixture,
// migrate it in memory and build the context of its leaf.
func BenchmarkLoad(b *testing.B) {
	for _, name := range fixtures {
		b.Run(name, func(b *testing.B) {
			p := fixture(b, name)
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

// BenchmarkAppendMessage appends one message to a 10,000-message session
// file (write and fsync) and measures the context again, as an agent does
// after every message. The sub-benchmarks split the two costs.
func BenchmarkAppendMessage(b *testing.B) {
	const n = 10000
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
	b.Run("append+measure", func(b *testing.B) {
		s := open(b)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.AppendMessage(bg, msg()); err != nil {
				b.Fatal(err)
			}
			if u := compact.Measure(s.Context()); u.Tokens == 0 {
				b.Fatal("no tokens")
			}
		}
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
