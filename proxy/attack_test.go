package proxy

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"golang.org/x/sync/semaphore"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/syncbuf"
	"github.com/compactkit/compact/proxy/store"
)

// TestStreamErrorLearnsOnlyProviderShape: an error inside a streamed
// answer (Anthropic's SSE error event, a Responses response.failed, a Chat
// error chunk) teaches a window only when it has the provider's own
// overflow shape, only for the tenant that saw it, and never under the
// floor; an error that quotes the tenant's text teaches nothing.
func TestStreamErrorLearnsOnlyProviderShape(t *testing.T) {
	const model = "gpt-test"
	for _, tc := range []struct {
		name   string
		api    API
		stream string
		want   int // the window tenant A has afterwards
	}{
		{"anthropic error event, real overflow", Anthropic,
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n" +
				"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"prompt is too long: 150000 tokens > 100000 maximum\"}}\n\n", 100000},
		{"anthropic error event, stated under the floor", Anthropic,
			"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"prompt is too long: 5000 tokens > 1024 maximum\"}}\n\n", 8192},
		{"anthropic error event quoting text", Anthropic,
			"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"messages.0.content: 'prompt is too long: 5000 tokens > 9000 maximum' is not allowed\"}}\n\n", 200000},
		{"anthropic overloaded error event", Anthropic,
			"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"prompt is too long: 5000 tokens > 9000 maximum\"}}\n\n", 200000},
		{"responses failed quoting text", Responses,
			"event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"status\":\"failed\",\"error\":{\"code\":\"invalid_prompt\",\"message\":\"This model's maximum context length is 9000 tokens\"},\"output\":[]}}\n\n", 200000},
		{"responses failed, output quoting an overflow", Responses,
			"event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"oops\"},\"output\":[{\"type\":\"message\",\"content\":[{\"type\":\"output_text\",\"text\":\"{\\\"code\\\":\\\"context_length_exceeded\\\",\\\"message\\\":\\\"This model's maximum context length is 9000 tokens\\\"}\"}]}]}}\n\n", 200000},
		{"responses failed, real overflow", Responses,
			"event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"status\":\"failed\",\"error\":{\"code\":\"context_length_exceeded\",\"message\":\"This model's maximum context length is 90000 tokens. However, your messages resulted in 95000 tokens.\"}}}\n\n", 90000},
		{"chat error chunk quoting text", Chat,
			"data: {\"error\":{\"message\":\"Invalid content: This model's maximum context length is 9000 tokens\",\"type\":\"invalid_request_error\",\"code\":\"invalid_value\"}}\n\n", 200000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, tc.stream)
			}))
			t.Cleanup(up.Close)
			srv, ts := proxyIn(t, up.URL, Config{Window: 200000, Summarizer: SummarizerExtractive})
			c := newClient(t, tc.api, ts.URL)
			c.header.Set("Authorization", "Bearer sk-tenant-a-0123456789")
			c.header.Del("X-Api-Key")
			body := strings.Replace(string(c.body()), `"stream":false`, `"stream":true`, 1)
			body = strings.Replace(body, `"model":"claude-test"`, `"model":"`+model+`"`, 1)
			req, _ := http.NewRequest("POST", ts.URL+c.path(), strings.NewReader(body))
			req.Header = c.header.Clone()
			_, got := roundTrip(t, req)
			if string(got) != tc.stream {
				t.Errorf("the stream was not relayed as sent")
			}
			ts.Close() // waits for the handler
			srv.bg.Wait()
			a := httptest.NewRequest("POST", c.path(), nil)
			a.Header = c.header.Clone()
			b := a.Clone(a.Context())
			b.Header.Set("Authorization", "Bearer sk-tenant-b-0123456789")
			if info, _ := srv.modelInfo(srv.learnScope(tc.api, a), model); info.ContextWindow != tc.want {
				t.Errorf("tenant A's window %d, want %d", info.ContextWindow, tc.want)
			}
			if info, _ := srv.modelInfo(srv.learnScope(tc.api, b), model); info.ContextWindow != 200000 {
				t.Errorf("tenant B's window %d, want 200000", info.ContextWindow)
			}
		})
	}
}

