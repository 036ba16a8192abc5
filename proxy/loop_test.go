package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/agentloop"
	"github.com/compactkit/compact/internal/testing/fakeupstream"
)

// loopRun is one scripted agent conversation through a proxy in front of
// the strict fake provider (signed thinking and its rules, prompt-cache
// accounting, the window enforced).
type loopRun struct {
	fake *fakeupstream.Fake
	srv  *Server
	url  string // the proxy's
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
	srv, ts := proxyIn(t, up.URL, cfg)
	res, err := agentloop.Run(context.Background(), agentloop.Options{API: api, BaseURL: ts.URL, Stream: true, Thinking: thinking, Turns: turns + 1})
	if err != nil {
		t.Fatal(err)
	}
	return loopRun{fake: fake, srv: srv, url: ts.URL, res: res}
}

// TestLongLoop runs a long agent conversation on each API through the
// proxy with the model writing the summaries in line: every request fits the
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
		// window and reserve are in tokens (reserve 0: the default
		// policy), lines the size of each tool output. With adaptive
		// thinking a summary on the conversation asks for 16,384 tokens
		// of room to think besides the summary: at the default trigger
		// the prefix up to the cut still fits beside it (measured in the
		// provider's tokens, not in raw JSON bytes).
		window, reserve, lines int
	}{
		{agentloop.Anthropic, "adaptive", 120000, 0, 3000},
		{agentloop.Anthropic, "enabled", 60000, 12000, 2000},
		{agentloop.Chat, "", 60000, 12000, 2000},
		{agentloop.Responses, "", 60000, 12000, 2000},
	} {
		t.Run(fmt.Sprintf("%s/%s", tc.api, tc.thinking), func(t *testing.T) {
			const turns = 45
			run := runLoop(t, tc.api, tc.thinking, turns, tc.window, fakeupstream.Config{OutputLines: tc.lines}, Config{Policy: policyOf(tc.reserve), AheadMark: -1})
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
			checkSummaries(t, run.fake)
			t.Logf("%d turns, %d summaries, run cache read share %.2f", len(run.res.Turns), len(sums), run.fake.Cache().ReadShare())
		})
	}
}

// TestLongLoopAhead runs the same conversations at a model's pace (turns
// of 50 ms, summaries of 200 ms: the agent covers the room between the
// early mark and the window in about twice a summary's time) with the
// summary written ahead, as by default: no request waits for a summary,
// every compaction is a summary prepared ahead and swapped in, nothing
// breaks the provider's rules, and the run reads at least as much from the
// provider's cache as the same run compacted in line.
func TestLongLoopAhead(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	pace := fakeupstream.Config{TurnLatency: fakeupstream.Latency{FirstByte: 50 * time.Millisecond},
		SummaryLatency: fakeupstream.Latency{FirstByte: 200 * time.Millisecond}}
	for _, tc := range []struct {
		api                    agentloop.API
		thinking               string
		window, reserve, lines int
	}{
		{agentloop.Anthropic, "adaptive", 120000, 0, 3000},
		{agentloop.Chat, "", 60000, 12000, 2000},
		{agentloop.Responses, "", 60000, 12000, 2000},
	} {
		t.Run(fmt.Sprintf("%s/%s", tc.api, tc.thinking), func(t *testing.T) {
			const turns = 45
			f := pace
			f.OutputLines = tc.lines
			inline := runLoop(t, tc.api, tc.thinking, turns, tc.window, f, Config{Policy: policyOf(tc.reserve), AheadMark: -1})
			ahead := runLoop(t, tc.api, tc.thinking, turns, tc.window, f, Config{Policy: policyOf(tc.reserve)})
			if want := fmt.Sprintf("DONE after %d steps", turns); ahead.res.Final != want {
				t.Fatalf("the agent ended with %q after %d turns, want %q", ahead.res.Final, len(ahead.res.Turns), want)
			}
			for _, r := range ahead.fake.Requests() {
				for _, p := range ahead.fake.Check(r) {
					t.Error(p)
				}
			}
			checkSummaries(t, ahead.fake)
			m := ahead.srv.metrics
			waited, swapped := testutil.ToFloat64(m.aheadTotal.WithLabelValues("waited")), testutil.ToFloat64(m.aheadTotal.WithLabelValues("swapped"))
			if waited != 0 || swapped < 2 {
				t.Errorf("%v requests waited for a summary written ahead and %v swapped one in; want none waiting and at least 2 swaps", waited, swapped)
			}
			if n := sumOf(m.compactionsTotal); n != swapped {
				t.Errorf("%v compactions, %v of them summaries written ahead: every compaction should be one", n, swapped)
			}
			in, ah := inline.fake.Cache().ReadShare(), ahead.fake.Cache().ReadShare()
			if ah < in {
				t.Errorf("cache read share %.3f ahead of time, %.3f in line: writing ahead must not cost cache reads", ah, in)
			}
			li, la := inline.res.Latencies(), ahead.res.Latencies()
			p50i, p99i := agentloop.Percentile(li, 50), agentloop.Percentile(li, 99)
			p50a, p99a := agentloop.Percentile(la, 50), agentloop.Percentile(la, 99)
			t.Logf("turn latency in line p50 %v p99 %v, ahead p50 %v p99 %v; cache read share in line %.3f, ahead %.3f", p50i, p99i, p50a, p99a, in, ah)
		})
	}
}

