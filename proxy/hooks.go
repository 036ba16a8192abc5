package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os/exec"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/redact"
	"github.com/compactkit/compact/proxy/store"
)

// Defaults of the compaction hooks (Config.OnCompactionURL and
// Config.OnCompactionCmd).
const (
	// DefaultHookTimeout bounds one delivery: the POST, or the command's
	// run.
	DefaultHookTimeout = 10 * time.Second
	// hookQueue is how many compactions may wait for delivery; beyond it
	// they are dropped (counted and logged), so that a slow receiver
	// never holds a request up.
	hookQueue = 256
	// hookDrain is how long Server.Close waits for the queued events.
	hookDrain = 5 * time.Second
)

// CompactionHook is what the compaction hooks receive for every
// compaction the proxy records (in line, swapped in from a summary
// written ahead, after an idle spell, after an overflow): the library's
// event (compact.EventJSON, type "compaction_end") with the
// conversation's fields beside it. It never carries a credential or a
// header; the summary text only with Config.HookSummary.
type CompactionHook struct {
	compact.EventJSON
	// Conversation is the short id the log and the conversation API use;
	// API the API of the request ("anthropic", "chat", "responses");
	// Model its model; Agent the client as its headers name it.
	Conversation string `json:"conversation"`
	API          string `json:"api"`
	Model        string `json:"model"`
	Agent        string `json:"agent,omitempty"`
	// Ahead is true when the summary was written ahead of time and
	// swapped in; Native names the provider compaction it came from.
	Ahead  bool   `json:"ahead,omitempty"`
	Native string `json:"native,omitempty"`
	// FirstKeptUnit is where the verbatim part starts (see
	// CompactionCard).
	FirstKeptUnit int `json:"firstKeptUnit"`
	// SummaryRequests counts the summarizer's model calls, SummaryCostUSD
	// their estimated cost (absent when unknown).
	SummaryRequests int      `json:"summaryRequests"`
	SummaryCostUSD  *float64 `json:"summaryCostUSD,omitempty"`
	// At is when the compaction was recorded.
	At time.Time `json:"at"`
	// Summary is the summary text, only with Config.HookSummary.
	Summary string `json:"summary,omitempty"`
}

// hooks delivers CompactionHook payloads in the background, one at a
// time, from a bounded queue.
type hooks struct {
	url     string
	cmd     string
	timeout time.Duration
	client  *http.Client
	log     *slog.Logger
	counts  *prometheus.CounterVec

	mu     sync.Mutex
	closed bool
	queue  chan []byte
	ctx    context.Context
	stop   context.CancelFunc
	done   chan struct{}
}

// hook kinds and outcomes of compact_proxy_hook_deliveries_total.
const (
	hookURL     = "url"
	hookCmd     = "cmd"
	hookOK      = "ok"
	hookFailed  = "failed"
	hookDropped = "dropped"
)

// newHooks checks the hook settings of cfg and starts the delivery
// worker; nil when no hook is configured.
func newHooks(cfg Config, log *slog.Logger, reg prometheus.Registerer) (*hooks, error) {
	if cfg.OnCompactionURL == "" && cfg.OnCompactionCmd == "" {
		if cfg.HookSummary {
			return nil, fmt.Errorf("proxy: hook summary: no compaction hook is set (OnCompactionURL, OnCompactionCmd)")
		}
		return nil, nil
	}
	if cfg.HookTimeout < 0 {
		return nil, fmt.Errorf("proxy: hook timeout %v: must not be negative", cfg.HookTimeout)
	}
	if u := cfg.OnCompactionURL; u != "" {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return nil, fmt.Errorf("proxy: compaction hook URL: want an absolute http or https URL")
		}
	}
	h := &hooks{url: cfg.OnCompactionURL, cmd: cfg.OnCompactionCmd, timeout: cfg.HookTimeout, log: log,
		queue: make(chan []byte, hookQueue), done: make(chan struct{})}
	if h.timeout == 0 {
		h.timeout = DefaultHookTimeout
	}
	// Redirects are not followed: the hook is POSTed where it was told.
	h.client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	h.counts = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "compact", Subsystem: "proxy", Name: "hook_deliveries_total",
		Help: "Compaction hook deliveries by hook (url, cmd) and outcome (ok, failed, dropped: the queue was full or the proxy stopped)."},
		[]string{"hook", "outcome"})
	reg.MustRegister(h.counts)
	h.ctx, h.stop = context.WithCancel(context.Background())
	go h.run()
	return h, nil
}

// kinds are the hooks configured.
func (h *hooks) kinds() []string {
	var k []string
	if h.url != "" {
		k = append(k, hookURL)
	}
	if h.cmd != "" {
		k = append(k, hookCmd)
	}
	return k
}

