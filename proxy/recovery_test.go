package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/fakeupstream"
	"github.com/compactkit/compact/internal/testing/syncbuf"
	"github.com/compactkit/compact/proxy/store"
)

// TestOverflowRetried: an upstream overflow error before any byte reached
// the client makes the proxy compact and retry once; the client sees only
// the answer.
func TestOverflowRetried(t *testing.T) {
	for _, api := range []API{Anthropic, Chat, Responses} {
		t.Run(string(api), func(t *testing.T) {
			up := newFakeUpstream(t)
			// The proxy believes the window is large, the upstream knows
			// better: only the overflow error can save the request.
			up.window = 9000
			_, ts := newTestProxy(t, up, Config{Window: 200000, Summarizer: SummarizerExtractive, KeepRecentTokens: 2000})
			c := newClient(t, api, ts.URL)
			for i := 1; i <= 8; i++ {
				c.step(i) // fails the test on a non-200
			}
			var rejected, compacted int
			for _, r := range up.modelRequests() {
				if tokensOf(r.Body) > up.window {
					rejected++
				}
				if summaryOf(t, api, r.Body) != "" {
					compacted++
				}
			}
			if rejected == 0 || compacted == 0 {
				t.Fatalf("rejected %d, compacted %d: the overflow path did not run", rejected, compacted)
			}
			// Anthropic's and OpenAI Chat's messages name the real window:
			// once learned, the proxy compacts before the provider refuses.
			if api != Responses && rejected != 1 {
				t.Errorf("%d requests refused as too long; after the first the window should be known", rejected)
			}
		})
	}
}

// TestOverflowInsideStream: an overflow reported after the stream started
// (HTTP 200, response.created, then response.failed with
// context_length_exceeded, as fakeupstream's OverflowInStream sends it) is
// passed to the client as it came, and the conversation's next request is
// compacted first.
func TestOverflowInsideStream(t *testing.T) {
	fake, base := fakeupstream.Start(t, fakeupstream.Config{Window: 6000, OverflowInStream: true})
	_, ts := proxyIn(t, base, Config{Window: 200000, Summarizer: SummarizerExtractive, KeepRecentTokens: 1500})

	var items []string
	items = append(items, `{"type":"message","role":"user","content":[{"type":"input_text","text":"Read every file."}]}`)
	for i := 0; i < 6; i++ {
		items = append(items,
			fmt.Sprintf(`{"type":"function_call","call_id":"c%d","name":"exec_command","arguments":"{\"cmd\":\"cat f%d\"}"}`, i, i),
			fmt.Sprintf(`{"type":"function_call_output","call_id":"c%d","output":%q}`, i, toolOutput(i)))
	}
	send := func() string {
		body := `{"model":"gpt-test","stream":true,"input":[` + strings.Join(items, ",") + `],"tools":[{"type":"function","name":"exec_command"}]}`
		req, _ := http.NewRequest("POST", ts.URL+"/v1/responses", strings.NewReader(body))
		req.Header.Set("Session_id", "codex-1")
		req.Header.Set("Authorization", "Bearer k")
		_, b := roundTrip(t, req)
		return string(b)
	}
	first := send()
	if !strings.Contains(first, "context_length_exceeded") {
		t.Fatalf("the in-stream error did not reach the client: %s", first)
	}
	items = append(items, `{"type":"message","role":"user","content":[{"type":"input_text","text":"Try again."}]}`)
	send()
	var model []fakeupstream.Request
	for _, r := range fake.Requests() {
		if r.Tools > 0 {
			model = append(model, r)
		}
	}
	if len(model) != 2 {
		t.Fatalf("%d model requests upstream", len(model))
	}
	if !model[0].Overflow || model[0].Status != http.StatusOK {
		t.Fatalf("the first request was not refused inside a 200 stream (status %d, overflow %v)", model[0].Status, model[0].Overflow)
	}
	if isSummaryItem(model[0].Body) {
		t.Error("the first request was compacted though nothing asked for it")
	}
	if !isSummaryItem(model[1].Body) {
		t.Error("the request after an in-stream overflow was not compacted")
	}
}