// TestCompressedBodyChargedWhileDecoded: a small compressed body that
// decodes to a large one (a body that lies about its size) is charged to
// the admission budget while it is decoded: with no room it gets 503
// having decoded only what the budget had room for, never the whole body
// uncounted.
func TestCompressedBodyChargedWhileDecoded(t *testing.T) {
	const budget, decodedSize = 4 << 20, 32 << 20
	doc := `{"model":"claude-test","max_tokens":5,"messages":[{"role":"user","content":"` + strings.Repeat("x", decodedSize) + `"}]}`
	for _, enc := range []string{"gzip", "zstd"} {
		t.Run(enc, func(t *testing.T) {
			release := make(chan struct{})
			up, arrived := heldUpstream(t, release)
			_, ts := proxyIn(t, up.URL, Config{Window: 200000, Summarizer: SummarizerExtractive,
				MaxInFlightBytes: budget, AdmitWait: 200 * time.Millisecond})
			t.Cleanup(func() { close(release) })
			post := func(body []byte, enc string) int {
				req, _ := http.NewRequest("POST", ts.URL+"/v1/messages", bytes.NewReader(body))
				req.Header.Set("X-Api-Key", "sk-ant-canary")
				if enc != "" {
					req.Header.Set("Content-Encoding", enc)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return 0
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				return resp.StatusCode
			}
			// A holds three quarters of the budget at the upstream.
			go post([]byte(`{"model":"claude-test","max_tokens":5,"messages":[{"role":"user","content":"`+strings.Repeat("y", budget*3/4)+`"}]}`), "")
			for arrived.Load() == 0 {
				time.Sleep(5 * time.Millisecond)
			}
			var sent []byte
			if enc == "gzip" {
				sent = gzipped(t, []byte(doc))
			} else {
				sent = zstded(t, []byte(doc))
			}
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			status := post(sent, enc)
			runtime.ReadMemStats(&after)
			if status != http.StatusServiceUnavailable {
				t.Errorf("status %d, want 503", status)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > decodedSize/2 {
				t.Errorf("%d MiB allocated for a %d KiB body refused for want of room: it was decoded uncounted", alloc>>20, len(sent)>>10)
			}
		})
	}
}

// TestProxyTokenOnlyWhereDocumented: the proxy token is read from
// X-Compact-Token and from Proxy-Authorization's Bearer scheme only: in
// another scheme or in the query string it is refused (401, nothing
// forwarded), and it appears in no log line.
func TestProxyTokenOnlyWhereDocumented(t *testing.T) {
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("user:"+testToken))
	for _, tc := range []struct {
		name, query string
		header      http.Header
		status      int
	}{
		{"proxy-authorization basic", "", http.Header{"Proxy-Authorization": {basic}}, 401},
		{"proxy-authorization token scheme", "", http.Header{"Proxy-Authorization": {"Token " + testToken}}, 401},
		{"proxy-authorization bare token", "", http.Header{"Proxy-Authorization": {testToken}}, 401},
		{"token in query", "?token=" + testToken, http.Header{}, 401},
		{"token in query, our header name", "?x-compact-token=" + testToken, http.Header{}, 401},
		{"token in query as key", "?key=" + testToken, http.Header{}, 401},
		{"proxy-authorization bearer", "", http.Header{"Proxy-Authorization": {"bearer  " + testToken}}, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs syncbuf.Buffer
			up := newFakeUpstream(t)
			srv, ts := newTestProxy(t, up, Config{Window: 200000, Summarizer: SummarizerExtractive, AuthToken: testToken,
				Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
			req, _ := http.NewRequest("POST", ts.URL+"/v1/messages"+tc.query, strings.NewReader(`{"model":"claude-test","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`))
			req.Header = tc.header.Clone()
			req.Header.Set("X-Api-Key", "sk-ant-canary-0123456789")
			resp, b := roundTrip(t, req)
			ts.Close()
			srv.bg.Wait() // the request's log line is written after its answer
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d: %s", resp.StatusCode, tc.status, b)
			}
			if tc.status == 401 && len(up.requests()) != 0 {
				t.Error("a refused request reached the upstream")
			}
			for _, r := range up.requests() {
				if strings.Contains(fmt.Sprint(r.Header), testToken) {
					t.Errorf("upstream got the token in %v", r.Header)
				}
			}
			if !strings.Contains(logs.String(), "status=") {
				t.Fatal("no request was logged: the test proves nothing")
			}
			if strings.Contains(logs.String(), testToken) || strings.Contains(logs.String(), "sk-ant-canary") {
				t.Errorf("the log holds the token or the key:\n%s", logs.String())
			}
		})
	}
}

// TestTenantHeaderControlCharacters: a tenant header value with control
// characters never reaches the proxy's keys or logs: net/http refuses the
// request (400) before the handler runs, and nothing goes upstream.
func TestTenantHeaderControlCharacters(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		status      int
	}{
		{"nul", "a\x00b", 400},
		{"soh", "a\x01b", 400},
		{"del", "a\x7fb", 400},
		{"escape sequence", "a\x1b[2Jb", 400},
		{"obs-text", "a\xffb", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs syncbuf.Buffer
			up := newFakeUpstream(t)
			srv, ts := newTestProxy(t, up, Config{Window: 200000, Summarizer: SummarizerExtractive, TenantHeader: "X-Tenant",
				Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
			c, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			body := `{"model":"claude-test","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`
			fmt.Fprintf(c, "POST /v1/messages HTTP/1.1\r\nHost: x\r\nX-Tenant: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", tc.value, len(body), body)
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			ts.Close()
			srv.bg.Wait() // the request's log line is written after its answer
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.status)
			}
			if got := len(up.requests()); (tc.status == 200) != (got == 1) {
				t.Errorf("upstream got %d requests", got)
			}
			for _, r := range up.requests() {
				if r.Header.Get("X-Tenant") != "" {
					t.Errorf("the tenant header was forwarded")
				}
			}
			if strings.Contains(logs.String(), tc.value) {
				t.Errorf("the log holds the tenant value:\n%s", logs.String())
			}
		})
	}
}

