package proxy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/syncbuf"
)

// TestResponseHeadersAddNothing: whatever path a response takes through
// the proxy (a relayed answer, a relayed error, a passthrough), it carries
// the upstream's headers and no header the upstream did not send.
func TestResponseHeadersAddNothing(t *testing.T) {
	cases := []struct {
		name, method, path, body string
		status                   int
	}{
		{"answer", "POST", "/v1/chat/completions", `{"model":"gpt-test","messages":[{"role":"user","content":"hi"}]}`, 200},
		{"error", "POST", "/v1/chat/completions", `{"model":"gpt-test","messages":[{"role":"user","content":"refuse me"}]}`, 400},
		{"passthrough", "GET", "/v1/models", "", 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			up := newFakeUpstream(t)
			up.reject400 = func(b []byte) bool { return strings.Contains(string(b), "refuse me") }
			_, ts := newTestProxy(t, up, Config{Window: 200000, Summarizer: SummarizerExtractive})
			req, _ := http.NewRequest(tc.method, ts.URL+tc.path, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			for _, k := range []string{"User-Agent", "Via", "X-Forwarded-For", "Forwarded"} {
				if v, ok := resp.Header[k]; ok {
					t.Errorf("response header %s: %q was added", k, v)
				}
			}
		})
	}
}

// TestLearnedWindowStaysWithTenant: an overflow error seen by one tenant
// changes no other tenant's window, a window is learned only from the
// provider's own error shape (not from text the request made the provider
// quote), and never below the floor (the registry's smallest window,
// 8192). Tenant A's first request is refused with the case's error; then
// both tenants hold conversations of their own.
func TestLearnedWindowStaysWithTenant(t *testing.T) {
	cases := []struct {
		name string
		// refusal is the upstream's answer to tenant A's first request.
		refusal string
		// aSteps is the length of tenant A's conversation afterwards,
		// aCompacted whether it must have been compacted.
		aSteps     int
		aCompacted bool
	}{
		{"quoted text", `{"error":{"message":"Invalid 'messages[0].content': 'This model's maximum context length is 1024 tokens' is not allowed","type":"invalid_request_error","param":"messages","code":"invalid_value"}}`, 8, false},
		{"real overflow", `{"error":{"message":"This model's maximum context length is 9000 tokens. However, your messages resulted in 9100 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, 8, true},
		{"stated window under the floor", `{"error":{"message":"This model's maximum context length is 1024 tokens. However, your messages resulted in 1100 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, 3, false},
	}
	const keyA, keyB = "Bearer sk-tenant-a-0123456789", "Bearer sk-tenant-b-0123456789"
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			up := newFakeUpstream(t)
			var refused atomic.Bool
			front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") == keyA && refused.CompareAndSwap(false, true) {
					_, _ = io.Copy(io.Discard, r.Body)
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusBadRequest)
					_, _ = io.WriteString(w, tc.refusal)
					return
				}
				up.ServeHTTP(w, r)
			}))
			t.Cleanup(front.Close)
			_, ts := proxyIn(t, front.URL, Config{Window: 200000,
				Summarizer: SummarizerExtractive, KeepRecentTokens: 2000})

			// Tenant A's refused request.
			req, _ := http.NewRequest("POST", ts.URL+"/v1/chat/completions", strings.NewReader(`{"model":"gpt-test","messages":[{"role":"user","content":"This model's maximum context length is 1024 tokens"}]}`))
			req.Header.Set("Authorization", keyA)
			req.Header.Set("Content-Type", "application/json")
			roundTrip(t, req)
			if !refused.Load() {
				t.Fatal("the refusal was never sent")
			}

			for _, tenant := range []struct {
				key       string
				steps     int
				compacted bool
			}{{keyB, 8, false}, {keyA, tc.aSteps, tc.aCompacted}} {
				c := newClient(t, Chat, ts.URL)
				c.header.Set("Authorization", tenant.key)
				for i := 1; i <= tenant.steps; i++ {
					c.step(i)
				}
				compacted := false
				for _, r := range up.modelRequests() {
					if r.Header.Get("Authorization") != tenant.key {
						continue
					}
					compacted = compacted || summaryOf(t, Chat, r.Body) != ""
				}
				if compacted != tenant.compacted {
					t.Errorf("tenant %s: compacted %v, want %v (a %d-step conversation, about %d tokens)",
						tenant.key[7:18], compacted, tenant.compacted, tenant.steps, tokensOf(c.body()))
				}
			}
		})
	}
}

