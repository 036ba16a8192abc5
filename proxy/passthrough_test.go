package proxy

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// TestPassthroughByteForByte: a request under the trigger reaches the
// upstream exactly as the client sent it, body and headers, compressed or
// not, and nothing is added.
func TestPassthroughByteForByte(t *testing.T) {
	body := []byte("{\n  \"model\": \"claude-test\",  \"max_tokens\": 5,\n \"messages\": [ {\"role\":\"user\",\"content\":\"h\u00e9llo \\u00e9\"} ],\"x-unknown\":{\"b\":1,\"a\":2}}")
	gz := func(b []byte) []byte {
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		w.Write(b)
		w.Close()
		return buf.Bytes()
	}
	zs := func(b []byte) []byte {
		e, _ := zstd.NewWriter(nil)
		return e.EncodeAll(b, nil)
	}
	cases := []struct {
		name, path, enc string
		body            []byte
	}{
		{"anthropic", "/v1/messages", "", body},
		{"chat", "/v1/chat/completions", "", []byte(`{"model":"gpt-test","messages":[{"role":"user","content":"hi"}],"stream":false}`)},
		{"responses", "/v1/responses", "", []byte(`{"model":"gpt-test","input":"hi"}`)},
		{"responses gzip", "/v1/responses", "gzip", gz([]byte(`{"model":"gpt-test","input":[{"role":"user","content":"hi"}]}`))},
		{"responses zstd", "/v1/responses", "zstd", zs([]byte(`{"model":"gpt-test","input":[{"role":"user","content":"hi"}]}`))},
		{"count tokens", "/v1/messages/count_tokens", "", body},
		{"models", "/v1/models?limit=5", "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			up := newFakeUpstream(t)
			_, ts := newTestProxy(t, up, Config{Window: 200000, Summarizer: SummarizerExtractive})
			method := "POST"
			if tc.body == nil {
				method = "GET"
			}
			req, _ := http.NewRequest(method, ts.URL+tc.path, bytes.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Anthropic-Beta", "b-two,b-one")
			req.Header.Add("X-Custom", "1")
			req.Header.Add("X-Custom", "2")
			req.Header.Set("User-Agent", "agent/1.0")
			req.Header.Set("X-Api-Key", "sk-ant-canary-0123456789")
			req.Header.Set("Connection", "keep-alive, X-Hop")
			req.Header.Set("X-Hop", "dropped")
			req.Header.Set("Accept-Encoding", "identity")
			if tc.enc != "" {
				req.Header.Set("Content-Encoding", tc.enc)
			}
			roundTrip(t, req)
			reqs := up.requests()
			if len(reqs) != 1 {
				t.Fatalf("upstream saw %d requests", len(reqs))
			}
			got := reqs[0]
			if sha(got.Raw) != sha(tc.body) {
				t.Errorf("body changed: sent %s, upstream got %s", sha(tc.body), sha(got.Raw))
			}
			if !strings.HasPrefix(tc.path, got.Path) {
				t.Errorf("path %q, want %q", got.Path, tc.path)
			}
			h := got.Header
			if h.Get("Anthropic-Beta") != "b-two,b-one" || strings.Join(h.Values("X-Custom"), ",") != "1,2" ||
				h.Get("User-Agent") != "agent/1.0" || h.Get("X-Api-Key") != "sk-ant-canary-0123456789" || h.Get("Accept-Encoding") != "identity" {
				t.Errorf("headers not forwarded as sent: %v", h)
			}
			if tc.enc != "" && h.Get("Content-Encoding") != tc.enc {
				t.Errorf("Content-Encoding %q, want %q", h.Get("Content-Encoding"), tc.enc)
			}
			for k := range h {
				if strings.HasPrefix(k, "X-Forwarded") || k == "Via" || k == "X-Hop" || k == "Forwarded" {
					t.Errorf("header %s reached the upstream", k)
				}
			}
		})
	}
}