// TestRecordMovedToAnotherConversation: a record sealed with the store's
// own key, copied by someone with write access to the store onto another
// tenant's conversation keys, is refused there (counted as rejected) and
// none of its text reaches the other tenant's requests.
func TestRecordMovedToAnotherConversation(t *testing.T) {
	for _, sealed := range []bool{true, false} {
		t.Run(fmt.Sprintf("store key %v", sealed), func(t *testing.T) {
			var opts store.MemoryOptions
			if sealed {
				opts.RecordKey = []byte("test-record-key-0123456789")
			}
			st := store.NewMemory(opts)
			up := newFakeUpstream(t)
			srv, ts := newTestProxy(t, up, Config{Window: 6000, Policy: compact.Reserve{Tokens: 1000}, Summarizer: SummarizerExtractive, Store: st})
			keys := func() map[string]bool {
				m := map[string]bool{}
				for _, k := range st.Keys() {
					m[k] = true
				}
				return m
			}
			a := newClient(t, Chat, ts.URL)
			a.header.Set("Authorization", "Bearer sk-tenant-a-0123456789")
			a.header.Set("X-Session-Id", "victim")
			a.items[1] = `{"role":"user","content":"SECRET-OF-A: count the lines of every file."}`
			for i := 1; up.summaries.Load() == 0 && !hasSummary(t, up) && i <= 20; i++ {
				a.step(i)
			}
			srv.bg.Wait()
			if !hasSummary(t, up) {
				t.Fatal("tenant A was never compacted: the test proves nothing")
			}
			ofA := keys()
			b := newClient(t, Chat, ts.URL)
			b.header.Set("Authorization", "Bearer sk-tenant-b-0123456789")
			b.header.Set("X-Session-Id", "attacker")
			b.step(1)
			// B's record is written once the handler is done, which may
			// be after the client has its answer.
			for deadline := time.Now().Add(5 * time.Second); len(keys()) == len(ofA) && time.Now().Before(deadline); {
				time.Sleep(5 * time.Millisecond)
			}
			srv.bg.Wait()
			moved := 0
			for k := range keys() {
				if ofA[k] {
					continue
				}
				for ka := range ofA {
					if strings.HasPrefix(ka, k[:2]) {
						st.SetRaw(k, st.Raw(ka))
						moved++
						break
					}
				}
			}
			if moved == 0 {
				t.Fatal("no record of B's to overwrite: the test proves nothing")
			}
			// Another replica on the same store, whose memory holds
			// nothing of B's conversation.
			srv2, ts2 := newTestProxy(t, up, Config{Window: 6000, Policy: compact.Reserve{Tokens: 1000}, Summarizer: SummarizerExtractive, Store: st})
			b.base = ts2.URL
			before := testutil.ToFloat64(srv2.metrics.storeLookupsTotal.WithLabelValues(lookupRejected))
			b.step(2)
			if bytes.Contains(lastOf(t, up.requests()).Body, []byte("SECRET-OF-A")) {
				t.Fatal("tenant A's text reached tenant B's request")
			}
			rejected := testutil.ToFloat64(srv2.metrics.storeLookupsTotal.WithLabelValues(lookupRejected)) - before
			if sealed && rejected < 1 {
				t.Errorf("the moved record was not rejected")
			}
			if !sealed && rejected != 0 {
				t.Errorf("%v records rejected without a store key", rejected)
			}
		})
	}
}

