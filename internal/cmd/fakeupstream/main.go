// Command fakeupstream serves the scripted model provider of the tests
// (internal/testing/fakeupstream) on loopback, for scripts that run a
// real `compact proxy` in front of it (scripts/prometheus.sh). It behaves
// as the Fake does by default: the window enforced with each provider's
// overflow error, signed thinking and its rules, prompt-cache billing,
// and answers paced like a model's when latencies are given.
//
//	fakeupstream -listen 127.0.0.1:0 -window 120000 -steps 45 -output-lines 3000 \
//	    -turn-first-byte 200ms -turn-stream 300ms -summary-first-byte 1s -summary-stream 1s
//
// It prints "fakeupstream listening on http://ADDR" on stdout once it
// accepts connections. Besides the providers' paths it answers
// GET /fake/stats with what it billed, as a provider's usage page would:
// a JSON object (see stats) that a script compares with what the proxy
// reported. It runs until it is killed.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/fakeupstream"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "fakeupstream:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("fakeupstream", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on (loopback)")
	var cfg fakeupstream.Config
	fs.IntVar(&cfg.Window, "window", 0, "context window in tokens the fake enforces (0: none)")
	fs.IntVar(&cfg.Steps, "steps", fakeupstream.DefaultSteps, "shell calls before the final answer \"DONE after N steps\"")
	fs.IntVar(&cfg.OutputLines, "output-lines", fakeupstream.DefaultOutputLines, "lines of each step's shell output (about 5 bytes a line)")
	fs.DurationVar(&cfg.TurnLatency.FirstByte, "turn-first-byte", 0, "time to the first byte of an answer that is not a summary")
	fs.DurationVar(&cfg.TurnLatency.Stream, "turn-stream", 0, "time over which the rest of such an answer streams")
	fs.DurationVar(&cfg.SummaryLatency.FirstByte, "summary-first-byte", 0, "time to the first byte of a summary")
	fs.DurationVar(&cfg.SummaryLatency.Stream, "summary-stream", 0, "time over which the rest of a summary streams")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	registry, err := compact.LoadRegistry()
	if err != nil {
		return fmt.Errorf("loading the model registry: %w", err)
	}
	fake := fakeupstream.New(cfg)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /fake/stats", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(statsOf(fake, registry))
	})
	mux.Handle("/", fake)

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", *listen, err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 30 * time.Second,
		ErrorLog: slog.NewLogLogger(slog.NewTextHandler(os.Stderr, nil), slog.LevelWarn)}
	fmt.Printf("fakeupstream listening on http://%s\n", ln.Addr())
	os.Stdout.Sync()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shut)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// stats is what GET /fake/stats answers: the fake's bill, split as the
// proxy's metrics split it (the agent's requests, the summaries the proxy
// asked for), and the requests it refused.
type stats struct {
	Requests  bill `json:"requests"`
	Summaries bill `json:"summaries"`
	// Overflows were refused for exceeding the window, ThinkingRefusals
	// by the thinking rules; Problems are Fake.Check's findings (a tool
	// result without its call, ...), one line each.
	Overflows        int      `json:"overflows"`
	ThinkingRefusals int      `json:"thinking_refusals"`
	Problems         []string `json:"problems"`
	// MaxTokens is the largest request, Window the window enforced.
	MaxTokens int `json:"max_tokens"`
	Window    int `json:"window"`
}

// bill sums the usage of the model calls the fake answered. Input is the
// uncached prompt, as the providers' input_tokens counts it; CacheRead
// and CacheWrite the prompt read from and written to the cache.
type bill struct {
	Calls      int `json:"calls"`
	Input      int `json:"input"`
	CacheRead  int `json:"cache_read"`
	CacheWrite int `json:"cache_write"`
	Output     int `json:"output"`
	// CostUSD is the calls at the registry's list prices; Unpriced
	// counts calls of a model without prices (not in CostUSD).
	CostUSD  float64 `json:"cost_usd"`
	Unpriced int     `json:"unpriced"`
}

func statsOf(f *fakeupstream.Fake, registry *compact.Registry) stats {
	s := stats{Problems: []string{}, Window: f.Window(), MaxTokens: f.MaxTokens(),
		Overflows: len(f.Overflows()), ThinkingRefusals: len(f.ThinkingRefusals())}
	for _, r := range f.Requests() {
		s.Problems = append(s.Problems, f.Check(r)...)
		if r.API == "" || r.Rejected || r.Status != http.StatusOK {
			continue
		}
		b := &s.Requests
		if r.Summary {
			b = &s.Summaries
		}
		u := compact.Usage{Input: max(r.Tokens-r.CacheRead-r.CacheWrite, 0), CacheRead: r.CacheRead,
			CacheWrite: r.CacheWrite, CacheWrite1h: r.CacheWrite1h, Output: r.Output}
		b.Calls++
		b.Input += u.Input
		b.CacheRead += u.CacheRead
		b.CacheWrite += u.CacheWrite
		b.Output += u.Output
		info, _ := registry.Lookup(r.Model)
		if c, ok := info.Cost(u); ok {
			b.CostUSD += c.Total()
		} else {
			b.Unpriced++
		}
	}
	return s
}