// TestStreamFlushedEventByEvent: each SSE event reaches the client before
// the upstream writes the next one, and the bytes are unchanged.
func TestStreamFlushedEventByEvent(t *testing.T) {
	next := make(chan struct{})
	events := []string{
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"h\u00e9\"}}\n\n",
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":7}}\n\n",
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		for _, e := range events {
			io.WriteString(w, e)
			w.(http.Flusher).Flush()
			select {
			case <-next:
			case <-r.Context().Done():
				return
			}
		}
	}))
	t.Cleanup(up.Close)
	_, ts := proxyIn(t, up.URL, Config{Window: 200000, Summarizer: SummarizerExtractive})
	resp, err := http.Post(ts.URL+"/v1/messages", "application/json", strings.NewReader(`{"model":"claude-test","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rd := bufio.NewReader(resp.Body)
	var all bytes.Buffer
	for i, e := range events {
		// Read exactly one event; the upstream does not send the next one
		// until we say so, so this only returns if the proxy flushed.
		got := make([]byte, len(e))
		done := make(chan error, 1)
		go func() { _, err := io.ReadFull(rd, got); done <- err }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("event %d: %v", i, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("event %d not delivered before the next was written: the proxy buffers", i)
		}
		if string(got) != e {
			t.Fatalf("event %d changed: %q", i, got)
		}
		all.Write(got)
		next <- struct{}{}
	}
}

// TestClientCancelCancelsUpstream: a client that goes away mid-stream
// cancels the upstream request.
func TestClientCancelCancelsUpstream(t *testing.T) {
	cancelled := make(chan struct{})
	started := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: ping\ndata: {\"type\":\"ping\"}\n\n")
		w.(http.Flusher).Flush()
		close(started)
		<-r.Context().Done()
		close(cancelled)
	}))
	t.Cleanup(up.Close)
	srv, _ := New(Config{OpenAIUpstream: up.URL, Window: 200000, Summarizer: SummarizerExtractive})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/v1/chat/completions", strings.NewReader(`{"model":"gpt-test","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	<-started
	buf := make([]byte, 10)
	resp.Body.Read(buf)
	cancel()
	resp.Body.Close()
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("upstream request still running after the client went away")
	}
}

func TestWebSocketRefused(t *testing.T) {
	up := newFakeUpstream(t)
	_, ts := newTestProxy(t, up, Config{Window: 200000})
	req, _ := http.NewRequest("GET", ts.URL+"/v1/responses", nil)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	resp, b := roundTrip(t, req)
	if resp.StatusCode != http.StatusNotImplemented || !strings.Contains(string(b), "WebSocket") {
		t.Errorf("status %d body %s, want 501 naming WebSocket", resp.StatusCode, b)
	}
	if n := len(up.requests()); n != 0 {
		t.Errorf("upstream saw %d requests", n)
	}
}

func TestBodyTooLarge(t *testing.T) {
	up := newFakeUpstream(t)
	_, ts := newTestProxy(t, up, Config{Window: 200000, MaxBodyBytes: 1000})
	big := `{"model":"claude-test","messages":[{"role":"user","content":"` + strings.Repeat("x", 2000) + `"}]}`
	req, _ := http.NewRequest("POST", ts.URL+"/v1/messages", strings.NewReader(big))
	req.Header.Set("X-Api-Key", "sk-ant-canary-0123456789")
	resp, b := roundTrip(t, req)
	if resp.StatusCode != 413 || !strings.Contains(string(b), "request_too_large") {
		t.Errorf("status %d body %s, want 413 request_too_large", resp.StatusCode, b)
	}
	if n := len(up.requests()); n != 0 {
		t.Errorf("upstream saw %d requests", n)
	}
}

// TestNothingAdded: a request without User-Agent or Accept-Encoding
// reaches the upstream without them; net/http adds neither.
func TestNothingAdded(t *testing.T) {
	up := newFakeUpstream(t)
	_, ts := newTestProxy(t, up, Config{Window: 200000})
	for _, path := range []string{"/v1/chat/completions", "/v1/models"} {
		req, _ := http.NewRequest("POST", ts.URL+path, strings.NewReader(`{"model":"gpt-test","messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("User-Agent", "") // the test client sends none either
		resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	for _, r := range up.requests() {
		for _, k := range []string{"User-Agent", "Accept-Encoding", "Via", "X-Forwarded-For", "Forwarded"} {
			if v, ok := r.Header[k]; ok {
				t.Errorf("%s: header %s: %q was added", r.Path, k, v)
			}
		}
	}
}
