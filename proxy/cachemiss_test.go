package proxy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/fakeupstream"
	"github.com/compactkit/compact/internal/testing/syncbuf"
	"github.com/compactkit/compact/proxy/store"
)

// missAgent is a Messages API client that caches as Claude Code does (a
// breakpoint on the system prompt and on the newest message) and, when
// diag is set, asks for Anthropic's cache diagnostics with the id of the
// previous response.
type missAgent struct {
	t       *testing.T
	base    string
	header  http.Header
	model   string
	system  string
	session string
	msgs    []string
	stream  bool
	diag    bool
	prevID  string // the previous response's id, "" before the first
	turns   int
	// sent counts the requests answered.
	sent int
}

func newMissAgent(t *testing.T, base string, stream, diag bool) *missAgent {
	h := http.Header{}
	h.Set("X-Api-Key", "sk-ant-canary-0123456789")
	h.Set("Anthropic-Version", "2023-06-01")
	return &missAgent{t: t, base: base, header: h, model: "claude-test", system: "You are a careful test agent. " + strings.Repeat("Keep answers short. ", 40),
		session: "user_abc_account_def_session_miss-" + fmt.Sprint(stream, diag), stream: stream, diag: diag}
}

// userText is the text of turn n: about 6 KB (some 1,500 tokens).
func userText(n int) string {
	return fmt.Sprintf("Turn %d. ", n) + strings.Repeat(fmt.Sprintf("line %d of the notes to keep in mind; ", n), 160)
}

// turn sends the next user message with the whole history and records
// the answer.
func (a *missAgent) turn() {
	a.t.Helper()
	a.turns++
	// Only the newest message carries a breakpoint: the one before goes
	// back to a plain string, as Claude Code does.
	if n := len(a.msgs); n > 0 {
		a.msgs[n-1] = stripBreakpoint(a.msgs[n-1])
	}
	a.msgs = append(a.msgs, fmt.Sprintf(`{"role":"user","content":[{"type":"text","text":%q,"cache_control":{"type":"ephemeral"}}]}`, userText(a.turns)))
	body := map[string]any{"model": a.model, "max_tokens": 1024,
		"system":   []any{map[string]any{"type": "text", "text": a.system, "cache_control": map[string]string{"type": "ephemeral"}}},
		"messages": json.RawMessage("[" + strings.Join(a.msgs, ",") + "]"),
		"metadata": map[string]string{"user_id": a.session}, "stream": a.stream}
	if a.diag {
		var prev any
		if a.prevID != "" {
			prev = a.prevID
		}
		body["diagnostics"] = map[string]any{"previous_message_id": prev}
	}
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", a.base+"/v1/messages", bytes.NewReader(b))
	req.Header = a.header.Clone()
	req.Header.Set("Content-Type", "application/json")
	resp, out := roundTrip(a.t, req)
	if resp.StatusCode != 200 {
		a.t.Fatalf("turn %d: status %d: %s", a.turns, resp.StatusCode, out)
	}
	id, text := readMissAnswer(a.t, out, a.stream)
	a.prevID = id
	a.msgs = append(a.msgs, fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":%q}]}`, text))
	a.sent++
}

// stripBreakpoint turns a message of one text block with a breakpoint
// back into a string content.
func stripBreakpoint(m string) string {
	var msg struct {
		Role    string `json:"role"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal([]byte(m), &msg) != nil || len(msg.Content) != 1 || !strings.Contains(m, "cache_control") {
		return m
	}
	b, _ := json.Marshal(map[string]string{"role": msg.Role, "content": msg.Content[0].Text})
	return string(b)
}

// readMissAnswer returns a Messages answer's id and text, streamed or not.
func readMissAnswer(t *testing.T, b []byte, stream bool) (id, text string) {
	t.Helper()
	if !stream {
		var m struct {
			ID      string `json:"id"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if err := json.Unmarshal(b, &m); err != nil || len(m.Content) == 0 {
			t.Fatalf("answer: %v: %s", err, b)
		}
		return m.ID, m.Content[0].Text
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type    string `json:"type"`
			Message struct {
				ID string `json:"id"`
			} `json:"message"`
			Delta struct {
				Text string `json:"text"`
			} `json:"delta"`
		}
		_ = json.Unmarshal([]byte(data), &ev)
		switch ev.Type {
		case "message_start":
			id = ev.Message.ID
		case "content_block_delta":
			text += ev.Delta.Text
		}
	}
	if id == "" {
		t.Fatalf("stream without message_start: %s", b)
	}
	return id, text
}

