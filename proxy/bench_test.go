package proxy

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// bigConversation is an Anthropic request of about tokens tokens (bytes/4)
// made of tool calls and results, as an agent sends after a long session.
func bigConversation(tokens int) []byte {
	var items []string
	items = append(items, `{"role":"user","content":"Refactor the module."}`)
	size := 0
	for i := 0; size < 4*tokens-10000; i++ {
		call := fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":"Step %d."},{"type":"tool_use","id":"toolu_%d","name":"Bash","input":{"command":"cat file%d.go"}}]}`, i, i, i)
		result := fmt.Sprintf(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%d","content":%q}]}`, i, toolOutput(i))
		items = append(items, call, result)
		size += len(call) + len(result) + 2
	}
	return []byte(`{"model":"claude-test","max_tokens":32000,"stream":true,"system":"You are an agent.","messages":[` + strings.Join(items, ",") + `],"tools":[{"name":"Bash","input_schema":{"type":"object"}}]}`)
}

// sseUpstream streams n small events per request, as fast as it can.
func sseUpstream(n int) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":200000,\"output_tokens\":1}}}\n\n")
		f.Flush()
		for i := 0; i < n; i++ {
			io.WriteString(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"word \"}}\n\n")
			f.Flush()
		}
		io.WriteString(w, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":50}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	}))
}

// sseUpstreamAndProxy starts sseUpstream(n) and a proxy in front of it
// with a window no conversation reaches; both close when b ends.
func sseUpstreamAndProxy(b *testing.B, n int) (up, px *httptest.Server) {
	b.Helper()
	up = sseUpstream(n)
	b.Cleanup(up.Close)
	_, px = proxyIn(b, up.URL, Config{Window: 1000000, Summarizer: SummarizerExtractive})
	return up, px
}

// BenchmarkOverhead200k sends a 200k-token conversation that needs no
// compaction, directly to the upstream and through the proxy, and reports
// the time to the first response byte (p50, p99) and per streamed event.
// The difference between the two sub-benchmarks is the proxy's overhead.
func BenchmarkOverhead200k(b *testing.B) {
	body := bigConversation(200000)
	const events = 50
	up, px := sseUpstreamAndProxy(b, events)
	// The alternative: the standard library's reverse proxy, which reads
	// nothing and compacts nothing. What compact adds over it is the cost
	// of compaction; what it adds over direct includes the extra hop.
	upURL, _ := url.Parse(up.URL)
	plain := httptest.NewServer(httputil.NewSingleHostReverseProxy(upURL))
	defer plain.Close()
	tr := &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true}
	client := &http.Client{Transport: tr}
	for _, target := range []struct{ name, url string }{{"direct", up.URL}, {"httputil", plain.URL}, {"proxy", px.URL}} {
		b.Run(target.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			var first, perEvent []time.Duration
			buf := make([]byte, 64<<10)
			for b.Loop() {
				start := time.Now()
				req, _ := http.NewRequest("POST", target.url+"/v1/messages", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Claude-Code-Session-Id", "bench-session")
				req.Header.Set("X-Api-Key", "sk-ant-bench") // credential-less requests are not compacted
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				n, err := resp.Body.Read(buf)
				if n == 0 && err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				first = append(first, t1.Sub(start))
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				perEvent = append(perEvent, time.Since(t1)/events)
			}
			slices.Sort(first)
			slices.Sort(perEvent)
			q := func(d []time.Duration, p float64) float64 { return float64(d[int(float64(len(d)-1)*p)].Microseconds()) }
			b.ReportMetric(q(first, 0.5), "first-byte-p50-µs")
			b.ReportMetric(q(first, 0.99), "first-byte-p99-µs")
			b.ReportMetric(q(perEvent, 0.5), "event-p50-µs")
			b.ReportMetric(q(perEvent, 0.99), "event-p99-µs")
		})
	}
}

// prepareRig returns a proxy with a window no conversation reaches, a
// request of a conversation named by its header, and the body of a
// 200k-token conversation, for benchmarks of the proxy's own work.
func prepareRig(b *testing.B) (*Server, *http.Request, []byte) {
	b.Helper()
	srv, err := New(Config{Window: 1000000, Summarizer: SummarizerExtractive})
	if err != nil {
		b.Fatal(err)
	}
	req := httptest.NewRequest("POST", "/v1/messages", nil)
	req.Header.Set("X-Claude-Code-Session-Id", "bench")
	req.Header.Set("X-Api-Key", "sk-ant-bench") // credential-less requests are not compacted
	return srv, req, bigConversation(200000)
}

// BenchmarkPrepare200k measures the proxy's own work on one 200k-token
// request (read, parse, hash chain, store lookup, measure) without the
// network, and reports the memory it allocates against the body size.
func BenchmarkPrepare200k(b *testing.B) {
	srv, req, body := prepareRig(b)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.TotalAlloc
	for b.Loop() {
		x := &exchange{api: Anthropic, r: req, raw: body, decoded: body, start: time.Now()}
		srv.prepare(x)
		if x.v == nil {
			b.Fatalf("request not read: %s", x.decision)
		}
	}
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.TotalAlloc-before)/float64(b.N)/float64(len(body)), "alloc/body")
}

// BenchmarkThroughput sends streamed requests of a 20k-token conversation
// from 50 concurrent clients, directly and through the proxy, and reports
// requests per second.
func BenchmarkThroughput(b *testing.B) {
	body := bigConversation(20000)
	up, px := sseUpstreamAndProxy(b, 20)
	for _, target := range []struct{ name, url string }{{"direct", up.URL}, {"proxy", px.URL}} {
		b.Run(target.name, func(b *testing.B) {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}
			b.SetParallelism(25) // 2 cores x 25 = 50 clients
			var n atomic.Int64
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				id := fmt.Sprintf("conv-%d", n.Add(1))
				for pb.Next() {
					req, _ := http.NewRequest("POST", target.url+"/v1/messages", bytes.NewReader(body))
					req.Header.Set("X-Claude-Code-Session-Id", id)
					req.Header.Set("X-Api-Key", "sk-ant-bench") // credential-less requests are not compacted
					resp, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
		})
	}
}