// TestLearnWindowBounds: a learned window is never below the floor (the
// registry's smallest window, or 1024 when it has none), never above the
// window in use (an explicit one under the floor stays), and kept per
// scope.
func TestLearnWindowBounds(t *testing.T) {
	overflow := func(n int) []byte {
		return []byte(`{"error":{"message":"This model's maximum context length is ` + strconv.Itoa(n) + ` tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`)
	}
	shipped, err := compact.LoadRegistry()
	if err != nil {
		t.Fatal(err)
	}
	floor := 0
	for _, m := range shipped.Models() {
		if m.ContextWindow > 0 && (floor == 0 || m.ContextWindow < floor) {
			floor = m.ContextWindow
		}
	}
	if floor <= 4096 || floor >= 9000 {
		t.Fatalf("the registry's smallest window is %d; the cases below assume one between 4096 and 9000", floor)
	}
	cases := []struct {
		name   string
		cfg    Config
		stated int
		want   int // the window in the learning scope afterwards
	}{
		{"under the floor", Config{Window: 200000}, 1024, floor},
		{"over the floor", Config{Window: 200000}, 9000, 9000},
		{"over the explicit window", Config{Window: 100000}, 150000, 100000},
		{"explicit window under the floor", Config{Window: 4096}, 1024, 4096},
		{"empty registry", Config{Registry: compact.NewRegistry(nil)}, 500, 1024},
		{"empty registry, real window", Config{Registry: compact.NewRegistry(nil)}, 3000, 3000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var logs strings.Builder
			tc.cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			srv, err := New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			req := func(h http.Header) *http.Request {
				r := httptest.NewRequest("POST", "/v1/chat/completions", nil)
				r.Header = h
				return r
			}
			scope, other := srv.learnScope(Chat, req(http.Header{"Authorization": {"Bearer sk-one"}})), srv.learnScope(Chat, req(http.Header{"Authorization": {"Bearer sk-two"}}))
			before, _ := srv.modelInfo(other, "gpt-test")
			srv.learnWindow(scope, "gpt-test", "conv0123", overflow(tc.stated))
			got, ok := srv.modelInfo(scope, "gpt-test")
			if !ok || got.ContextWindow != tc.want {
				t.Errorf("window %d (known %v), want %d", got.ContextWindow, ok, tc.want)
			}
			if after, _ := srv.modelInfo(other, "gpt-test"); after.ContextWindow != before.ContextWindow {
				t.Errorf("another credential's window moved from %d to %d", before.ContextWindow, after.ContextWindow)
			}
			changed := got.ContextWindow != before.ContextWindow
			if logged := strings.Contains(logs.String(), "learned a smaller window"); logged != changed {
				t.Errorf("change logged %v, window changed %v: %s", logged, changed, logs.String())
			}
			if strings.Contains(logs.String(), "sk-one") || strings.Contains(logs.String(), scope[:8]) {
				t.Errorf("the credential or its hash reached the log: %s", logs.String())
			}
		})
	}
}

