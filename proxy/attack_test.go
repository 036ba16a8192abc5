package proxy

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
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
			srv, err := New(Config{OpenAIUpstream: up.URL, AnthropicUpstream: up.URL, Window: 200000, Summarizer: SummarizerExtractive})
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(srv)
			t.Cleanup(func() { ts.Close(); srv.Close() })
			c := newClient(t, tc.api, ts.URL)
			c.header.Set("Authorization", "Bearer sk-tenant-a-0123456789")
			c.header.Del("X-Api-Key")
			body := strings.Replace(string(c.body()), `"stream":false`, `"stream":true`, 1)
			body = strings.Replace(body, `"model":"claude-test"`, `"model":"`+model+`"`, 1)
			req, _ := http.NewRequest("POST", ts.URL+c.path(), strings.NewReader(body))
			req.Header = c.header.Clone()
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
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
			srv, err := New(Config{AnthropicUpstream: up.URL, Window: 200000, Summarizer: SummarizerExtractive,
				MaxInFlightBytes: budget, AdmitWait: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(srv)
			t.Cleanup(func() { close(release); ts.Close(); srv.Close() })
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