// missRig is a proxy before the fake upstream, both on one clock.
type missRig struct {
	fake    *fakeupstream.Fake
	fakeURL string
	now     func() time.Time
	mem     *store.Memory
	ts      string
	clock   atomic.Int64 // seconds after start
	log     *syncbuf.Buffer
}

func newMissRig(t *testing.T, cfg Config) *missRig {
	r := &missRig{mem: store.NewMemory(store.MemoryOptions{}), log: &syncbuf.Buffer{}}
	start := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	now := func() time.Time { return start.Add(time.Duration(r.clock.Load()) * time.Second) }
	var base string
	r.fake, base = fakeupstream.Start(t, fakeupstream.Config{Now: now})
	r.fakeURL, r.now = base, now
	if cfg.Registry == nil {
		cfg.Registry = compact.NewRegistry([]compact.ModelInfo{{ID: "claude-test", ContextWindow: 14000, Prices: &testPrices},
			{ID: "claude-test-2", ContextWindow: 14000, Prices: &testPrices}})
	}
	if cfg.Policy == nil {
		cfg.Policy = compact.Reserve{Tokens: 3000}
	}
	if cfg.Store == nil {
		cfg.Store = r.mem
	}
	cfg.Now, cfg.AheadMark = now, -1
	cfg.Logger = slog.New(slog.NewTextHandler(r.log, nil))
	_, ts := proxyIn(t, base, cfg)
	r.ts = ts.URL
	return r
}

// step moves the clock by d and sends agent's next turn, then returns
// the conversation as the API shows it once the answer is recorded.
func (r *missRig) step(t *testing.T, a *missAgent, d time.Duration) Conversation {
	t.Helper()
	r.clock.Add(int64(d / time.Second))
	a.turn()
	conversationRecord(t, r.mem, a.sent)
	return showOnly(t, r.ts)
}

// showOnly returns the one conversation the proxy at base keeps.
func showOnly(t *testing.T, base string) Conversation {
	t.Helper()
	status, list := apiGet(t, base, "/api/conversations", nil)
	var l ConversationList
	if err := json.Unmarshal(list, &l); err != nil || status != 200 || len(l.Conversations) != 1 {
		t.Fatalf("list: %d %v: %s", status, err, list)
	}
	status, show := apiGet(t, base, "/api/conversations/"+l.Conversations[0].ID, nil)
	var c Conversation
	if err := json.Unmarshal(show, &c); err != nil || status != 200 {
		t.Fatalf("show: %d %v: %s", status, err, show)
	}
	return c
}

