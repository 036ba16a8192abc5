package proxy_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/compactkit/compact/internal/testing/agentloop"
	"github.com/compactkit/compact/internal/testing/fakeupstream"
	"github.com/compactkit/compact/proxy"
)

// BenchmarkCompactionTurn measures what the client feels at a compaction:
// a Claude-Code-like agent (Anthropic Messages, streamed, thinking on, 45
// tool turns, a 30,000-token window) runs through the proxy against the
// fake upstream, whose turns take 100 ms and whose summary requests take
// 500 ms (a model's ratio: a turn takes about a second, a summary
// several). It reports the latency of the turns on which a compaction was
// applied (p50 and p99, in ms), of every turn (p99), and how many
// compactions a run has: in line, the compaction turn waits for the
// summary; ahead of time (the default with a model summarizer), it swaps
// in a summary written in the background. (When the summary takes longer
// than the turns from the early mark to the window, the request that
// would overflow waits for its rest.)
//
//	go test ./proxy -run '^$' -bench CompactionTurn -benchtime 3x
func BenchmarkCompactionTurn(b *testing.B) {
	for _, mode := range []struct {
		name  string
		ahead float64
	}{{"inline", -1}, {"ahead", 0}} {
		b.Run(mode.name, func(b *testing.B) {
			var compacting, all []time.Duration
			compactions := 0
			for range b.N {
				_, base := fakeupstream.Start(b, fakeupstream.Config{Steps: 60, OutputLines: 900,
					TurnLatency:    fakeupstream.Latency{FirstByte: 60 * time.Millisecond, Stream: 40 * time.Millisecond},
					SummaryLatency: fakeupstream.Latency{FirstByte: 400 * time.Millisecond, Stream: 100 * time.Millisecond}})
				srv, err := proxy.New(proxy.Config{AnthropicUpstream: base, Window: 30000, AheadMark: mode.ahead,
					Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
				if err != nil {
					b.Fatal(err)
				}
				ts := httptest.NewServer(srv)
				b.Cleanup(func() { ts.Close(); srv.Close() })
				counted := 0
				var turnsCompacted []int
				res, err := agentloop.Run(context.Background(), agentloop.Options{API: agentloop.Anthropic, BaseURL: ts.URL,
					Turns: 45, Stream: true, Thinking: "adaptive",
					Between: func(turn int) {
						// (Counted while the request is prepared, before it goes upstream.)
						if n := int(metricSum(b, srv, "compact_proxy_compactions_total")); n > counted {
							counted = n
							turnsCompacted = append(turnsCompacted, turn)
						}
					}})
				if err != nil {
					b.Fatal(err)
				}
				for _, t := range turnsCompacted {
					compacting = append(compacting, res.Turns[t-1].Latency)
				}
				all = append(all, res.Latencies()...)
				compactions += len(turnsCompacted)
			}
			if len(compacting) == 0 {
				b.Fatal("no compaction in the run")
			}
			b.ReportMetric(pct(compacting, 50), "compact-p50-ms")
			b.ReportMetric(pct(compacting, 99), "compact-p99-ms")
			b.ReportMetric(pct(all, 99), "turn-p99-ms")
			b.ReportMetric(float64(compactions)/float64(b.N), "compactions/run")
		})
	}
}

// pct is the p-th percentile of ds, in milliseconds.
func pct(ds []time.Duration, p int) float64 {
	return float64(agentloop.Percentile(ds, p).Microseconds()) / 1000
}