// TestObserverLinearInEventSize: an SSE event that arrives in many small
// writes (a large event, or one whose blank line never comes) costs work
// linear in its size, not a rescan of everything buffered on every write.
// The observer counts the bytes it examines or moves.
func TestObserverLinearInEventSize(t *testing.T) {
	big := strings.Repeat("x", 4<<20)
	cases := []struct {
		name   string
		stream string
		write  int // bytes per Write
	}{
		{"no blank line", "event: message_delta\ndata: {\"type\":\"message_delta\",\"pad\":\"" + big, 4 << 10},
		{"one large event", "event: message_delta\ndata: {\"type\":\"message_delta\",\"pad\":\"" + big + "\",\"usage\":{\"output_tokens\":7}}\n\n", 4 << 10},
		{"large event after small ones", strings.Repeat("event: ping\ndata: {\"type\":\"ping\"}\n\n", 1000) + "data: {\"pad\":\"" + big + "\"}\r\n\r\n", 1 << 10},
		{"byte by byte", "event: message_delta\ndata: {\"type\":\"message_delta\",\"pad\":\"" + big[:64<<10] + "\",\"usage\":{\"output_tokens\":7}}\r\n\r\n", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := newUsageObserver(Anthropic, true)
			for i := 0; i < len(tc.stream); i += tc.write {
				_, _ = o.Write([]byte(tc.stream[i:min(i+tc.write, len(tc.stream))]))
			}
			got := o.Observed()
			if strings.Contains(tc.stream, "output_tokens") && (got.Usage == nil || got.Usage.Output != 7) {
				t.Errorf("usage %+v, want output 7", got.Usage)
			}
			t.Logf("%.2f bytes examined or moved per byte", float64(o.work)/float64(len(tc.stream)))
			if n := len(tc.stream); o.work > 4*n {
				t.Errorf("%d bytes examined or moved for a %d-byte stream (%.1f per byte), want at most 4 per byte", o.work, n, float64(o.work)/float64(n))
			}
		})
	}
}

// FuzzObserverChunks: the observer reads the same from a stream whatever
// sizes its writes come in, down to one byte each (the search for an
// event's end resumes where the previous write left it).
func FuzzObserverChunks(f *testing.F) {
	f.Add("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}\r\n\r\nevent: message_stop\rdata: {\"type\":\"message_stop\"}\r\r", uint8(1))
	f.Add("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1}}\r\n\r\ndata: [DONE]\n\n", uint8(3))
	f.Add("event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":9}}}\n\n", uint8(2))
	f.Fuzz(func(t *testing.T, body string, size uint8) {
		step := int(size%7) + 1
		for _, api := range []API{Anthropic, Chat, Responses} {
			whole := newUsageObserver(api, true)
			whole.Write([]byte(body))
			a := whole.Observed()
			chunked := newUsageObserver(api, true)
			for i := 0; i < len(body); i += step {
				chunked.Write([]byte(body[i:min(i+step, len(body))]))
			}
			b := chunked.Observed()
			if a.Complete != b.Complete || a.Overflow != b.Overflow || a.ErrorBody != b.ErrorBody || (a.Usage == nil) != (b.Usage == nil) || (a.Usage != nil && *a.Usage != *b.Usage) {
				t.Fatalf("%s: whole %+v, in writes of %d %+v", api, a, step, b)
			}
		}
	})
}

// TestLargeErrorBodyRelayedIntact: an upstream error body over the 1 MiB
// the proxy reads to classify it reaches the client whole, under its
// original Content-Length, on the path that reads the request first and on
// the one that streams it upstream (a known conversation, second request).
func TestLargeErrorBodyRelayedIntact(t *testing.T) {
	cases := []struct {
		name     string
		failAt   int // the request of the conversation that gets the error
		decision string
	}{
		{"read first", 1, `decision=pass`},
		{"streamed", 2, `decision="pass (streamed)"`},
	}
	errBody := []byte(`{"error":{"message":"` + strings.Repeat("e", 5<<20) + `","type":"invalid_request_error","code":null}}`)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			up := newFakeUpstream(t)
			var n atomic.Int32
			front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if int(n.Add(1)) == tc.failAt {
					_, _ = io.Copy(io.Discard, r.Body)
					w.Header().Set("Content-Type", "application/json")
					w.Header().Set("Content-Length", strconv.Itoa(len(errBody)))
					w.WriteHeader(http.StatusBadRequest)
					_, _ = w.Write(errBody)
					return
				}
				up.ServeHTTP(w, r)
			}))
			t.Cleanup(front.Close)
			var logs syncbuf.Buffer
			_, ts := proxyIn(t, front.URL, Config{Window: 200000, Summarizer: SummarizerExtractive,
				Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			c := newClient(t, Chat, ts.URL)
			c.header.Set("X-Session-Id", "conv-large-error")
			for i := 1; i < tc.failAt; i++ {
				c.step(i)
				waitRequestLogs(t, &logs, i) // the answer's accounting is stored
			}
			req, _ := http.NewRequest("POST", ts.URL+c.path(), bytes.NewReader(c.body()))
			req.Header = c.header.Clone()
			req.Header.Set("Content-Type", "application/json")
			resp, got := roundTrip(t, req)
			if resp.StatusCode != http.StatusBadRequest || !bytes.Equal(got, errBody) {
				t.Fatalf("status %d, %d bytes; want 400 and the upstream's %d bytes", resp.StatusCode, len(got), len(errBody))
			}
			waitRequestLogs(t, &logs, tc.failAt)
			if !strings.Contains(logs.String(), tc.decision) {
				t.Errorf("the request did not take the %s path: %s", tc.name, logs.String())
			}
		})
	}
}