// Each cause of a cache miss, produced for real through the proxy and the
// fake provider, streamed and not, is what the conversation API shows as
// lastMiss, with Anthropic's own diagnostics beside it; the requests
// before it hit and show none, and a hit after it keeps it.
func TestCacheMissCauses(t *testing.T) {
	cases := []struct {
		name string
		// change is done before the turn that misses; it returns how
		// long the agent was idle.
		change     func(r *missRig, a *missAgent) time.Duration
		cause      store.MissCause
		divergedAt int // -1: none
		role       string
		provider   string
	}{
		{"edit", func(r *missRig, a *missAgent) time.Duration {
			a.msgs[2] = `{"role":"user","content":"Turn 2, said differently."}`
			return time.Second
		}, store.MissPrefix, 3, "user", "messages_changed"},
		{"system", func(r *missRig, a *missAgent) time.Duration {
			a.system = "Today is Friday. " + a.system
			return time.Second
		}, store.MissPrefix, 0, "", "system_changed"},
		{"idle", func(r *missRig, a *missAgent) time.Duration { return 6 * time.Minute }, store.MissIdle, -1, "", ""},
		{"evicted", func(r *missRig, a *missAgent) time.Duration {
			r.fake.ForgetCache()
			return time.Second
		}, store.MissProvider, -1, "", ""},
		{"model", func(r *missRig, a *missAgent) time.Duration {
			a.model = "claude-test-2"
			return time.Second
		}, store.MissPrefix, 0, "", "model_changed"},
		{"compaction", func(r *missRig, a *missAgent) time.Duration { return time.Second }, store.MissCompaction, 1, "summary", "messages_changed"},
	}
	for _, stream := range []bool{false, true} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s/stream=%v", tc.name, stream), func(t *testing.T) {
				// Without cold-cache compaction: an idle gap would be
				// compacted, and the miss be the compaction's.
				r := newMissRig(t, Config{Window: 14000, NoColdCompaction: tc.cause == store.MissIdle})
				a := newMissAgent(t, r.ts, stream, true)
				var c Conversation
				for range 3 {
					c = r.step(t, a, time.Second)
					if c.LastMiss != nil {
						t.Fatalf("request %d hit the cache but shows a miss: %+v", a.sent, c.LastMiss)
					}
				}
				if tc.cause == store.MissCompaction {
					// An older client opts in with the beta header too.
					a.header.Set("Anthropic-Beta", "cache-diagnosis-2026-04-07")
					for c.Compactions == 0 && a.sent < 12 {
						c = r.step(t, a, time.Second)
					}
					if c.Compactions == 0 {
						t.Fatal("no compaction after 12 turns")
					}
					// The compacted request went with the client's
					// diagnostics object (naming the previous response,
					// which is what the provider compares with) and beta.
					reqs := r.fake.Requests()
					up := reqs[len(reqs)-1]
					if !strings.Contains(string(up.Body), `"diagnostics":{"previous_message_id":"msg_fake`) ||
						!strings.Contains(up.Header.Get("Anthropic-Beta"), "cache-diagnosis-2026-04-07") {
						t.Errorf("the compacted request lost the client's diagnostics: beta %q, body %.300s", up.Header.Get("Anthropic-Beta"), up.Body)
					}
				} else {
					c = r.step(t, a, tc.change(r, a))
				}
				m := c.LastMiss
				if m == nil {
					t.Fatalf("request %d missed (timeline %+v) but shows no miss", a.sent, c.Timeline[len(c.Timeline)-1])
				}
				prev := c.Timeline[len(c.Timeline)-2]
				if m.Cause != tc.cause || m.Request != a.sent || m.Expected != prev.Prompt || m.Read != c.Timeline[len(c.Timeline)-1].CacheRead ||
					m.Role != tc.role || m.ProviderReason != tc.provider || (tc.provider != "" && m.ProviderMissed <= 0) || m.Detail == "" {
					t.Errorf("lastMiss = %+v; want cause %s at request %d, role %q, provider %q", m, tc.cause, a.sent, tc.role, tc.provider)
				}
				switch {
				case tc.divergedAt < 0 && m.DivergedAt != nil:
					t.Errorf("divergedAt %d, want none", *m.DivergedAt)
				case tc.divergedAt >= 0 && (m.DivergedAt == nil || *m.DivergedAt != tc.divergedAt):
					t.Errorf("divergedAt %v, want %d", m.DivergedAt, tc.divergedAt)
				}
				if tc.cause == store.MissIdle && m.Idle < 6*time.Minute {
					t.Errorf("idle %v, want the 6 minutes", m.Idle)
				}
				if !strings.Contains(r.log.String(), "cause="+string(tc.cause)) {
					t.Errorf("no log line for the miss:\n%s", r.log.String())
				}
				// A hit after it keeps it.
				c = r.step(t, a, time.Second)
				if last := c.Timeline[len(c.Timeline)-1]; float64(last.CacheRead) < 0.9*float64(c.Timeline[len(c.Timeline)-2].Prompt) {
					t.Fatalf("the request after the miss missed too: %+v", last)
				}
				if c.LastMiss == nil || c.LastMiss.Request != m.Request || c.LastMiss.Cause != m.Cause {
					t.Errorf("after a hit lastMiss = %+v, want the miss of request %d kept", c.LastMiss, m.Request)
				}
			})
		}
	}
}