// checkSummaries fails t for a summary request that quoted a transcript
// or read less than 80 % of its input from the provider's cache: the
// prefix fits in these runs, so every summary must ride the conversation.
func checkSummaries(t *testing.T, fake *fakeupstream.Fake) {
	t.Helper()
	low := 1.0
	defer func() { t.Logf("lowest cache read share of a summary request: %.3f", low) }()
	for _, s := range fake.Summaries() {
		if s.Tokens > 0 {
			low = min(low, float64(s.CacheRead)/float64(s.Tokens))
		}
		if s.Tools == 0 {
			t.Errorf("summary request %d quoted a transcript, though the prefix fits: it should be the conversation itself", s.Seq)
		}
		if in := s.Tokens; in > 0 && float64(s.CacheRead)/float64(in) < 0.8 {
			t.Errorf("summary request %d read %d of %d tokens from the cache, want >= 80%%", s.Seq, s.CacheRead, in)
		}
	}
}

// policyOf is a reserve of tokens under the window as a policy, the
// default policy for 0.
func policyOf(reserve int) compact.Policy {
	if reserve == 0 {
		return nil
	}
	return compact.Reserve{Tokens: reserve}
}

// TestLoopTimeline: the conversation API's timeline of a long loop says
// what the client sent at each request: growing turn by turn, through
// the request that made a compaction (measured before it) and after a
// second compaction (which replaced the first's summary, not the
// client's messages).
func TestLoopTimeline(t *testing.T) {
	run := runLoop(t, agentloop.Chat, "", 45, 60000, fakeupstream.Config{OutputLines: 2000}, Config{Policy: compact.Reserve{Tokens: 12000}, AheadMark: -1})
	var list ConversationList
	getJSON(t, run.url+"/api/conversations", &list)
	if len(list.Conversations) != 1 {
		t.Fatalf("%d conversations listed", len(list.Conversations))
	}
	var conv Conversation
	getJSON(t, run.url+"/api/conversations/"+list.Conversations[0].ID, &conv)
	compactions, prev, prevAt, read := 0, 0, 0, 0
	for i, m := range conv.Timeline {
		if m.Client == 0 || m.Prompt < 1000 {
			continue // passed through unread, or the first request
		}
		if m.Compaction {
			compactions++
		}
		// A turn adds one tool output of about 2,800 tokens; the first
		// three requests read teach the estimate the provider's counts.
		// Requests between two read ones passed unread (how many depends
		// on when the previous answer was recorded), each a turn more.
		if read++; read > 3 && (m.Client < prev || m.Client > prev+5000*(i-prevAt)) {
			t.Errorf("request %d: the client sent %d tokens after %d at request %d", i, m.Client, prev, prevAt)
		}
		prev, prevAt = m.Client, i
	}
	if compactions < 2 {
		t.Fatalf("%d compactions in the timeline, want two (the second measured over the first)", compactions)
	}
}

// getJSON decodes the JSON answer of a GET (over loopback, so the API
// answers without a token).
func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	status, body := get(t, url)
	if status != 200 {
		t.Fatalf("GET %s: %d %s", url, status, body)
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}