// TestImpossibleUsageIgnored: a usage report of 1e12 tokens, far over
// anything the model can hold, is ignored (and logged) instead of forcing
// a compaction of a small conversation; on the first request (read before
// it goes) and on a later one (streamed upstream, not read).
func TestImpossibleUsageIgnored(t *testing.T) {
	cases := []struct {
		api   API
		field string
		at    int // the request whose answer carries the bogus usage
	}{
		{Chat, "prompt_tokens", 1},
		{Chat, "prompt_tokens", 2},
		{Anthropic, "input_tokens", 1},
		{Anthropic, "input_tokens", 2},
		{Responses, "input_tokens", 1},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s request %d", tc.api, tc.at), func(t *testing.T) {
			up := newFakeUpstream(t)
			var n atomic.Int32
			re := regexp.MustCompile(`"` + tc.field + `":\d+`)
			front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				rec := httptest.NewRecorder()
				up.ServeHTTP(rec, r)
				body := rec.Body.Bytes()
				if int(n.Add(1)) == tc.at {
					body = re.ReplaceAll(body, []byte(`"`+tc.field+`":1000000000000`))
				}
				for k, v := range rec.Header() {
					w.Header()[k] = v
				}
				w.WriteHeader(rec.Code)
				_, _ = w.Write(body)
			}))
			t.Cleanup(front.Close)
			var logs syncbuf.Buffer
			srv, ts := proxyIn(t, front.URL, Config{Window: 200000, Summarizer: SummarizerExtractive,
				KeepRecentTokens: 2000, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			c := newClient(t, tc.api, ts.URL)
			c.header.Set("X-Session-Id", "conv-usage")
			for i := 1; i <= 8; i++ {
				c.step(i)
				waitRequestLogs(t, &logs, i) // the answer's accounting is stored
			}
			if n.Load() < 8 {
				t.Fatalf("the upstream saw %d requests", n.Load())
			}
			for i, r := range up.modelRequests() {
				if summaryOf(t, tc.api, r.Body) != "" {
					t.Fatalf("request %d was compacted: a %d-token conversation in a 200000-token window", i+1, tokensOf(r.Body))
				}
			}
			id, _ := identifyByHeader(tc.api, srv.upstreamFor(tc.api).String(), c.header)
			if rec, err := srv.store.Get(context.Background(), id.key); err != nil || rec.Last == nil {
				t.Errorf("no last call stored: %v", err)
			} else if p := rec.Last.Usage.PromptTokens(); p >= 1_000_000_000_000 {
				t.Errorf("the bogus usage was stored: %d prompt tokens", p)
			}
			// From the third request on, the conversation is known to be
			// small: its requests go upstream while they are read.
			for i, d := range regexp.MustCompile(`decision=("[^"]*"|\S+)`).FindAllStringSubmatch(logs.String(), -1) {
				if (i >= 2 || d[1] != "pass") && d[1] != `"pass (streamed)"` {
					t.Errorf("request %d: decision %s: the bogus usage moved the proxy to act", i+1, d[1])
				}
			}
			if !strings.Contains(logs.String(), "usage impossible for the model") {
				t.Errorf("the impossible usage was not logged: %s", logs.String())
			}
		})
	}
}