// A request passed through unread (the light path: a conversation named
// by a header, far from its trigger) is explained too: idleness from the
// times, anything else as unknown (nothing of what it sent was read),
// with the provider's own reason beside it.
func TestCacheMissLightPath(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			reg := compact.NewRegistry([]compact.ModelInfo{{ID: "claude-test", ContextWindow: 100000, Prices: &testPrices}})
			r := newMissRig(t, Config{Window: 100000, Registry: reg})
			a := newMissAgent(t, r.ts, stream, true)
			a.header.Set("X-Session-Id", "light")
			for range 3 {
				if c := r.step(t, a, time.Second); c.LastMiss != nil {
					t.Fatalf("request %d hit the cache but shows a miss: %+v", a.sent, c.LastMiss)
				}
			}
			a.msgs[2] = `{"role":"user","content":"Turn 2, said differently."}`
			c := r.step(t, a, time.Second)
			// A request's log line is written after its answer was
			// recorded: wait for the fourth.
			waitRequestLogs(t, r.log, 4)
			unread := 0
			for _, line := range strings.Split(r.log.String(), "\n") {
				if strings.Contains(line, "msg=request") && strings.Contains(line, `decision="pass (streamed)"`) && !strings.Contains(line, " tokens=") {
					unread++
				}
			}
			if unread != 3 {
				t.Fatalf("%d requests passed through unread; the test wants requests 2 to 4:\n%s", unread, r.log.String())
			}
			if m := c.LastMiss; m == nil || m.Cause != store.MissUnknown || m.Request != 4 || m.DivergedAt != nil || m.ProviderReason != "messages_changed" {
				t.Errorf("edited history passed unread: lastMiss = %+v, want cause unknown with the provider's messages_changed", m)
			}
			c = r.step(t, a, 6*time.Minute)
			if m := c.LastMiss; m == nil || m.Cause != store.MissIdle || m.Request != 5 || m.Idle != 6*time.Minute {
				t.Errorf("after 6 idle minutes: lastMiss = %+v, want cause idle", m)
			}
		})
	}
}

// Two replicas share the store: a request whose previous one went
// through the other replica has no record here of what was sent, and
// says so rather than guessing; the next one through the same replica
// is explained again.
func TestCacheMissOtherReplica(t *testing.T) {
	r := newMissRig(t, Config{Window: 14000})
	_, other := proxyIn(t, strings.TrimSuffix(r.fakeURL, "/"), Config{Window: 14000, Store: r.mem, AheadMark: -1,
		Registry: compact.NewRegistry([]compact.ModelInfo{{ID: "claude-test", ContextWindow: 14000, Prices: &testPrices}}),
		Now:      r.now})
	a := newMissAgent(t, r.ts, false, false)
	r.step(t, a, time.Second)
	a.base = other.URL
	r.step(t, a, time.Second) // a hit, through the other replica
	a.base = r.ts
	r.fake.ForgetCache()
	c := r.step(t, a, time.Second)
	if m := c.LastMiss; m == nil || m.Cause != store.MissUnknown || !strings.Contains(m.Detail, "another replica") || m.ProviderReason != "" {
		t.Errorf("lastMiss = %+v, want cause unknown: the previous request went through another replica", m)
	}
	r.fake.ForgetCache()
	c = r.step(t, a, time.Second)
	if m := c.LastMiss; m == nil || m.Cause != store.MissProvider || m.Request != 4 {
		t.Errorf("lastMiss = %+v, want cause provider at request 4", m)
	}
}

// BenchmarkMissCheck200k measures what explaining cache misses adds to
// the record of one 200k-token request after its answer: the print of
// what was sent (the units' digests are the request reading's; the
// envelope is hashed) kept in place of the previous one, and the miss
// check against the previous request (a hit here: the common case).
func BenchmarkMissCheck200k(b *testing.B) {
	srv, req, body := prepareRig(b)
	x := &exchange{api: Anthropic, r: req, raw: body, decoded: body, start: time.Now()}
	srv.prepare(x)
	if x.v == nil {
		b.Fatalf("request not read: %s", x.decision)
	}
	prev := &store.LastCall{Usage: compact.Usage{Input: 100, CacheRead: 199000}, At: x.start.Add(-time.Second), Totals: store.Tally{Requests: 1}}
	u := &compact.Usage{Input: 200, CacheRead: 199100}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		last := &store.LastCall{At: x.start, Totals: store.Tally{Requests: i + 2}}
		prev.Totals.Requests = i + 1
		srv.noteMiss(missInput{x: x, key: x.v.id.key, last: last, prev: prev, u: u})
		if last.LastMiss != nil {
			b.Fatal("a hit taken for a miss")
		}
	}
	b.ReportMetric(float64(len(x.v.p.Units)), "units")
}

