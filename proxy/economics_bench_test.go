package proxy_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/agentloop"
	"github.com/compactkit/compact/internal/testing/fakeupstream"
	"github.com/compactkit/compact/proxy"
)

// BenchmarkLongConversation measures what one long conversation costs
// three ways: the agent talking to the provider directly (it stops at the
// window's overflow error, as an agent without compaction of its own
// does), through the proxy with the summaries written in line, and through
// the proxy with them written ahead of time (the default). The agent is
// Claude-Code-like (Anthropic Messages, streamed, adaptive thinking, cache
// marks on the system prompt and the newest message; 60 tool turns of
// about 3,700 tokens each) and the fake provider bills its prompt cache by
// prefix, with a 120,000-token window and the default trigger. Reported
// per run: the turns the agent finished, the share of all input (summary
// requests included) read from the cache, the summary requests, and the
// input's list price at claude-sonnet-4-5's prices (uncached input, cache
// reads, cache writes; output is left out: it is the same model output
// whichever way the context is kept, bar the summaries').
//
//	go test ./proxy -run '^$' -bench LongConversation -benchtime 2x
func BenchmarkLongConversation(b *testing.B) {
	reg, err := compact.LoadRegistry()
	if err != nil {
		b.Fatal(err)
	}
	model, ok := reg.Lookup("claude-sonnet-4-5")
	if !ok || model.Prices == nil {
		b.Fatal("claude-sonnet-4-5 has no prices in the registry")
	}
	const window, turns = 120000, 60
	for _, mode := range []struct {
		name  string
		proxy bool
		ahead float64
	}{{"direct", false, 0}, {"inline", true, -1}, {"ahead", true, 0}} {
		b.Run(mode.name, func(b *testing.B) {
			var done, summaries int
			var cost compact.Cost
			var stats fakeupstream.CacheStats
			for range b.N {
				fake, base := fakeupstream.Start(b, fakeupstream.Config{Steps: turns, OutputLines: 3000, Window: window})
				url := base
				if mode.proxy {
					srv, err := proxy.New(proxy.Config{AnthropicUpstream: base, Window: window, AheadMark: mode.ahead,
						Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
					if err != nil {
						b.Fatal(err)
					}
					ts := httptest.NewServer(srv)
					b.Cleanup(func() { ts.Close(); srv.Close() })
					url = ts.URL
				}
				res, err := agentloop.Run(context.Background(), agentloop.Options{API: agentloop.Anthropic, BaseURL: url,
					Turns: turns + 1, Stream: true, Thinking: "adaptive", Model: model.ID})
				if err != nil && mode.proxy {
					b.Fatal(err)
				}
				for _, t := range res.Turns {
					if t.Status == 200 {
						done++
					}
				}
				for _, r := range fake.Requests() {
					if r.Status != 200 {
						continue
					}
					cost = cost.Plus(model.Prices.Cost(compact.Usage{Input: r.Tokens - r.CacheRead - r.CacheWrite,
						CacheRead: r.CacheRead, CacheWrite: r.CacheWrite - r.CacheWrite1h, CacheWrite1h: r.CacheWrite1h}))
				}
				summaries += len(fake.Summaries())
				s := fake.Cache()
				stats.Input += s.Input
				stats.Read += s.Read
			}
			n := float64(b.N)
			b.ReportMetric(float64(done)/n, "turns/run")
			b.ReportMetric(stats.ReadShare(), "cache-read-share")
			b.ReportMetric(float64(summaries)/n, "summaries/run")
			b.ReportMetric(cost.Total()/n, "input-usd/run")
			b.ReportMetric(cost.Total()/float64(max(done, 1)), "input-usd/turn")
		})
	}
}
