package redis

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/compactkit/compact/internal/testing/clustertest"
	"github.com/compactkit/compact/internal/testing/fakeupstream"
	"github.com/compactkit/compact/proxy/store"
)

// The tests in this file run the fault list against three
// `compact proxy` processes sharing one real redis-server, 50 concurrent
// conversations of 30 tool steps each (internal/testing/clustertest), one fault
// per test. After each, checkAfterFault looks at what is left in Redis.

// faultLockTTL is the replicas' --lock-ttl in these tests: short, so that
// a lock left behind would be found expired quickly.
const faultLockTTL = 2 * time.Second

// processes returns a clustertest.Options.Start that runs three replicas
// on srv with extra flags.
func processes(srv *server, extra ...string) func(t *testing.T, upstream string) []string {
	return func(t *testing.T, upstream string) []string {
		var urls []string
		for i := 0; i < 3; i++ {
			flags := append([]string{"--lock-ttl", faultLockTTL.String()}, extra...)
			urls = append(urls, startReplica(t, srv.url(), upstream, flags...).url)
		}
		return urls
	}
}

// fail500 returns a clustertest.Options.Upstream that answers the
// requests pick chooses with OpenAI's HTTP 500 server_error, counting
// them in n, and passes the others on.
func fail500(pick func(*http.Request) bool, n *atomic.Int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if pick(r) {
				n.Add(1)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusInternalServerError)
				io.WriteString(w, `{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}`)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// checkAfterFault checks that nothing is stuck or broken in Redis once the
// run is over: no lock outlives its expiry, every record decodes, and
// (with res) each conversation's stored newest compaction is the summary
// its last request carried upstream.
func checkAfterFault(t *testing.T, srv *server, res *clustertest.Result) {
	t.Helper()
	ctx := context.Background()
	opts, err := goredis.ParseURL(srv.url())
	if err != nil {
		t.Fatal(err)
	}
	c := goredis.NewClient(opts)
	defer c.Close()
	deadline := time.Now().Add(faultLockTTL + 2*time.Second)
	for {
		locks, err := c.Keys(ctx, DefaultPrefix+"lock:*").Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(locks) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("locks still held %v after their expiry: %v", faultLockTTL, locks)
		}
		time.Sleep(100 * time.Millisecond)
	}
	st := srv.open(t, Options{})
	keys, err := c.Keys(ctx, DefaultPrefix+"c:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	newest := map[string]bool{}
	for _, k := range keys {
		rec, err := st.Get(ctx, strings.TrimPrefix(k, DefaultPrefix))
		if err != nil {
			t.Errorf("record %s: %v", k, err)
			continue
		}
		if len(rec.Checkpoints) > 0 {
			newest[string(rec.Checkpoints[0].Item)] = true
		}
	}
	if res == nil {
		t.Logf("%d records decode, no lock left", len(keys))
		return
	}
	if len(res.LastSummary) == 0 {
		t.Fatal("no conversation reached the provider")
	}
	for conv, summary := range res.LastSummary {
		if summary == "" {
			t.Errorf("%s: its last request carried no summary", conv)
		} else if !newest[summary] {
			t.Errorf("%s: the summary of its last request is not the newest stored compaction", conv)
		}
	}
	t.Logf("%d records, %d conversations consistent, no lock left", len(keys), len(res.LastSummary))
}

// modelRequest reads r's body (putting it back) and reports whether it is
// an agent's request (it offers tools), not the proxy's summary request (a
// transcript without tools, or the conversation itself with its tools made
// uncallable: tool_choice "none").
func modelRequest(r *http.Request) bool {
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	return fakeupstream.IsAgentTurn(fakeupstream.Chat, b)
}

// everyNth returns a test that picks one agent request in n of each
// conversation (by X-Session-Id): never two in a row, so that a client's
// retry of a picked request goes through.
func everyNth(n int) func(r *http.Request) bool {
	var mu sync.Mutex
	count := map[string]int{}
	return func(r *http.Request) bool {
		if !modelRequest(r) {
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		id := r.Header.Get("X-Session-Id")
		count[id]++
		return count[id]%n == n/2
	}
}

// holdOpen answers with the headers and the first chunk of a Chat stream,
// then waits until the request is cancelled, and counts it.
func holdOpen(w http.ResponseWriter, r *http.Request, cancelled *atomic.Int64) {
	io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, "data: {\"id\":\"chatcmpl-held\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n")
	w.(http.Flusher).Flush()
	select {
	case <-r.Context().Done():
		cancelled.Add(1)
	case <-time.After(time.Minute):
	}
}

// TestReplicaProcessesOnRedis is the run without faults: three processes,
// 50 conversations, exactly one compaction per crossing (the checks of
// clustertest.Run), and a consistent store afterwards.
func TestReplicaProcessesOnRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	srv := startServer(t)
	res := clustertest.Run(t, nil, clustertest.Options{Start: processes(srv)})
	t.Log(res)
	checkAfterFault(t, srv, &res)
}

