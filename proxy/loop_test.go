package proxy

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/agentloop"
	"github.com/compactkit/compact/internal/testing/fakeupstream"
)

// loopRun is one scripted agent conversation through a proxy in front of
// the strict fake provider (signed thinking and its rules, prompt-cache
// accounting, the window enforced).
type loopRun struct {
	fake *fakeupstream.Fake
	res  agentloop.Result
}

// runLoop drives turns tool turns of api through a proxy with cfg, the
// fake's window and the proxy's both set to window.
func runLoop(t testing.TB, api agentloop.API, thinking string, turns, window int, fcfg fakeupstream.Config, cfg Config) loopRun {
	t.Helper()
	fcfg.Window, fcfg.Steps = window, turns
	if fcfg.OutputLines == 0 {
		fcfg.OutputLines = 2000
	}
	fake := fakeupstream.New(fcfg)
	up := httptest.NewServer(fake)
	t.Cleanup(up.Close)
	cfg.Window = window
	_, ts := proxyIn(t, up.URL, cfg)
	res, err := agentloop.Run(context.Background(), agentloop.Options{API: api, BaseURL: ts.URL, Stream: true, Thinking: thinking, Turns: turns + 1})
	if err != nil {
		t.Fatal(err)
	}
	return loopRun{fake: fake, res: res}
}

// TestLongLoop runs a long agent conversation on each API through the
// proxy with the model writing the summaries: every request fits the
// window, at least two compactions happen, no request breaks the thinking
// rules or tool pairing, and every summary request asked on the
// conversation reads most of its input from the provider's cache.
func TestLongLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	for _, tc := range []struct {
		api      agentloop.API
		thinking string
		// window and reserve are in tokens, lines the size of each tool
		// output. With adaptive thinking a summary on the conversation
		// asks for 16,384 tokens of room to think besides the summary, so
		// the prefix up to the cut fits beside it only with a reserve of
		// a real model's proportions (Claude Code's trigger leaves a
		// fifth of 200,000 tokens); a smaller one writes from a
		// transcript, which TestForkRequest covers.
		window, reserve, lines int
	}{
		{agentloop.Anthropic, "adaptive", 120000, 40000, 3000},
		{agentloop.Anthropic, "enabled", 60000, 12000, 2000},
		{agentloop.Chat, "", 60000, 12000, 2000},
		{agentloop.Responses, "", 60000, 12000, 2000},
	} {
		t.Run(fmt.Sprintf("%s/%s", tc.api, tc.thinking), func(t *testing.T) {
			const turns = 45
			run := runLoop(t, tc.api, tc.thinking, turns, tc.window, fakeupstream.Config{OutputLines: tc.lines}, Config{Policy: compact.Reserve{Tokens: tc.reserve}})
			if want := fmt.Sprintf("DONE after %d steps", turns); run.res.Final != want {
				t.Fatalf("the agent ended with %q after %d turns, want %q", run.res.Final, len(run.res.Turns), want)
			}
			for _, r := range run.fake.Requests() {
				for _, p := range run.fake.Check(r) {
					t.Error(p)
				}
			}
			if n := len(run.fake.ThinkingRefusals()); n > 0 {
				t.Errorf("%d requests refused by the thinking rules", n)
			}
			sums := run.fake.Summaries()
			if len(sums) < 2 {
				t.Fatalf("%d summary requests, want at least two compactions", len(sums))
			}
			for _, s := range sums {
				if s.Tools == 0 {
					t.Errorf("summary request %d quoted a transcript, though the prefix fits: it should be the conversation itself", s.Seq)
				}
				if in := s.Tokens; in > 0 && float64(s.CacheRead)/float64(in) < 0.8 {
					t.Errorf("summary request %d read %d of %d tokens from the cache, want >= 80%%", s.Seq, s.CacheRead, in)
				}
			}
			t.Logf("%d turns, %d summaries, run cache read share %.2f", len(run.res.Turns), len(sums), run.fake.Cache().ReadShare())
		})
	}
}
