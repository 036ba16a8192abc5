package proxy

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestOverflowInsideStream: an overflow reported after the stream started
// is passed to the client as it came, and the conversation's next request
// is compacted first.
func TestOverflowInsideStream(t *testing.T) {
	var mu sync.Mutex
	var bodies [][]byte
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		n := len(bodies)
		bodies = append(bodies, b)
		mu.Unlock()
		if !bytes.Contains(b, []byte(`"tools"`)) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"id":"r","object":"response","status":"completed","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"## Goal\nsummary"}]}],"usage":{"input_tokens":10,"output_tokens":5}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_%d\",\"status\":\"in_progress\"}}\n\n", n)
		if n == 0 {
			fmt.Fprint(w, "event: response.failed\ndata: {\"type\":\"response.failed\",\"sequence_number\":1,\"response\":{\"id\":\"resp_0\",\"status\":\"failed\",\"error\":{\"code\":\"context_length_exceeded\",\"message\":\"Your input exceeds the context window of this model.\"}}}\n\n")
			return
		}
		fmt.Fprintf(w, "event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":1,\"response\":{\"id\":\"resp_%d\",\"status\":\"completed\",\"output\":[],\"usage\":{\"input_tokens\":100,\"output_tokens\":5,\"input_tokens_details\":{\"cached_tokens\":0}}}}\n\n", n)
	}))
	t.Cleanup(up.Close)
	_, ts := proxyIn(t, up.URL, Config{Window: 200000, Summarizer: SummarizerExtractive, KeepRecentTokens: 1500})

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
	mu.Lock()
	defer mu.Unlock()
	var model [][]byte
	for _, b := range bodies {
		if bytes.Contains(b, []byte(`"tools"`)) {
			model = append(model, b)
		}
	}
	if len(model) != 2 {
		t.Fatalf("%d model requests upstream", len(model))
	}
	if isSummaryItem(model[0]) {
		t.Error("the first request was compacted though nothing asked for it")
	}
	if !isSummaryItem(model[1]) {
		t.Error("the request after an in-stream overflow was not compacted")
	}
}