// send queues p for delivery without waiting; a full queue drops it.
func (h *hooks) send(p CompactionHook) {
	if h == nil {
		return
	}
	b, err := json.Marshal(p)
	if err != nil {
		h.log.Warn("compaction hook: encoding the event failed", "err", err)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.closed {
		select {
		case h.queue <- b:
			return
		default:
		}
	}
	for _, k := range h.kinds() {
		h.counts.WithLabelValues(k, hookDropped).Inc()
	}
	h.log.Warn("compaction hook: event dropped (queue full, or the proxy is stopping)", "conversation", p.Conversation)
}

// run delivers the queued payloads until close.
func (h *hooks) run() {
	defer close(h.done)
	for b := range h.queue {
		if h.ctx.Err() != nil {
			for _, k := range h.kinds() {
				h.counts.WithLabelValues(k, hookDropped).Inc()
			}
			continue
		}
		if h.url != "" {
			h.done1(hookURL, h.post(b))
		}
		if h.cmd != "" {
			h.done1(hookCmd, h.command(b))
		}
	}
}

// done1 counts one delivery and logs a failure: the error names the
// receiver's host or the command's exit, never the payload.
func (h *hooks) done1(kind string, err error) {
	if err == nil {
		h.counts.WithLabelValues(kind, hookOK).Inc()
		return
	}
	h.counts.WithLabelValues(kind, hookFailed).Inc()
	h.log.Warn("compaction hook failed", "hook", kind, "err", err)
}

// post sends b to the hook URL.
func (h *hooks) post(b []byte) error {
	ctx, cancel := context.WithTimeout(h.ctx, h.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "compact-proxy-hook")
	where := req.URL.Scheme + "://" + req.URL.Host
	resp, err := h.client.Do(req)
	if err != nil {
		// (*url.Error quotes the whole URL, which may hold a secret.)
		if ctx.Err() != nil {
			return fmt.Errorf("POST %s: no answer within %v", where, h.timeout)
		}
		return fmt.Errorf("POST %s: could not deliver", where)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: answered %d", where, resp.StatusCode)
	}
	return nil
}

// command runs the hook command with b on its stdin.
func (h *hooks) command(b []byte) error {
	ctx, cancel := context.WithTimeout(h.ctx, h.timeout)
	defer cancel()
	c := exec.CommandContext(ctx, "/bin/sh", "-c", h.cmd)
	c.Stdin = bytes.NewReader(b)
	// Its output is not logged: it may echo the payload.
	c.Stdout, c.Stderr = io.Discard, io.Discard
	c.WaitDelay = time.Second
	err := c.Run()
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil && h.ctx.Err() == nil:
		return fmt.Errorf("command: still running after %v; stopped", h.timeout)
	}
	return fmt.Errorf("command: %w", err)
}

// close stops taking payloads and gives the queued ones until ctx ends to
// be delivered; what is left then is dropped (counted).
func (h *hooks) close(ctx context.Context) {
	if h == nil {
		return
	}
	h.mu.Lock()
	if !h.closed {
		h.closed = true
		close(h.queue)
	}
	h.mu.Unlock()
	select {
	case <-h.done:
	case <-ctx.Done():
		h.stop()
		<-h.done
	}
	h.stop()
}

// notifyCompaction sends the hooks the compaction cp the request x
// recorded (res: the engine's result, nil when unknown).
func (s *Server) notifyCompaction(x *exchange, cp *store.Checkpoint, res *compact.Result) {
	if s.hooks == nil {
		return
	}
	v := x.v
	ev := compact.Event{Type: compact.EventEnd, Reason: cp.Reason, TokensBefore: cp.TokensBefore, TokensAfter: cp.TokensAfter,
		Duration: cp.Duration, Summarizer: cp.Summarizer}
	calls := cp.Calls()
	for _, u := range v.p.Units[:min(cp.Covered, len(v.p.Units))] {
		ev.MessagesSummarized += len(u.Messages)
	}
	if len(calls) > 0 {
		var u compact.Usage
		for _, c := range calls {
			u.Input += c.Usage.Input
			u.Output += c.Usage.Output
			u.CacheRead += c.Usage.CacheRead
			u.CacheWrite += c.Usage.CacheWrite
			u.CacheWrite1h += c.Usage.CacheWrite1h
		}
		ev.Usage = &u
	}
	if res != nil {
		ev.Adjustments = res.Adjustments
		if res.FallbackErr != nil {
			// The summarizer's error may quote what the upstream said;
			// the request's credentials are taken out.
			ev.FallbackErr = errors.New(redact.String(res.FallbackErr.Error(), secretsOf(x.r.Header)...))
		}
	}
	p := CompactionHook{EventJSON: ev.JSON(), Conversation: v.id.short, API: string(x.api), Model: v.p.Model, Agent: agentOf(x.r.Header),
		Ahead: cp.Ahead, Native: cp.Native, FirstKeptUnit: cp.Covered, SummaryRequests: len(calls), At: cp.Created}
	if c := s.card(cp, false); c.SummaryCostUSD != nil {
		p.SummaryCostUSD = c.SummaryCostUSD
	}
	if s.cfg.HookSummary {
		p.Summary = cp.Summary
	}
	s.hooks.send(p)
}