// TestFaultRedisRestart stops redis-server half way through the run and
// starts it again, empty, 100 requests later. The replicas keep the
// conversations in memory meanwhile; every request is answered, and
// afterwards the records in the new Redis decode and no lock is stuck.
func TestFaultRedisRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	srv := startServer(t)
	res := clustertest.Run(t, nil, clustertest.Options{Start: processes(srv), Down: srv.stop, Up: srv.start})
	t.Log(res)
	if res.Refused > 60 {
		t.Errorf("%d requests reached the provider too long during the outage; the local fallback should keep most compacted", res.Refused)
	}
	checkAfterFault(t, srv, nil)
}

// TestFaultUpstream500s: the provider fails one agent request in 7 of
// each conversation with a 500. The client sees it as it came and sends the request again; no
// compaction is lost or made twice.
func TestFaultUpstream500s(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	srv := startServer(t)
	var failed atomic.Int64
	pick := everyNth(7)
	res := clustertest.Run(t, nil, clustertest.Options{Start: processes(srv), Upstream: fail500(pick, &failed)})
	t.Logf("%d requests, %d answered 500, %d retried by the clients, %v compactions", res.Requests, failed.Load(), res.Retries, res.Compactions)
	if failed.Load() == 0 || int64(res.Retries) != failed.Load() {
		t.Errorf("%d 500s, %d retries: every 500 should reach the client once", failed.Load(), res.Retries)
	}
	checkAfterFault(t, srv, &res)
}

// TestFaultUpstreamTimeouts: one agent request in 13 of each conversation
// gets no answer at all. The client gives up after a second and sends it
// again; the proxy cancels the abandoned upstream request.
func TestFaultUpstreamTimeouts(t *testing.T) {
	unanswered(t, false, "never answered", func(w http.ResponseWriter, r *http.Request, cancelled *atomic.Int64) {
		select {
		case <-r.Context().Done():
			cancelled.Add(1)
		case <-time.After(time.Minute):
		}
	})
}

// TestFaultStalledStream: one streamed answer in 13 of each conversation
// stops after its first chunk. The client times out and sends the request
// again; the proxy cancels the stalled upstream request.
func TestFaultStalledStream(t *testing.T) {
	unanswered(t, true, "streams stalled", holdOpen)
}