// waitRequestLogs waits until logs holds n request lines: the last line
// of a request's work, written after its answer's accounting.
func waitRequestLogs(t *testing.T, logs *syncbuf.Buffer, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := strings.Count(logs.String(), "msg=request ")
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d request log lines after 10s, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestLearnScopeKeepsQueryTenantsApart: tenants whose key travels in the
// query string (added by a gateway) send no credential header; a window
// learned from one's overflow error must not apply to the other.
func TestLearnScopeKeepsQueryTenantsApart(t *testing.T) {
	srv, err := New(Config{Window: 200000})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	one := httptest.NewRequest("POST", "/v1/chat/completions?api-key=tenant-one-key", nil)
	two := httptest.NewRequest("POST", "/v1/chat/completions?api-key=tenant-two-key", nil)
	if srv.learnScope(Chat, one) == srv.learnScope(Chat, two) {
		t.Fatal("two tenants with different query-string keys share a learning scope")
	}
	srv.learnWindow(srv.learnScope(Chat, one), "gpt-test", "conv0123",
		[]byte(`{"error":{"message":"This model's maximum context length is 9000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`))
	if got, _ := srv.modelInfo(srv.learnScope(Chat, two), "gpt-test"); got.ContextWindow != 200000 {
		t.Errorf("tenant two's window is %d after tenant one's overflow, want 200000", got.ContextWindow)
	}
	if got, _ := srv.modelInfo(srv.learnScope(Chat, one), "gpt-test"); got.ContextWindow != 9000 {
		t.Errorf("tenant one's window is %d after its overflow, want 9000", got.ContextWindow)
	}
}

// TestUpstreamFaults: the provider failing in the ways providers fail
// reaches the client as it came, counts in the metrics, and leaves the
// conversation's state usable for the next request.
func TestUpstreamFaults(t *testing.T) {
	var mode atomic.Value
	mode.Store("ok")
	stalled := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		switch mode.Load().(string) {
		case "500":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(500)
			io.WriteString(w, `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`)
		case "stall":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n")
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				close(stalled)
			case <-time.After(30 * time.Second):
			}
		default:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":2}}`)
		}
	}))
	t.Cleanup(up.Close)
	srv, ts := proxyIn(t, up.URL, Config{Window: 200000, Policy: compact.Reserve{Tokens: 1000}, Summarizer: SummarizerExtractive})
	send := func(ctx context.Context, stream bool) (*http.Response, error) {
		body := `{"model":"claude-test","max_tokens":5,"stream":` + map[bool]string{true: "true", false: "false"}[stream] + `,"messages":[{"role":"user","content":"hi"}]}`
		req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/v1/messages", strings.NewReader(body))
		req.Header.Set("X-Claude-Code-Session-Id", "faults")
		req.Header.Set("X-Api-Key", "sk-ant-canary-0123456789")
		return http.DefaultClient.Do(req)
	}

	mode.Store("500")
	resp, err := send(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 500 || !strings.Contains(string(b), "Internal server error") {
		t.Errorf("a 500 reached the client as %d %s", resp.StatusCode, b)
	}

	mode.Store("stall")
	ctx, cancel := context.WithCancel(context.Background())
	resp, err = send(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	resp.Body.Read(buf) // the first event arrived
	cancel()            // the client gives up on the stalled stream
	resp.Body.Close()
	select {
	case <-stalled:
	case <-time.After(10 * time.Second):
		t.Fatal("the stalled upstream request was not cancelled with the client")
	}
	deadline := time.Now().Add(5 * time.Second)
	for testutil.ToFloat64(srv.metrics.streamTruncatedTotal.WithLabelValues(string(Anthropic))) < 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := testutil.ToFloat64(srv.metrics.streamTruncatedTotal.WithLabelValues(string(Anthropic))); got != 1 {
		t.Errorf("stream_truncated_total %v, want 1", got)
	}

	mode.Store("ok")
	resp, err = send(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("the conversation did not go on after the faults: %d", resp.StatusCode)
	}
}
