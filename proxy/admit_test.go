package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// heldUpstream answers every request once release is closed, counting the
// requests that arrived.
func heldUpstream(t *testing.T, release chan struct{}) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		n.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":2}}`)
	}))
	t.Cleanup(up.Close)
	return up, &n
}

// TestAdmissionBudget: request bodies in memory share one budget. While
// one request holds it, another that does not fit waits AdmitWait and
// gets 503 with Retry-After, in its API's error shape, without reaching
// the upstream; once the first is done its reservation is back and the
// next request goes through. Bodies of unknown length are charged as they
// are read. Credential-less requests (streamed, never held) are not
// charged.
func TestAdmissionBudget(t *testing.T) {
	big := func(model string, n int) string {
		return `{"model":"` + model + `","max_tokens":5,"messages":[{"role":"user","content":"` + strings.Repeat("x", n) + `"}]}`
	}
	cases := []struct {
		name, path, body string
		chunked          bool
		header           http.Header
		status           int
		errType          string
	}{
		{"anthropic", "/v1/messages", big("claude-test", 60000), false, http.Header{"X-Api-Key": {"sk-ant-canary"}}, 503, "overloaded_error"},
		{"chat", "/v1/chat/completions", big("gpt-test", 60000), false, http.Header{"Authorization": {"Bearer sk-canary"}}, 503, "api_error"},
		{"chunked", "/v1/messages", big("claude-test", 60000), true, http.Header{"X-Api-Key": {"sk-ant-canary"}}, 503, "overloaded_error"},
		{"small body fits", "/v1/messages", big("claude-test", 10), false, http.Header{"X-Api-Key": {"sk-ant-canary"}}, 200, ""},
		{"credential-less is streamed", "/v1/messages", big("claude-test", 60000), false, http.Header{}, 200, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			up, arrived := heldUpstream(t, release)
			srv, ts := proxyIn(t, up.URL, Config{Window: 200000, Summarizer: SummarizerExtractive,
				MaxInFlightBytes: 100000, AdmitWait: 200 * time.Millisecond})
			hc := &http.Client{Timeout: 5 * time.Second}
			post := func(body string, chunked bool, h http.Header) (*http.Response, []byte) {
				var rd io.Reader = strings.NewReader(body)
				if chunked {
					rd = io.MultiReader(rd) // hides the length: sent chunked
				}
				req, _ := http.NewRequest("POST", ts.URL+tc.path, rd)
				req.Header = h.Clone()
				resp, err := hc.Do(req)
				if err != nil {
					// (Called from a goroutine too: no Fatal here.)
					return &http.Response{StatusCode: 0}, []byte(err.Error())
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				return resp, b
			}
			// The first request takes 60 KB of the 100 KB budget and
			// waits at the upstream.
			first := make(chan int, 1)
			go func() {
				resp, _ := post(big("claude-test", 60000), false, http.Header{"X-Api-Key": {"sk-ant-canary"}})
				first <- resp.StatusCode
			}()
			deadline := time.Now().Add(5 * time.Second)
			for arrived.Load() < 1 && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			// The reservation shows on /metrics while it is held.
			if m, err := http.Get(ts.URL + "/metrics"); err == nil {
				mb, _ := io.ReadAll(m.Body)
				m.Body.Close()
				if !strings.Contains(string(mb), "\ncompact_proxy_inflight_body_bytes 600") {
					t.Errorf("/metrics does not show the 60 KB reserved")
				}
			}
			if tc.status == 200 {
				go func() { time.Sleep(100 * time.Millisecond); close(release) }()
			}
			start := time.Now()
			resp, b := post(tc.body, tc.chunked, tc.header)
			if resp.StatusCode != tc.status {
				if tc.status != 200 {
					close(release)
				}
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, b, tc.status)
			}
			if tc.status == 503 {
				if got := resp.Header.Get("Retry-After"); got == "" {
					t.Errorf("503 without Retry-After")
				}
				if waited := time.Since(start); waited < 150*time.Millisecond {
					t.Errorf("refused after %s, before the admission wait", waited)
				}
				var e struct {
					Error struct{ Type, Message string }
				}
				if json.Unmarshal(b, &e) != nil || e.Error.Type != tc.errType {
					t.Errorf("body %s, want error type %s", b, tc.errType)
				}
				if n := arrived.Load(); n != 1 {
					t.Errorf("upstream saw %d requests, want only the first", n)
				}
				close(release)
			}
			if got := <-first; got != 200 {
				t.Errorf("first request: status %d", got)
			}
			// Everything given back (background work included, which
			// may still run when the client has its answer): a body of
			// nearly the whole budget fits again.
			deadline = time.Now().Add(3 * time.Second)
			for srv.admit.held.Load() != 0 && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			if held := srv.admit.held.Load(); held != 0 {
				t.Errorf("%d bytes still reserved after every request ended", held)
			}
			if resp, b := post(big("claude-test", 90000), false, http.Header{"X-Api-Key": {"sk-ant-canary"}}); resp.StatusCode != 200 {
				t.Errorf("after the others: status %d (%s)", resp.StatusCode, b)
			}
		})
	}
}

