package report

import (
	"io"
	"testing"

	"github.com/compactkit/compact"
)

// BenchmarkReport builds and renders the report of the largest real
// session (990 messages, 484 model calls, 2 compactions).
func BenchmarkReport(b *testing.B) {
	s := realSession(b, "before-compaction.jsonl")
	in := Input{File: "before-compaction.jsonl", Entries: s.Entries(), Path: s.Path(),
		Model: compact.ModelInfo{ID: "claude-opus-4-5", ContextWindow: 200000}}
	b.ReportAllocs()
	for b.Loop() {
		r, err := Build(in)
		if err != nil {
			b.Fatal(err)
		}
		if err := Render(io.Discard, r); err != nil {
			b.Fatal(err)
		}
	}
}