// On Chat Completions, whose system prompt is the list's first message,
// a changed system message or an edited message is placed by its number
// in the list and its role.
func TestCacheMissChat(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(msgs []string)
		at    int
		role  string
		cause store.MissCause
	}{
		{"system", func(msgs []string) { msgs[0] = `{"role":"system","content":"You are a terse agent."}` }, 1, "system", store.MissPrefix},
		{"user", func(msgs []string) { msgs[3] = `{"role":"user","content":"Turn 2, said differently."}` }, 4, "user", store.MissPrefix},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newMissRig(t, Config{Window: 14000})
			msgs := []string{`{"role":"system","content":"You are a careful test agent."}`}
			sent := 0
			turn := func() Conversation {
				t.Helper()
				sent++
				msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":%q}`, userText(sent)))
				b := `{"model":"claude-test","prompt_cache_key":"chat-miss","messages":[` + strings.Join(msgs, ",") + `]}`
				req, _ := http.NewRequest("POST", r.ts+"/v1/chat/completions", strings.NewReader(b))
				req.Header.Set("Authorization", "Bearer sk-canary-0123456789")
				req.Header.Set("Content-Type", "application/json")
				resp, out := roundTrip(t, req)
				var c struct {
					Choices []struct {
						Message struct {
							Content string `json:"content"`
						} `json:"message"`
					} `json:"choices"`
				}
				if resp.StatusCode != 200 || json.Unmarshal(out, &c) != nil || len(c.Choices) == 0 {
					t.Fatalf("turn %d: %d %s", sent, resp.StatusCode, out)
				}
				msgs = append(msgs, fmt.Sprintf(`{"role":"assistant","content":%q}`, c.Choices[0].Message.Content))
				conversationRecord(t, r.mem, sent)
				return showOnly(t, r.ts)
			}
			for range 3 {
				if c := turn(); c.LastMiss != nil {
					t.Fatalf("request %d hit the cache but shows a miss: %+v", sent, c.LastMiss)
				}
			}
			tc.edit(msgs)
			m := turn().LastMiss
			if m == nil || m.Cause != tc.cause || m.DivergedAt == nil || *m.DivergedAt != tc.at || m.Role != tc.role {
				t.Errorf("lastMiss = %+v, want %s at message %d (%s)", m, tc.cause, tc.at, tc.role)
			}
		})
	}
}

// The prints kept are bounded: one older than printTTL is not compared,
// and past maxPrintEntries the oldest are dropped.
func TestSentPrintsBounded(t *testing.T) {
	var c sentPrints
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	mk := func(n int, at time.Time) *sentPrint { return &sentPrint{entries: make([]printEntry, n), at: at} }
	c.swap("a", mk(10, at))
	if got := c.swap("a", mk(10, at.Add(time.Minute))); got == nil {
		t.Fatal("a fresh print was not returned")
	}
	if got := c.swap("a", mk(10, at.Add(time.Minute+printTTL+time.Second))); got != nil {
		t.Fatal("an expired print was returned")
	}
	half := maxPrintEntries / 2
	now := at.Add(3 * printTTL)
	c.swap("old", mk(half, now))
	c.swap("mid", mk(half, now.Add(time.Minute)))
	c.swap("new", mk(half, now.Add(2*time.Minute)))
	if c.entries > maxPrintEntries || c.byKey["new"] == nil || c.byKey["old"] != nil || c.byKey["a"] != nil {
		t.Errorf("%d entries kept (bound %d), keys %d; want the oldest dropped", c.entries, maxPrintEntries, len(c.byKey))
	}
}
