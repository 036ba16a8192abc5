package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/fakeupstream"
	"github.com/compactkit/compact/internal/testing/syncbuf"
	"github.com/compactkit/compact/proxy/store"
)

// cachingUpstream answers Anthropic Messages requests (not streamed) with
// the usage fields a caching provider reports: most of each prompt read
// from the cache, a tenth written to it, half of that for an hour. Agent
// requests (with tools) get a tool call, summary requests a hand-over. It
// keeps every usage it reported, split by kind, for the test to add up
// by hand.
type cachingUpstream struct {
	t   *testing.T
	srv *httptest.Server

	mu        sync.Mutex
	n         int
	requests  []compact.Usage // agent requests, in order
	summaries []compact.Usage
	bodies    [][]byte // agent requests' bodies
}

func newCachingUpstream(t *testing.T) *cachingUpstream {
	u := &cachingUpstream{t: t}
	u.srv = httptest.NewServer(u)
	t.Cleanup(u.srv.Close)
	return u
}

func (u *cachingUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	total := fakeupstream.CountTokens(body)
	tools := isAgentRequest(r.URL.Path, body)
	var usage compact.Usage
	var content string
	u.mu.Lock()
	u.n++
	n := u.n
	if tools {
		// 80 % read, 10 % written (half of it for an hour), the rest new.
		usage = compact.Usage{CacheRead: total * 8 / 10, CacheWrite: total / 10, CacheWrite1h: total / 20, Output: 40}
		usage.Input = total - usage.CacheRead - usage.CacheWrite
		u.requests = append(u.requests, usage)
		u.bodies = append(u.bodies, body)
		content = fmt.Sprintf(`{"type":"tool_use","id":"toolu_%d","name":"Bash","input":{"command":"seq 1 %d"}}`, n, n)
	} else {
		// A summary request that rides the cache: 90 % read.
		usage = compact.Usage{CacheRead: total * 9 / 10, Output: 300}
		usage.Input = total - usage.CacheRead
		u.summaries = append(u.summaries, usage)
		text, _ := json.Marshal(fakeupstream.Handover(fakeupstream.Prompt(fakeupstream.Anthropic, body)))
		content = `{"type":"text","text":` + string(text) + `}`
	}
	u.mu.Unlock()
	stop := "tool_use"
	if !tools {
		stop = "end_turn"
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"msg_%d","type":"message","role":"assistant","model":"claude-test","content":[%s],"stop_reason":%q,"stop_sequence":null,`+
		`"usage":{"input_tokens":%d,"cache_read_input_tokens":%d,"cache_creation_input_tokens":%d,`+
		`"cache_creation":{"ephemeral_5m_input_tokens":%d,"ephemeral_1h_input_tokens":%d},"output_tokens":%d}}`,
		n, content, stop, usage.Input, usage.CacheRead, usage.CacheWrite, usage.CacheWrite-usage.CacheWrite1h, usage.CacheWrite1h, usage.Output)
}

// testPrices are the prices the tests give claude-test: Claude Sonnet
// 4.5's.
var testPrices = compact.Prices{Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75, CacheWrite1h: 6}

// dollars prices u by hand at testPrices.
func dollars(u compact.Usage) float64 {
	return (float64(u.Input)*3 + float64(u.CacheRead)*0.30 + float64(u.CacheWrite-u.CacheWrite1h)*3.75 +
		float64(u.CacheWrite1h)*6 + float64(u.Output)*15) / 1e6
}

// converse runs a proxy with cfg in front of up and an Anthropic agent of
// one conversation through it for steps turns, and returns the proxy.
func converse(t *testing.T, up *cachingUpstream, cfg Config, steps int) *httptest.Server {
	t.Helper()
	_, ts := proxyIn(t, up.srv.URL, cfg)
	c := newClient(t, Anthropic, ts.URL)
	c.header.Set("X-Session-Id", "costs")
	for i := 1; i <= steps; i++ {
		c.step(i)
	}
	return ts
}

// byHand adds up usages field by field, each priced with dollars.
func byHand(usages []compact.Usage) store.Tally {
	var t store.Tally
	for _, u := range usages {
		t.Requests++
		t.Input += u.Input
		t.Output += u.Output
		t.CacheRead += u.CacheRead
		t.CacheWrite += u.CacheWrite
		t.CacheWrite1h += u.CacheWrite1h
		t.Cost += dollars(u)
	}
	return t
}

// lastOnly hides a store's PutLast, so that the proxy records the last
// call by reading and rewriting the whole record.
type lastOnly struct{ store.Store }

// The conversation's record counts what its requests and its summary
// used, what the compaction saved and what it all cost, whether the store
// writes the last call alone (Redis, memory) or the whole record; the
// metrics count the same, and the compaction's log line gives the summary
// request's cache read share.
func TestConversationCosts(t *testing.T) {
	for _, tc := range []struct {
		name     string
		lastOnly bool
	}{{"PutLast", false}, {"read-modify-write", true}} {
		t.Run(tc.name, func(t *testing.T) {
			up := newCachingUpstream(t)
			mem := store.NewMemory(store.MemoryOptions{})
			var st store.Store = mem
			if tc.lastOnly {
				st = lastOnly{mem}
			}
			var logs syncbuf.Buffer
			reg := compact.NewRegistry([]compact.ModelInfo{{ID: "claude-test", ContextWindow: 12000, Prices: &testPrices}})
			const steps = 14
			// (In line: one summary request per compaction, its calls
			// on its checkpoint.)
			ts := converse(t, up, Config{Window: 12000, Policy: compact.Reserve{Tokens: 3000}, Store: st, Registry: reg,
				Logger: slog.New(slog.NewTextHandler(&logs, nil)), AheadMark: -1}, steps)
			// The record is written after the answer: wait for it.
			rec := conversationRecord(t, mem, steps)
			if len(rec.Checkpoints) == 0 {
				t.Fatal("the conversation was never compacted")
			}

			up.mu.Lock()
			requests, summaries, bodies := up.requests, up.summaries, up.bodies
			up.mu.Unlock()
			// The requests' totals, added up by hand.
			want := byHand(requests)
			for i := range requests {
				// What this request did not send: its compaction's before
				// minus after.
				for _, cp := range rec.Checkpoints {
					if bytes.Contains(bodies[i], cp.Item) {
						want.TokensSaved += cp.TokensBefore - cp.TokensAfter
					}
				}
			}
			got := rec.Last.Totals
			if want.TokensSaved <= 0 {
				t.Fatal("no request was sent compacted")
			}
			if math.Abs(got.Cost-want.Cost) > 1e-9 || got.Unpriced != 0 {
				t.Errorf("requests cost $%v (%d unpriced), want $%v", got.Cost, got.Unpriced, want.Cost)
			}
			got.Cost = want.Cost
			if got != want {
				t.Errorf("requests' totals\n got %+v\nwant %+v", got, want)
			}
			if rec.Last.Model != "claude-test" {
				t.Errorf("last call's model %q", rec.Last.Model)
			}

			// The summaries', from what the upstream reported to them.
			if len(summaries) != len(rec.Checkpoints) {
				t.Fatalf("%d summary requests for %d compactions", len(summaries), len(rec.Checkpoints))
			}
			wantSum := byHand(summaries)
			gotSum := rec.Summaries
			if math.Abs(gotSum.Cost-wantSum.Cost) > 1e-9 {
				t.Errorf("summaries cost $%v, want $%v", gotSum.Cost, wantSum.Cost)
			}
			gotSum.Cost = wantSum.Cost
			if gotSum != wantSum {
				t.Errorf("summaries' tally\n got %+v\nwant %+v", gotSum, wantSum)
			}
			if cp := rec.Checkpoints[len(rec.Checkpoints)-1]; len(cp.SummaryCalls) != 1 || cp.SummaryCalls[0].Usage != summaries[0] {
				t.Errorf("first checkpoint's summary calls %+v, want one with %+v", cp.SummaryCalls, summaries[0])
			}
			if share, ok := gotSum.CacheReadShare(); !ok || share < 0.85 {
				t.Errorf("summaries' cache read share %v", share)
			}

			// The metrics count the same.
			text := served(t, ts.URL)
			for series, want := range map[string]float64{
				`compact_proxy_model_calls_total{api="anthropic",what="requests"}`:                     float64(steps),
				`compact_proxy_model_calls_total{api="anthropic",what="summaries"}`:                    float64(len(summaries)),
				`compact_proxy_usage_tokens_total{api="anthropic",kind="cache_read",what="requests"}`:  float64(want.CacheRead),
				`compact_proxy_usage_tokens_total{api="anthropic",kind="cache_write",what="requests"}`: float64(want.CacheWrite),
				`compact_proxy_usage_tokens_total{api="anthropic",kind="input",what="summaries"}`:      float64(wantSum.Input),
				`compact_proxy_usage_tokens_total{api="anthropic",kind="cache_read",what="summaries"}`: float64(wantSum.CacheRead),
				`compact_proxy_request_tokens_saved_total`:                                             float64(want.TokensSaved),
				`compact_proxy_cost_dollars_total{api="anthropic",what="requests"}`:                    want.Cost,
				`compact_proxy_cost_dollars_total{api="anthropic",what="summaries"}`:                   wantSum.Cost,
				`compact_proxy_unpriced_calls_total{api="anthropic",what="requests"}`:                  0,
			} {
				v, err := strconv.ParseFloat(sample(t, text, series), 64)
				if err != nil || math.Abs(v-want) > 1e-6 {
					t.Errorf("%s = %v (%v), want %v", series, v, err, want)
				}
			}

			// The compaction's log line says how much of the summary
			// request's prompt came from the cache, and what it cost.
			first := summaries[0]
			share := 100 * float64(first.CacheRead) / float64(first.Input+first.CacheRead)
			var line string
			for _, l := range strings.Split(logs.String(), "\n") {
				if strings.Contains(l, "msg=compacted") {
					line = l
					break
				}
			}
			cost := fmt.Sprintf("summary_cost_usd=%v", math.Round(dollars(first)*1e6)/1e6)
			if !strings.Contains(line, fmt.Sprintf("%.0f%% cached", share)) || !strings.Contains(line, cost) {
				t.Errorf("compaction log line without the summary's cache read share (%.0f%%) and %s: %s", share, cost, line)
			}
		})
	}
}

// A model without known prices is counted, its cost left unknown rather
// than taken as zero.
func TestUnpricedModelCost(t *testing.T) {
	up := newCachingUpstream(t)
	mem := store.NewMemory(store.MemoryOptions{})
	reg := compact.NewRegistry([]compact.ModelInfo{{ID: "claude-test", ContextWindow: 200000}})
	ts := converse(t, up, Config{Window: 200000, Store: mem, Registry: reg, Summarizer: SummarizerExtractive}, 3)
	rec := conversationRecord(t, mem, 3)
	if tl := rec.Last.Totals; tl.Unpriced != 3 || tl.Cost != 0 || tl.CacheRead == 0 {
		t.Errorf("totals %+v, want 3 unpriced requests with their tokens", tl)
	}
	text := served(t, ts.URL)
	if v := sample(t, text, `compact_proxy_unpriced_calls_total{api="anthropic",what="requests"}`); v != "3" {
		t.Errorf("unpriced calls %s, want 3", v)
	}
}

// waitFor polls cond until it holds, failing the test after 5 s: the
// proxy records an answer's usage once the answer is sent.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met after 5 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// conversationRecord waits until the one conversation record of mem
// ("c:" key; the session's "s:" record holds its checkpoints only) has
// counted n requests, and returns it.
func conversationRecord(t *testing.T, mem *store.Memory, n int) *store.Record {
	t.Helper()
	var rec *store.Record
	waitFor(t, func() bool {
		for _, k := range mem.Keys() {
			if strings.HasPrefix(k, "c:") {
				r, err := mem.Get(context.Background(), k)
				rec = r
				return err == nil && r.Last != nil && r.Last.Totals.Requests == n
			}
		}
		return false
	})
	return rec
}

// The usage observer reads what a streamed Anthropic answer bills beyond
// its context: the one-hour cache writes of message_start, and the
// threshold compaction step that message_delta reports in iterations
// (left out of its top-level counts).
func TestObserverReadsCacheLifetimesAndIterations(t *testing.T) {
	stream := "event: message_start\n" +
		`data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-test","stop_reason":null,"usage":` +
		`{"input_tokens":20,"cache_read_input_tokens":1000,"cache_creation_input_tokens":300,"cache_creation":{"ephemeral_5m_input_tokens":100,"ephemeral_1h_input_tokens":200},"output_tokens":1}}}` + "\n\n" +
		"event: message_delta\n" +
		`data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":90,"iterations":[` +
		`{"type":"compaction","input_tokens":180000,"output_tokens":3500,"cache_read_input_tokens":0,"cache_creation_input_tokens":0},` +
		`{"type":"message","input_tokens":20,"output_tokens":90,"cache_read_input_tokens":1000,"cache_creation_input_tokens":300}]}}` + "\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	o := newUsageObserver(Anthropic, true)
	_, _ = o.Write([]byte(stream))
	got := o.Observed()
	want := compact.Usage{Input: 20, CacheRead: 1000, CacheWrite: 300, CacheWrite1h: 200, Output: 90,
		Compaction: compact.StepUsage{Input: 180000, Output: 3500}}
	if got.Usage == nil || *got.Usage != want {
		t.Fatalf("observed %+v, want %+v", got.Usage, want)
	}
	// Priced, the compaction step is most of the bill: 180,020 × $3 +
	// 1,000 × $0.30 + 100 × $3.75 + 200 × $6 + 3,590 × $15.
	c := testPrices.Cost(*got.Usage)
	if wantCost := (180020*3 + 1000*0.30 + 100*3.75 + 200*6 + 3590*15) / 1e6; math.Abs(c.Total()-wantCost) > 1e-9 {
		t.Errorf("cost $%v, want $%v", c.Total(), wantCost)
	}
}

// Requests far from the trigger that the proxy does not read (the light
// path) are counted and priced too, by the model the last call named.
func TestLightRequestsCosted(t *testing.T) {
	up := newCachingUpstream(t)
	mem := store.NewMemory(store.MemoryOptions{})
	reg := compact.NewRegistry([]compact.ModelInfo{{ID: "claude-test", ContextWindow: 200000, Prices: &testPrices}})
	const steps = 5
	converse(t, up, Config{Window: 200000, Store: mem, Registry: reg, Summarizer: SummarizerExtractive}, steps)
	rec := conversationRecord(t, mem, steps)
	if rec.Last.Units != 0 || rec.Last.Model != "claude-test" {
		t.Fatalf("last call %+v: want one recorded by the light path (no units), naming the model", rec.Last)
	}
	up.mu.Lock()
	want := byHand(up.requests)
	up.mu.Unlock()
	got := rec.Last.Totals
	if math.Abs(got.Cost-want.Cost) > 1e-9 {
		t.Errorf("cost $%v, want $%v", got.Cost, want.Cost)
	}
	got.Cost = want.Cost
	if got != want {
		t.Errorf("totals\n got %+v\nwant %+v", got, want)
	}
}
