package redis

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compactkit/compact/proxy"
)

// BenchmarkReplicas sends streamed requests of 20,000-token conversations
// from 50 and 200 concurrent clients, directly to a fake provider and
// through one and three proxy replicas sharing a real Redis (each replica
// an http.Server of its own in this process; clients spread round-robin
// over the replicas). No compaction runs. It reports requests per second
// and the time to the first byte (p50, p99); the added latency is the
// difference with the direct row of the same run.
func BenchmarkReplicas(b *testing.B) {
	srv := startServer(b)
	body := conversation(20000)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":20000,\"output_tokens\":1}}}\n\n")
		f.Flush()
		for i := 0; i < 20; i++ {
			io.WriteString(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"word \"}}\n\n")
			f.Flush()
		}
		io.WriteString(w, "event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":20}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	}))
	defer up.Close()
	replicas := func(n int) []string {
		var urls []string
		for i := 0; i < n; i++ {
			st, err := Open(context.Background(), srv.url(), Options{})
			if err != nil {
				b.Fatal(err)
			}
			p, err := proxy.New(proxy.Config{AnthropicUpstream: up.URL, Window: 1000000, Summarizer: proxy.SummarizerExtractive, Store: st, LocalFallback: true})
			if err != nil {
				b.Fatal(err)
			}
			ts := httptest.NewServer(p)
			b.Cleanup(func() { ts.Close(); p.Close() })
			urls = append(urls, ts.URL)
		}
		return urls
	}
	targets := []struct {
		name string
		urls []string
	}{{"direct", []string{up.URL}}, {"1-replica", replicas(1)}, {"3-replicas", replicas(3)}}
	for _, conc := range []int{50, 200} {
		for _, target := range targets {
			b.Run(fmt.Sprintf("%s/c%d", target.name, conc), func(b *testing.B) {
				client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc, MaxIdleConns: 4 * conc, DisableCompression: true}}
				var mu sync.Mutex
				var first []time.Duration
				var next atomic.Int64
				b.SetParallelism((conc + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
				start := time.Now()
				b.RunParallel(func(pb *testing.PB) {
					id := next.Add(1)
					var mine []time.Duration
					buf := make([]byte, 32<<10)
					for i := 0; pb.Next(); i++ {
						u := target.urls[(int(id)+i)%len(target.urls)]
						req, _ := http.NewRequest("POST", u+"/v1/messages", bytes.NewReader(body))
						req.Header.Set("Content-Type", "application/json")
						req.Header.Set("X-Claude-Code-Session-Id", fmt.Sprintf("bench-%d", id))
						req.Header.Set("X-Api-Key", "sk-ant-bench") // credential-less requests are not compacted
						t0 := time.Now()
						resp, err := client.Do(req)
						if err != nil {
							b.Error(err)
							return
						}
						resp.Body.Read(buf)
						mine = append(mine, time.Since(t0))
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
					mu.Lock()
					first = append(first, mine...)
					mu.Unlock()
				})
				elapsed := time.Since(start)
				slices.Sort(first)
				q := func(p float64) float64 { return float64(first[int(float64(len(first)-1)*p)].Microseconds()) }
				b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
				b.ReportMetric(q(0.5), "first-byte-p50-µs")
				b.ReportMetric(q(0.99), "first-byte-p99-µs")
			})
		}
	}
}

// conversation is an Anthropic request of about tokens tokens (bytes/4).
func conversation(tokens int) []byte {
	var items []string
	size := 0
	for i := 0; size < 4*tokens-2000; i++ {
		call := fmt.Sprintf(`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_%d","name":"Bash","input":{"command":"cat f%d"}}]}`, i, i)
		result := fmt.Sprintf(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%d","content":%q}]}`, i, strings.Repeat("output line of a tool\n", 200))
		items = append(items, call, result)
		size += len(call) + len(result)
	}
	return []byte(`{"model":"claude-test","max_tokens":1000,"stream":true,"messages":[{"role":"user","content":"go"},` + strings.Join(items, ",") + `]}`)
}