// TestFailOpen: whatever the proxy cannot do, the request goes through as
// the client sent it.
func TestFailOpen(t *testing.T) {
	t.Run("unparseable body", func(t *testing.T) {
		up := newFakeUpstream(t)
		_, ts := newTestProxy(t, up, Config{Window: 1024})
		body := []byte(`{"model":"gpt-test","messages":[{"role":"user","content":"hi"},]}`)
		resp, err := http.Post(ts.URL+"/v1/chat/completions", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := up.requests(); len(got) != 1 || !bytes.Equal(got[0].Body, body) {
			t.Fatalf("upstream did not get the original bytes")
		}
	})
	t.Run("store down", func(t *testing.T) {
		up := newFakeUpstream(t)
		_, ts := newTestProxy(t, up, Config{Window: 4000, Policy: compact.Reserve{Tokens: 1000}, Summarizer: SummarizerExtractive, Store: brokenStore{}})
		c := newClient(t, Chat, ts.URL)
		for i := 1; i <= 4; i++ {
			c.step(i)
		}
		if !forwardedUnchanged(t, up, c) {
			t.Fatalf("with the store down the request was not forwarded unchanged")
		}
	})
}

// bodyBefore rebuilds the body the client sent when it had n items.
func (c *client) bodyBefore(n int) []byte {
	saved := c.items
	c.items = c.items[:n]
	b := c.body()
	c.items = saved
	return b
}

type brokenStore struct{}

func (brokenStore) Get(context.Context, string) (*store.Record, error) {
	return nil, errors.New("store: connection refused")
}
func (brokenStore) Put(context.Context, string, *store.Record) error {
	return errors.New("store: connection refused")
}
func (brokenStore) Close() error { return nil }

// TestSecretsNeverLeak: the client's key appears in no log line, metric or
// stored record, even when the upstream summarizer fails with it.
func TestSecretsNeverLeak(t *testing.T) {
	var logs syncbuf.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	up := newFakeUpstream(t)
	st := &recordingStore{Store: store.NewMemory(store.MemoryOptions{})}
	srv, ts := newTestProxy(t, up, Config{Window: 12000, Policy: compact.Reserve{Tokens: 3000}, Store: st, Logger: logger})
	// Summary requests (no tools) fail with a body that echoes the key.
	up.echoAuth = true
	for _, api := range []API{Anthropic, Chat, Responses} {
		c := newClient(t, api, ts.URL)
		for i := 1; i <= 12; i++ {
			c.step(i)
		}
	}
	metrics := served(t, ts.URL)
	all := logs.String() + metrics + st.written()
	if !strings.Contains(st.written(), "checkpoints") {
		t.Error("nothing was stored: the test proves nothing")
	}
	for _, canary := range []string{"sk-ant-canary-0123456789", "sk-canary-0123456789", "canary"} {
		if strings.Contains(all, canary) {
			t.Errorf("%q found in logs, metrics or the store", canary)
		}
	}
	if !strings.Contains(metrics, "compact_proxy_compactions_total") {
		t.Errorf("metrics lack compact_proxy_compactions_total")
	}
	_ = srv
}

// recordingStore keeps a copy of every key and record written.
type recordingStore struct {
	store.Store
	mu  sync.Mutex
	buf bytes.Buffer
}

func (r *recordingStore) Put(ctx context.Context, key string, rec *store.Record) error {
	b, _ := json.Marshal(rec)
	r.mu.Lock()
	r.buf.WriteString(key)
	r.buf.Write(b)
	r.mu.Unlock()
	return r.Store.Put(ctx, key, rec)
}

func (r *recordingStore) written() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.String()
}

// TestRefusedRewriteFallsBack: when the provider refuses a compacted
// request for a reason of its own (not an overflow), the client's original
// request is sent instead, and the client never sees the refusal.
func TestRefusedRewriteFallsBack(t *testing.T) {
	up := newFakeUpstream(t)
	up.reject400 = func(body []byte) bool { return isSummaryItem(body) }
	_, ts := newTestProxy(t, up, Config{Window: 12000, Policy: compact.Reserve{Tokens: 3000}, Summarizer: SummarizerExtractive})
	c := newClient(t, Chat, ts.URL)
	for i := 1; i <= 12; i++ {
		c.step(i) // fails on any non-200
	}
	var refused, plain int
	for _, r := range up.modelRequests() {
		if isSummaryItem(r.Body) {
			refused++
		} else {
			plain++
		}
	}
	if refused == 0 {
		t.Fatal("no compacted request was sent: the test proves nothing")
	}
	if refused > 1 {
		t.Errorf("%d compacted requests refused: the proxy kept trying after the first refusal", refused)
	}
	if plain != 12 {
		t.Errorf("%d original requests answered, want all 12", plain)
	}
}

// TestUnknownWindowLearnedFromOverflow: a model no registry knows (a local
// server's) is passed through until the server refuses a request with an
// error naming its window; from then on the proxy compacts it, starting
// with that very request, which the client sees succeed.
func TestUnknownWindowLearnedFromOverflow(t *testing.T) {
	up := newFakeUpstream(t)
	up.window = 9000
	_, ts := newTestProxy(t, up, Config{Registry: compact.NewRegistry(nil), Summarizer: SummarizerExtractive})
	c := newClient(t, Chat, ts.URL)
	for i := 1; i <= 10; i++ {
		c.step(i) // fails on any non-200
	}
	rejected := 0
	for _, r := range up.modelRequests() {
		if tokensOf(r.Body) > up.window {
			rejected++
		}
	}
	if rejected != 1 {
		t.Errorf("%d requests refused as too long, want exactly the first one", rejected)
	}
}