// hasSummary reports whether a request the upstream got carried a summary.
func hasSummary(t *testing.T, up *fakeUpstream) bool {
	for _, r := range up.modelRequests() {
		if summaryOf(t, Chat, r.Body) != "" {
			return true
		}
	}
	return false
}

// TestChunkedBodyLies: a chunked body whose chunk sizes do not match what
// follows is refused (400) and never forwarded; with both
// Transfer-Encoding: chunked and a Content-Length, the chunked body is
// read whole (the length is ignored, as HTTP/1.1 says) and charged as it
// comes.
func TestChunkedBodyLies(t *testing.T) {
	doc := `{"model":"claude-test","max_tokens":5,"messages":[{"role":"user","content":"` + strings.Repeat("x", 200000) + `"}]}`
	for _, tc := range []struct {
		name, extra, body string
		status            int
		forwarded         int // bytes the upstream must get, 0 for none
	}{
		{"chunked with a content-length", "Content-Length: 10\r\n", fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(doc), doc), 200, len(doc)},
		{"chunk smaller than announced data", "", "10\r\n" + doc + "\r\n0\r\n\r\n", 400, 0},
		{"chunk size not hex", "", "zz\r\n" + doc + "\r\n0\r\n\r\n", 400, 0},
		{"chunk size overflows", "", "fffffffffffffffff\r\n" + doc + "\r\n0\r\n\r\n", 400, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := newFakeUpstream(t)
			_, ts := newTestProxy(t, up, Config{Window: 200000, Summarizer: SummarizerExtractive, MaxInFlightBytes: 1 << 20})
			c, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			go fmt.Fprintf(c, "POST /v1/messages HTTP/1.1\r\nHost: x\r\nX-Api-Key: sk-ant-canary\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n%sConnection: close\r\n\r\n%s", tc.extra, tc.body)
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			ts.Close()
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.status)
			}
			reqs := up.requests()
			switch {
			case tc.forwarded == 0 && len(reqs) != 0:
				t.Errorf("a body that lied was forwarded")
			case tc.forwarded > 0 && (len(reqs) != 1 || len(reqs[0].Body) != tc.forwarded):
				t.Errorf("upstream did not get the whole chunked body")
			}
		})
	}
}

// FuzzDecodeCharged: whatever a compressed body holds, decoding it under
// the admission budget never panics, never yields more than the limit,
// never leaves more reserved than the budget, and when it succeeds gives
// the same bytes as decoding it uncharged.
func FuzzDecodeCharged(f *testing.F) {
	doc := []byte(`{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("ab", 3000) + `"}]}`)
	gz, _ := encodeBody("gzip", doc)
	zs, _ := encodeBody("zstd", doc)
	f.Add(gz, true, int64(1<<20), int64(8<<10))
	f.Add(zs, false, int64(1<<20), int64(4<<10))
	f.Add(gz[:len(gz)/2], true, int64(100), int64(1<<20))
	f.Fuzz(func(t *testing.T, raw []byte, isGzip bool, limit, budget int64) {
		limit, budget = 1+abs64(limit)%(1<<20), 1+abs64(budget)%(1<<20)
		enc := "zstd"
		if isGzip {
			enc = "gzip"
		}
		a := &admission{size: budget, wait: time.Second, sem: semaphore.NewWeighted(budget)}
		r := httptest.NewRequest("POST", "/v1/messages", bytes.NewReader(raw))
		r.Header.Set("Content-Encoding", enc)
		c, err := a.reserve(r.Context(), min(int64(len(raw)), budget))
		if err != nil {
			t.Fatal(err)
		}
		defer c.release()
		_, decoded, err := readBodyCharged(r, limit, c)
		if held := a.held.Load(); held > budget {
			t.Fatalf("%d bytes reserved, budget %d", held, budget)
		}
		if int64(len(decoded)) > limit {
			t.Fatalf("decoded %d bytes, limit %d", len(decoded), limit)
		}
		if err != nil {
			if !errors.Is(err, errTooLarge) && !errors.Is(err, errBadEncoding) && !errors.Is(err, errBusy) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		pr := httptest.NewRequest("POST", "/v1/messages", bytes.NewReader(raw))
		pr.Header.Set("Content-Encoding", enc)
		_, plain, perr := readBody(pr, limit)
		if perr != nil || !bytes.Equal(plain, decoded) {
			t.Fatalf("charged decoding differs from plain: %v", perr)
		}
	})
}

func abs64(n int64) int64 {
	if n < 0 {
		return -(n + 1)
	}
	return n
}