// unanswered runs the conversations (streamed or not) with one agent
// request in 13 of each answered by hold, which never finishes the answer
// and counts the request once the proxy cancels it. Each such request
// must be cancelled upstream and sent again by its client, whose timeout
// is a second. The replicas summarize in line (--ahead-mark 0): the check
// that each conversation's last request carries its newest compaction is
// the in-line one; written ahead, a conversation whose crossing comes
// late may end, by design, while its summary is still being written
// (under -race on a loaded machine it did), and the summaries written
// ahead are checked under faults by TestFaultSummarizerFails.
func unanswered(t *testing.T, stream bool, what string, hold func(http.ResponseWriter, *http.Request, *atomic.Int64)) {
	if testing.Short() {
		t.Skip("-short")
	}
	srv := startServer(t)
	var held, cancelled atomic.Int64
	pick := everyNth(13)
	res := clustertest.Run(t, nil, clustertest.Options{Start: processes(srv, "--ahead-mark", "0"), Stream: stream, ClientTimeout: time.Second, Upstream: func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if pick(r) {
				held.Add(1)
				hold(w, r, &cancelled)
				return
			}
			next.ServeHTTP(w, r)
		})
	}})
	waitCount(t, &cancelled, held.Load(), what+": upstream requests cancelled")
	t.Logf("%d requests, %d %s, %d cancelled upstream, %d retried by the clients", res.Requests, held.Load(), what, cancelled.Load(), res.Retries)
	if held.Load() == 0 || int64(res.Retries) < held.Load() {
		t.Errorf("%d %s, %d retries", held.Load(), what, res.Retries)
	}
	checkAfterFault(t, srv, &res)
}

// TestFaultSummarizerFails: the replicas write summaries with the model
// (--summarizer upstream) and every summary request fails. Each
// compaction falls back to the offline summary, still exactly one per
// crossing.
func TestFaultSummarizerFails(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	srv := startServer(t)
	var refused atomic.Int64
	summaries := func(r *http.Request) bool {
		return !modelRequest(r) && strings.HasSuffix(r.URL.Path, "/chat/completions")
	}
	res := clustertest.Run(t, nil, clustertest.Options{Start: processes(srv, "--summarizer", "upstream"), Upstream: fail500(summaries, &refused)})
	t.Logf("%d requests, %d summary requests failed, %v compactions", res.Requests, refused.Load(), res.Compactions)
	if refused.Load() == 0 {
		t.Fatal("no summary request reached the provider: the replicas did not use the model")
	}
	model := fakeupstream.SummaryText[strings.Index(fakeupstream.SummaryText, "Several"):]
	model = model[:strings.Index(model, "\n")]
	for conv, summary := range res.LastSummary {
		if strings.Contains(summary, model) {
			t.Errorf("%s carries the model's summary, which failed", conv)
		}
	}
	checkAfterFault(t, srv, &res)
}

// TestFaultClientDisconnects: agents abandon one answer in nine after its
// first chunk and send the request again. Each abandoned upstream request
// is cancelled by the proxy, and the conversations go on.
func TestFaultClientDisconnects(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	srv := startServer(t)
	var held, cancelled atomic.Int64
	res := clustertest.Run(t, nil, clustertest.Options{Start: processes(srv), Stream: true,
		Disconnect: func(conv, turn int) bool { return turn > 0 && (conv+turn)%9 == 0 },
		Upstream: func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("X-Test-Disconnect") != "" {
					held.Add(1)
					holdOpen(w, r, &cancelled)
					return
				}
				next.ServeHTTP(w, r)
			})
		}})
	waitCount(t, &cancelled, int64(res.Disconnects), "abandoned upstream requests cancelled")
	t.Logf("%d requests, %d answers abandoned by the clients, %d reached the provider, %d cancelled upstream", res.Requests, res.Disconnects, held.Load(), cancelled.Load())
	if res.Disconnects == 0 || held.Load() != int64(res.Disconnects) {
		t.Errorf("%d disconnects, %d of them reached the provider", res.Disconnects, held.Load())
	}
	checkAfterFault(t, srv, &res)
}

// waitCount waits up to 5 s for n to reach want (cancellations reach the
// provider shortly after the client gives up) and fails the test if not.
func waitCount(t *testing.T, n *atomic.Int64, want int64, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for n.Load() < want && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n.Load() != want {
		t.Errorf("%s: %d of %d", what, n.Load(), want)
	}
}

// Interface checks: the store is what the proxy needs of a shared store.
var (
	_ store.LastStore = (*Store)(nil)
	_ store.Locker    = (*Store)(nil)
	_ store.Pinger    = (*Store)(nil)
)