// TestMaxMessages: a request with more history items than MaxMessages
// is passed through unread, however far over the trigger; under the bound
// it is compacted.
func TestMaxMessages(t *testing.T) {
	for _, tc := range []struct {
		api           API
		maxMessages   int
		wantCompacted bool
	}{{Anthropic, 4, false}, {Anthropic, 0, true}, {Responses, 4, false}, {Responses, 0, true}} {
		t.Run(fmt.Sprint(tc.api, tc.maxMessages), func(t *testing.T) {
			up := newFakeUpstream(t)
			_, ts := newTestProxy(t, up, Config{Window: 4000, Summarizer: SummarizerExtractive, MaxMessages: tc.maxMessages})
			c := newClient(t, tc.api, ts.URL)
			for i := range 8 {
				c.step(i)
			}
			compacted := false
			for _, r := range up.modelRequests() {
				compacted = compacted || summaryOf(t, tc.api, r.Body) != ""
			}
			if compacted != tc.wantCompacted {
				t.Errorf("compacted %v, want %v", compacted, tc.wantCompacted)
			}
		})
	}
}

// TestTooManyMessagesCount: the count before parsing sees the keys of the
// items, not the same words quoted inside strings.
func TestTooManyMessagesCount(t *testing.T) {
	srv, err := New(Config{MaxMessages: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		api  API
		body string
		want bool
	}{
		{Anthropic, `{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}`, false},
		{Anthropic, `{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"}]}`, true},
		{Anthropic, `{"messages":[{"role":"user","content":"{\"role\":1,\"role\":2,\"role\":3}"}]}`, false},
		{Responses, `{"input":[{"role":"user","content":"a"},{"type":"function_call","call_id":"c1"},{"type":"function_call_output","call_id":"c1"}]}`, true},
	} {
		if got := srv.tooManyMessages(tc.api, []byte(tc.body)); got != tc.want {
			t.Errorf("%s %s: %v, want %v", tc.api, tc.body, got, tc.want)
		}
	}
}

// TestSummaryCallLimit: a compaction that needs more model calls than
// MaxSummaryCalls (a history longer than the summary model's window is
// summarized in chunks) is abandoned after that many calls: no compaction
// is applied or stored and the request goes as it came. With room for the
// calls it compacts.
func TestSummaryCallLimit(t *testing.T) {
	for _, tc := range []struct {
		calls         int
		wantCompacted bool
	}{{1, false}, {100, true}} {
		t.Run(fmt.Sprint(tc.calls), func(t *testing.T) {
			up := newFakeUpstream(t)
			// A long history built where the window is large...
			_, wide := newTestProxy(t, up, Config{Window: 200000, Summarizer: SummarizerExtractive})
			c := newClient(t, Anthropic, wide.URL)
			for i := range 10 {
				c.step(i)
			}
			// ...then sent where it is several windows long.
			_, narrow := newTestProxy(t, up, Config{Window: 5000, MaxSummaryCalls: tc.calls})
			c.base = narrow.URL
			before := up.summaries.Load()
			c.step(10)
			calls := up.summaries.Load() - before
			reqs := up.modelRequests()
			compacted := false
			compacted = compacted || summaryOf(t, Anthropic, reqs[len(reqs)-1].Body) != ""
			if compacted != tc.wantCompacted {
				t.Errorf("compacted %v, want %v (summary calls %d)", compacted, tc.wantCompacted, calls)
			}
			if calls > int32(tc.calls) {
				t.Errorf("%d summary calls, want at most %d", calls, tc.calls)
			}
			if tc.wantCompacted && calls < 2 {
				t.Errorf("%d summary calls: the history did not need chunks, the test proves nothing", calls)
			}
		})
	}
}

// TestBodyTimeout: a client that trickles its body is answered 408 and
// its connection closed once BodyTimeout has passed; the upstream never
// sees the request.
func TestBodyTimeout(t *testing.T) {
	for _, tc := range []struct {
		name, path string
		header     string
		// status is the answer expected; 0 for a body streamed to the
		// upstream, whose answer to the cut request is the upstream's.
		status int
	}{
		{"compacted path", "/v1/messages", "X-Api-Key: sk-ant-canary\r\n", http.StatusRequestTimeout},
		{"credential-less", "/v1/messages", "", 0},
		{"passthrough path", "/v1/files", "X-Api-Key: sk-ant-canary\r\n", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := newFakeUpstream(t)
			_, ts := newTestProxy(t, up, Config{Window: 200000, BodyTimeout: 300 * time.Millisecond})
			conn, err := net.Dial("tcp", ts.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n%sContent-Length: 1000\r\n\r\n{\"model\":", tc.path, tc.header)
			_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
			start := time.Now()
			// Trickle a byte every 50 ms; the proxy must give up first.
			stop := make(chan struct{})
			defer close(stop)
			go func() {
				for {
					select {
					case <-stop:
						return
					case <-time.After(50 * time.Millisecond):
						if _, err := conn.Write([]byte(" ")); err != nil {
							return
						}
					}
				}
			}()
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("no answer before the client's own 5 s deadline: %v", err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if tc.status != 0 && resp.StatusCode != tc.status {
				t.Errorf("status %d (%s), want %d", resp.StatusCode, b, tc.status)
			}
			if el := time.Since(start); el > 3*time.Second {
				t.Errorf("answered after %s", el)
			}
			for _, r := range up.requests() {
				if r.Path == tc.path && len(r.Body) == 1000 {
					t.Errorf("the upstream got the whole trickled body")
				}
			}
		})
	}
}

// streamedHi is a one-message streamed Anthropic request to url, with a
// credential (requests without one are not compacted).
func streamedHi(ctx context.Context, url string) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(`{"model":"claude-test","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("X-Api-Key", "sk-ant-canary")
	return req
}

// TestLongStreamSurvivesTimeouts: a streamed answer that lasts far longer
// than BodyTimeout and WriteIdleTimeout, but keeps writing, reaches the
// client whole.
func TestLongStreamSurvivesTimeouts(t *testing.T) {
	const events = 12
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range events {
			fmt.Fprintf(w, "event: ping\ndata: {\"type\":\"ping\",\"n\":%d}\n\n", i)
			w.(http.Flusher).Flush()
			time.Sleep(100 * time.Millisecond)
		}
	}))
	t.Cleanup(up.Close)
	_, ts := proxyIn(t, up.URL, Config{Window: 200000, Summarizer: SummarizerExtractive,
		BodyTimeout: 200 * time.Millisecond, WriteIdleTimeout: 300 * time.Millisecond})
	for _, path := range []string{"/v1/messages", "/v1/other"} {
		_, b := roundTrip(t, streamedHi(t.Context(), ts.URL+path))
		if strings.Count(string(b), "event: ping") != events {
			t.Errorf("%s: got %d of %d events", path, strings.Count(string(b), "event: ping"), events)
		}
	}
}

// TestWriteIdleTimeout: a client that stops reading a large answer is cut
// off after WriteIdleTimeout, which ends the upstream request too.
func TestWriteIdleTimeout(t *testing.T) {
	upDone := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(upDone)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := []byte("data: " + strings.Repeat("y", 64<<10) + "\n\n")
		for {
			if _, err := w.Write(chunk); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			if r.Context().Err() != nil {
				return
			}
		}
	}))
	t.Cleanup(up.Close)
	_, ts := proxyIn(t, up.URL, Config{Window: 200000, Summarizer: SummarizerExtractive, WriteIdleTimeout: 300 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, err := http.DefaultClient.Do(streamedHi(ctx, ts.URL+"/v1/messages"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// The client never reads the body.
	select {
	case <-upDone:
	case <-time.After(8 * time.Second):
		t.Fatal("a client that stopped reading still holds the stream after 8 s")
	}
}

// TestQuietEndOfStream: an upstream that sends its last event and only
// ends the answer after more than WriteIdleTimeout still has its answer
// end cleanly at the client (the end of a chunked answer is written after
// the handler returns).
func TestQuietEndOfStream(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: ping\ndata: {\"type\":\"ping\"}\n\n")
		w.(http.Flusher).Flush()
		time.Sleep(700 * time.Millisecond)
	}))
	t.Cleanup(up.Close)
	_, ts := proxyIn(t, up.URL, Config{Window: 200000, Summarizer: SummarizerExtractive, WriteIdleTimeout: 300 * time.Millisecond})
	_, b := roundTrip(t, streamedHi(t.Context(), ts.URL+"/v1/messages"))
	if !strings.Contains(string(b), "event: ping") {
		t.Errorf("answer %q", b)
	}
}