// TestSlowModelSummaryFallsBack: a model summary that takes longer than
// SummaryTimeout is abandoned and the offline summary written instead; the
// client's request goes through compacted.
func TestSlowModelSummaryFallsBack(t *testing.T) {
	up := newFakeUpstream(t)
	up.hangSummaries = true
	_, ts := newTestProxy(t, up, Config{Window: 12000, Policy: compact.Reserve{Tokens: 3000}, SummaryTimeout: 50 * time.Millisecond,
		AheadMark: -1}) // the in-line path: ahead of time, the crossing request does not wait
	c := newClient(t, Chat, ts.URL)
	for i := 1; i <= 8; i++ {
		c.step(i)
	}
	compacted := false
	for _, r := range up.modelRequests() {
		if isSummaryItem(r.Body) {
			compacted = true
		}
	}
	if !compacted {
		t.Error("no compaction: the slow summarizer was not replaced by the offline one")
	}
}

// TestStoreDownLoggedOncePerMinute: a store that stays down is counted on
// every request but logged once a minute; /readyz says so when the store
// can be pinged.
func TestStoreDownLoggedOncePerMinute(t *testing.T) {
	var logs syncbuf.Buffer
	var mu sync.Mutex
	now := time.Unix(1_800_000_000, 0)
	up := newFakeUpstream(t)
	srv, ts := newTestProxy(t, up, Config{Window: 4000, Summarizer: SummarizerExtractive, Store: pingStore{brokenStore{}},
		Now:    func() time.Time { mu.Lock(); defer mu.Unlock(); return now },
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	c := newClient(t, Chat, ts.URL)
	for i := 1; i <= 3; i++ {
		c.step(i)
	}
	mu.Lock()
	now = now.Add(61 * time.Second)
	mu.Unlock()
	c.step(4)
	n := strings.Count(logs.String(), "compaction skipped")
	if n != 2 {
		t.Errorf("%d log lines for a store down over 4 requests in 61 s, want 2", n)
	}
	if got := testutil.ToFloat64(srv.metrics.failOpenTotal.WithLabelValues(stageStore)); got < 4 {
		t.Errorf("fail_open_total{stage=store} = %v, want at least 4", got)
	}
	resp, err := http.Get(ts.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("/readyz %d with the store down, want 503", resp.StatusCode)
	}
}

// pingStore adds a Ping that reports the store's own state.
type pingStore struct{ brokenStore }

func (pingStore) Ping(context.Context) error { return errors.New("store: connection refused") }

func TestReadyWithoutPinger(t *testing.T) {
	up := newFakeUpstream(t)
	_, ts := newTestProxy(t, up, Config{})
	resp, err := http.Get(ts.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "ready\n" {
		t.Errorf("/readyz %d %q", resp.StatusCode, b)
	}
}

// TestStoreDownStillRecoversOverflow: with the store down requests go
// through uncompacted, but one the provider refuses as too long is
// compacted with a summary of its own and retried: the client never sees
// the overflow.
func TestStoreDownStillRecoversOverflow(t *testing.T) {
	up := newFakeUpstream(t)
	up.window = 9000
	_, ts := newTestProxy(t, up, Config{Window: 200000, Summarizer: SummarizerExtractive, Store: brokenStore{}})
	c := newClient(t, Chat, ts.URL)
	for i := 1; i <= 8; i++ {
		c.step(i) // fails on any non-200
	}
	compacted := 0
	for _, r := range up.modelRequests() {
		if isSummaryItem(r.Body) {
			compacted++
		}
	}
	if compacted == 0 {
		t.Error("no request was compacted after an overflow with the store down")
	}
}

// lockless is a store.Memory that reads and writes but cannot take a lock: a
// shared store that failed between the request's read and its compaction
// (a Redis that stalled, or is backing off after a timeout).
type lockless struct{ *store.Memory }

// errDown is the error of a shared store that cannot be reached.
var errDown = errors.New("store: connection refused")

func (lockless) TryLock(context.Context, string, time.Duration) (store.Lock, error) {
	return nil, errDown
}

// TestLockFailureStillRecoversOverflow: when the store read the
// conversation but then cannot lock it, a request the provider refused as
// too long is still compacted (uncoordinated) and retried; the client
// never sees the overflow, and the failure is counted.
func TestLockFailureStillRecoversOverflow(t *testing.T) {
	for _, api := range []API{Anthropic, Chat} {
		t.Run(string(api), func(t *testing.T) {
			up := newFakeUpstream(t)
			up.window = 9000
			srv, ts := newTestProxy(t, up, Config{Window: 200000, Summarizer: SummarizerExtractive, KeepRecentTokens: 2000,
				Store: lockless{store.NewMemory(store.MemoryOptions{})}})
			c := newClient(t, api, ts.URL)
			for i := 1; i <= 8; i++ {
				c.step(i) // fails on any non-200
			}
			compacted := 0
			for _, r := range up.modelRequests() {
				if summaryOf(t, api, r.Body) != "" {
					compacted++
				}
			}
			if compacted == 0 {
				t.Error("no request was compacted after an overflow with the lock failing")
			}
			if n := testutil.ToFloat64(srv.metrics.failOpenTotal.WithLabelValues(stageStore)); n == 0 {
				t.Error("the lock failures were not counted as store fail-opens")
			}
		})
	}
}

// full is a store.Memory that answers reads but refuses every write, as a
// Redis at its maxmemory with the noeviction policy does.
type full struct{ *store.Memory }

var errOOM = errors.New("store: OOM command not allowed when used memory > 'maxmemory'")

func (f full) Put(context.Context, string, *store.Record) error { return errOOM }

func (f full) PutLast(context.Context, string, *store.LastCall) error { return errOOM }

func (f full) TryLock(ctx context.Context, key string, ttl time.Duration) (store.Lock, error) {
	return nil, errOOM
}

// TestFallbackWhenWritesFail: a shared store that reads but refuses writes
// is a failed store: the compaction is kept on this replica and applied
// to the next requests, so the conversation is summarized as often as
// with a healthy store, not on every turn.
func TestFallbackWhenWritesFail(t *testing.T) {
	run := func(st store.Store) (summaries int32, rewritten int) {
		up := newFakeUpstream(t)
		_, ts := newTestProxy(t, up, Config{Window: 6000, Policy: compact.Reserve{Tokens: 1000}, Store: st, LocalFallback: true})
		c := newClient(t, Chat, ts.URL)
		c.header.Set("X-Session-Id", "full-1")
		for i := 1; i <= 10; i++ {
			c.step(i)
		}
		for _, r := range up.modelRequests() {
			if l := listOf(t, Chat, r.Body); len(l) > 1 && isSummaryItem(l[1]) {
				rewritten++
			}
		}
		return up.summaries.Load(), rewritten
	}
	wantSum, wantRew := run(store.NewMemory(store.MemoryOptions{}))
	gotSum, gotRew := run(full{store.NewMemory(store.MemoryOptions{})})
	t.Logf("healthy store: %d summaries, %d requests rewritten; full store: %d, %d", wantSum, wantRew, gotSum, gotRew)
	if wantSum == 0 {
		t.Fatal("the conversation never reached its trigger")
	}
	if gotSum != wantSum || gotRew != wantRew {
		t.Errorf("full store: %d summaries and %d requests rewritten, want %d and %d as with a healthy store", gotSum, gotRew, wantSum, wantRew)
	}
}

// TestRefusedSummaryReplaced: a model that refuses to summarize is asked
// once more; refusing again, its reply is never used: the offline summary
// stands in, fallbacks_total{what="rejected"} counts it and the log says
// so without quoting the conversation.
func TestRefusedSummaryReplaced(t *testing.T) {
	const refusal = "I'm sorry, but I can't help with that request."
	var logs syncbuf.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	up := newFakeUpstream(t)
	up.summaryReply = func(int) string { return refusal }
	_, ts := newTestProxy(t, up, Config{Window: 12000, Policy: compact.Reserve{Tokens: 3000}, Logger: logger})
	c := newClient(t, Anthropic, ts.URL)
	for i := 1; i <= 12; i++ {
		c.step(i)
	}
	if n := up.summaries.Load(); n < 2 {
		t.Fatalf("%d summary requests: the refusal was not asked again", n)
	}
	var summary string
	for _, r := range up.modelRequests() {
		if s := summaryOf(t, Anthropic, r.Body); s != "" {
			summary = s
		}
	}
	if summary == "" || strings.Contains(summary, refusal) || !strings.Contains(summary, "the model's summary was refused") {
		t.Errorf("summary sent upstream: %.300q", summary)
	}
	if got := sample(t, served(t, ts.URL), `compact_proxy_fallbacks_total{what="rejected"}`); got == "0" || got == "" {
		t.Errorf(`fallbacks_total{what="rejected"} = %q`, got)
	}
	if !strings.Contains(logs.String(), "model summary refused by the review") || strings.Contains(logs.String(), "STEP-") {
		t.Errorf("log:\n%s", logs.String())
	}
}
