package proxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/compactkit/compact"
)

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
