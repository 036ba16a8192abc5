// Command loadupstream is the model provider of the load benchmark
// (scripts/load.sh): it answers every POST with a streamed Anthropic
// Messages response after a fixed latency, paced like a model writing, and
// does no other work, so that what a load run measures is the proxy.
//
//	loadupstream -listen 127.0.0.1:0 -first-byte 50ms -chunks 20 -interval 5ms
//
// It prints "loadupstream listening on http://ADDR" on stdout once it
// accepts connections. The usage it reports counts a token per 4 bytes of
// the request body, which is what the proxy's estimate assumes too.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	firstByte := flag.Duration("first-byte", 50*time.Millisecond, "wait before the response headers (the model's time to first token)")
	chunks := flag.Int("chunks", 20, "text deltas in each streamed answer")
	interval := flag.Duration("interval", 5*time.Millisecond, "wait between two deltas")
	flag.Parse()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatalf("loadupstream: %v", err)
	}
	fmt.Printf("loadupstream listening on http://%s\n", ln.Addr())
	os.Stdout.Sync()
	h := &handler{firstByte: *firstByte, chunks: *chunks, interval: *interval}
	log.Fatal(http.Serve(ln, h))
}

// handler streams the same answer to every request.
type handler struct {
	firstByte, interval time.Duration
	chunks              int
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Every event has a fixed time after the request arrived, so timer
	// delays do not add up over an answer: two runs differ by the proxy,
	// not by the provider's pacing.
	start := time.Now()
	n, _ := io.Copy(io.Discard, r.Body)
	if !sleepUntil(r, start.Add(h.firstByte)) {
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	f := w.(http.Flusher)
	fmt.Fprintf(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_load\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-load\",\"content\":[],\"usage\":{\"input_tokens\":%d,\"output_tokens\":1}}}\n\n", n/4)
	io.WriteString(w, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	f.Flush()
	for i := 0; i < h.chunks; i++ {
		if !sleepUntil(r, start.Add(h.firstByte+time.Duration(i)*h.interval)) {
			return
		}
		io.WriteString(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"word \"}}\n\n")
		f.Flush()
	}
	fmt.Fprintf(w, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":%d}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n", h.chunks)
}

// sleepUntil waits until t, or less when the client goes away; it reports
// whether the request is still wanted.
func sleepUntil(r *http.Request, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-r.Context().Done():
		return false
	}
}
