package compact_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

var fixtures = []string{"large-session.jsonl", "before-compaction.jsonl"}

// BenchmarkPlan times the cut-point planner with file tracking on a
// loaded session, with the per-message token estimates already cached
// (the steady state of an agent that plans after every message).
func BenchmarkPlan(b *testing.B) {
	for _, f := range fixtures {
		b.Run(f, func(b *testing.B) {
			path := loadFixture(b, f).Path()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := compact.PlanCompaction(path, compact.PlanOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPlanCold is BenchmarkPlan with the token estimates dropped
// before every run, so each plan estimates the messages it walks, as the
// first plan after loading a session does. The loop that drops them (one
// pass over the entries) is timed too.
func BenchmarkPlanCold(b *testing.B) {
	for _, f := range fixtures {
		b.Run(f, func(b *testing.B) {
			path := loadFixture(b, f).Path()
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
}

// BenchmarkAppendAndCheck appends one message to a 10,000-message
// conversation held in memory and re-checks the trigger, which must cost
// the same whatever the length of the conversation.
func BenchmarkAppendAndCheck(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			log := compact.NewMemory()
			ctx := context.Background()
			text := strings.Repeat("x", 400)
			for i := 0; i < n; i++ {
				m := compact.TextMessage(compact.RoleUser, text)
				if i%2 == 1 {
					m = compact.TextMessage(compact.RoleAssistant, text)
					m.Usage = &compact.Usage{Input: 100 * i}
				}
				log.AppendMessage(ctx, m)
			}
			meter := compact.NewMeter(compact.BuildContext(log.Path()))
			model := compact.ModelInfo{ID: "m", ContextWindow: 1 << 40}
			policy := compact.Reserve{}
			msg := compact.TextMessage(compact.RoleToolResult, text)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
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
	for _, f := range fixtures {
		b.Run(f, func(b *testing.B) {
			path := loadFixture(b, f).Path()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				compact.BuildContext(path)
			}
		})
	}
}
