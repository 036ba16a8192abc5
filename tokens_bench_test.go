package compact_test

import (
	"encoding/json"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/sharedtest"
)

// BenchmarkJSStringifyLen measures the tool-call arguments of the real pi
// sessions as the token estimate does: every call's arguments once per
// iteration. SetBytes makes the result a throughput over the raw JSON.
func BenchmarkJSStringifyLen(b *testing.B) {
	sharedtest.EachBenchFile(b, func(b *testing.B, f string) {
		var args []json.RawMessage
		size := 0
		for _, e := range openBench(b, f).Path() {
			if e.Message == nil {
				continue
			}
			for _, p := range e.Message.Content {
				if p.ToolCall != nil {
					args = append(args, p.ToolCall.Arguments)
					size += len(p.ToolCall.Arguments)
				}
			}
		}
		b.SetBytes(int64(size))
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			for _, a := range args {
				compact.JSStringifyLen(a)
			}
		}
	})
}

// BenchmarkEstimateTokens estimates every message of the real pi sessions
// once per iteration, uncached: text, thinking and tool results are
// counted in UTF-16 units, tool calls through JSStringifyLen.
func BenchmarkEstimateTokens(b *testing.B) {
	sharedtest.EachBenchFile(b, func(b *testing.B, f string) {
		var msgs []*compact.Message
		for _, e := range openBench(b, f).Path() {
			if e.Message != nil {
				msgs = append(msgs, e.Message)
			}
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			for _, m := range msgs {
				compact.EstimateTokens(m)
			}
		}
	})
}
