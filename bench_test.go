package compact_test

import (
	"context"
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/sharedtest"
	"github.com/compactkit/compact/session"
)

// warmEstimates computes and caches the token estimate of every message
// on path, which a session computes on first use.
func warmEstimates(path []*compact.Entry) {
	for _, e := range path {
		if e.Message != nil {
			e.Message.Tokens()
		}
	}
}

// openBench opens a session file for a benchmark.
func openBench(tb testing.TB, path string) *session.Session {
	tb.Helper()
	s, err := session.Open(path, session.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// BenchmarkPlan times the cut-point planner with file tracking on a
// loaded session, with the per-message token estimates already cached
// (the steady state of an agent that plans after every message): they
// are computed before the timer starts.
func BenchmarkPlan(b *testing.B) {
	sharedtest.EachBenchFile(b, func(b *testing.B, f string) {
		path := openBench(b, f).Path()
		warmEstimates(path)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := compact.PlanCompaction(path, compact.PlanOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkPlanCold is BenchmarkPlan with the token estimates dropped
// before every run, so each plan estimates the messages it walks, as the
// first plan after loading a session does. The loop that drops them (one
// pass over the entries) is timed too.
func BenchmarkPlanCold(b *testing.B) {
	sharedtest.EachBenchFile(b, func(b *testing.B, f string) {
		path := openBench(b, f).Path()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			for _, e := range path {
				if e.Message != nil {
					e.Message.ResetTokens()
				}
			}
			if _, err := compact.PlanCompaction(path, compact.PlanOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkPlanFirst is the plan like for like with pi's
// prepareCompaction (scripts/bench-vs-pi.sh): the first plan of a session
// loaded just before, with the token estimates computed by the plan as pi
// computes its own. Each iteration, with the timer stopped, opens the
// file, takes the leaf's path, makes sure no estimate is cached (loading
// computes none; a change there would show here as a faster plan) and
// collects the garbage of the load (so that no collection started by
// the load runs during the plan; pi's side calls gc() the same way); only
// PlanCompaction is timed (cut point, the measure of the context, the
// messages to summarize and the file lists).
//
// The collection is debug.FreeOSMemory, which also hands the freed
// memory back to the system before the timer starts. With runtime.GC,
// a load that had started a collection of its own (as one decoded on two
// goroutines does, its second decoder's buffers tipping the heap over
// the collector's 4 MB floor) left the runtime's background scavenger
// returning memory while the plan ran: large-session's plan took 103-135
// µs after such a load against 72-76 after a one-goroutine load, where
// the CPU profiles of the two plans were the same. With FreeOSMemory
// the two take 88-91 and 86-88 µs: the plan's own allocations now find
// fresh pages, which costs compact some 14 µs, and no more.
//
// Run it with a count (-benchtime 100x): with a duration, b.N would be
// predicted from the timed plan alone and the untimed loads would make
// the run a hundred times longer, so it skips itself beyond 2,000
// iterations.
func BenchmarkPlanFirst(b *testing.B) {
	sharedtest.EachBenchFile(b, func(b *testing.B, f string) {
		if b.N > 2000 {
			b.Skipf("%d iterations would load the file %d times: run with -benchtime 100x", b.N, b.N)
		}
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			path := openBench(b, f).Path()
			for _, e := range path {
				if e.Message != nil {
					e.Message.ResetTokens()
				}
			}
			debug.FreeOSMemory()
			b.StartTimer()
			if _, err := compact.PlanCompaction(path, compact.PlanOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkAppendAndCheck appends one message to a conversation of 1,000,
// 10,000 and 100,000 messages held in memory (compact.SliceLog) and decides
// whether to compact (compact.Meter and compact.Check), which must cost
// the same whatever the length of the conversation.
//
// The log is rebuilt from the same n entries, and the garbage collected,
// with the timer stopped, after every n/10 appends (at least 1,000), so
// the timed appends run on n to 1.1n messages (1,000 to 2,000 for the
// smallest); appending b.N messages to one log, as this benchmark first
// did, measured logs of hundreds of thousands of messages under every
// name. The first appends after a rebuild find cold caches, some 30 µs in
// all; with a rebuild every 100 appends, as at first for 1,000, that made
// the smallest log look 20-30 % slower than the largest.
//
// The entries are made once, for the largest log, and each size logs the
// first n of them, so that every size runs with the same heap. With
// entries made per size, the smallest log ran in a heap of a few MB and
// the largest in one of some 40 MB, and the difference measured the heap,
// not the log: with 100,000 unrelated messages kept alive beside it, the
// 1,000-message run took what the 100,000-message one did (0.37-0.38
// against 0.37-0.39 µs; 0.34-0.36 without them).
func BenchmarkAppendAndCheck(b *testing.B) {
	sizes := []int{1000, 10000, 100000}
	text := strings.Repeat("x", 400)
	all := make([]*compact.Entry, sizes[len(sizes)-1])
	parent := ""
	for i := range all {
		m := compact.TextMessage(compact.RoleUser, text)
		if i%2 == 1 {
			m = compact.TextMessage(compact.RoleAssistant, text)
			m.Usage = &compact.Usage{Input: 100 * i}
		}
		// Ids of their own, so that the log's generated ones ("m1",
		// "m2", ...) never collide with them.
		id := "b" + strconv.Itoa(i)
		all[i] = &compact.Entry{ID: id, ParentID: parent, Kind: compact.KindMessage, Message: m,
			Timestamp: "2025-01-01T00:00:00Z"}
		parent = id
	}
	for _, n := range sizes {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			ctx := context.Background()
			base := all[:n]
			batch := max(n/10, 1000)
			model := compact.ModelInfo{ID: "m", ContextWindow: 1 << 40}
			policy := compact.Reserve{}
			msg := compact.TextMessage(compact.RoleToolResult, text)
			var log *compact.SliceLog
			var meter *compact.Meter
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if i%batch == 0 {
					b.StopTimer()
					log = compact.NewSliceLog(base...)
					meter = compact.NewMeter(compact.BuildContext(log.Path()))
					runtime.GC() // the old log is garbage of the rebuild, not of the appends
					b.StartTimer()
				}
				m := *msg
				if _, err := log.AppendMessage(ctx, &m); err != nil {
					b.Fatal(err)
				}
				meter.Add(&m)
				if d := compact.Check(policy, model, meter.Usage(), false); d.Compact {
					b.Fatal("unexpected trigger")
				}
			}
		})
	}
}

func BenchmarkBuildContext(b *testing.B) {
	sharedtest.EachBenchFile(b, func(b *testing.B, f string) {
		path := openBench(b, f).Path()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			compact.BuildContext(path)
		}
	})
}

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
