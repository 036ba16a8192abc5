// Package clustertest drives several proxy replicas that share one store
// with many concurrent agent conversations, and checks what the issue of
// running the proxy at scale asks: exactly one compaction per crossing of
// the trigger, no request over the window, no tool result without its
// call, and each conversation's compacted prefix byte-identical whichever
// replica sent it. Store packages run it against their own store.
package clustertest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compactkit/compact/internal/testing/agentloop"
	"github.com/compactkit/compact/internal/testing/fakeupstream"
	"github.com/compactkit/compact/proxy"
	"github.com/compactkit/compact/proxy/store"
)

// Options size a run. Zero fields take the defaults in brackets.
type Options struct {
	Replicas      int // [3]
	Conversations int // [50]
	Turns         int // tool steps per conversation [30]
	Window        int // tokens [12000]
	// Summarizer is proxy.SummarizerUpstream or proxy.SummarizerExtractive
	// [extractive].
	Summarizer string
	// Down and Up, when set, make an outage of the store mid-run: Down is
	// called once half the requests were answered, Up once OutageRequests
	// more were [100].
	Down, Up       func()
	OutageRequests int
	// LocalFallback is passed to the replicas (proxy.Config.LocalFallback).
	LocalFallback bool
	// Start, when set, starts the replicas instead (processes, say): it
	// gets the fake provider's base URL and returns the replicas' base
	// URLs. newStore is then not called. Every replica must still answer
	// /metrics when the run ends.
	Start func(t *testing.T, upstream string) []string
	// Latency is how long the provider waits before it answers [2ms].
	Latency time.Duration
	// Upstream, when set, wraps the fake provider (to inject faults).
	Upstream func(next http.Handler) http.Handler
	// Stream makes the clients ask for streamed answers.
	Stream bool
	// ClientTimeout bounds each request of the clients [30s]. A request
	// that fails (transport error, timeout, 5xx) is sent again, up to
	// five times, as agents' SDKs do.
	ClientTimeout time.Duration
	// Disconnect, when set, names the steps (conversation, turn) whose
	// first attempt the client abandons after the first chunk of the
	// streamed answer (Stream must be set); such requests carry the header
	// X-Test-Disconnect, so that an Upstream wrapper can hold their
	// answer open. The client then sends the step again.
	Disconnect func(conversation, turn int) bool
}

// Result is what a run measured.
type Result struct {
	Requests    int     // model requests the upstream answered
	Compactions float64 // compact_proxy_compactions_total over the replicas
	Summaries   int     // distinct summary items sent upstream (answered or not)
	MaxTokens   int     // the largest upstream request the upstream accepted
	// Refused counts the requests refused as too long and then compacted
	// and retried by the proxy (the client never saw them); they are only
	// allowed in a run with an outage of the store.
	Refused int
	// Retries counts the requests the clients sent again after a failure;
	// Disconnects the answers they abandoned on purpose.
	Retries, Disconnects int
	// Fake is the provider, with every request it answered.
	Fake *fakeupstream.Fake
	// LastSummary maps each conversation's session id (X-Session-Id) to
	// the summary item of its last request upstream ("" when none).
	LastSummary map[string]string
}

// String sums the run up for a test's log: requests, compactions,
// summaries, the largest accepted request and, when there were any, the
// requests refused as too long and retried compacted.
func (r Result) String() string {
	s := fmt.Sprintf("%d requests, %v compactions, %d summaries, largest accepted request %d tokens", r.Requests, r.Compactions, r.Summaries, r.MaxTokens)
	if r.Refused > 0 {
		s += fmt.Sprintf(", %d refused as too long and retried compacted", r.Refused)
	}
	return s
}

// Run starts opts.Replicas proxies on the stores newStore returns (one call
// per replica: they must share their data), drives the conversations
// through them round-robin, and fails t on any violation.
func Run(t *testing.T, newStore func(t *testing.T) store.Store, opts Options) Result {
	t.Helper()
	if opts.Replicas == 0 {
		opts.Replicas = 3
	}
	if opts.Conversations == 0 {
		opts.Conversations = 50
	}
	if opts.Turns == 0 {
		opts.Turns = 30
	}
	if opts.Window == 0 {
		opts.Window = 12000
	}
	if opts.Summarizer == "" {
		opts.Summarizer = proxy.SummarizerExtractive
	}
	if opts.Latency == 0 {
		opts.Latency = 2 * time.Millisecond
	}
	if opts.ClientTimeout == 0 {
		opts.ClientTimeout = 30 * time.Second
	}
	fake := fakeupstream.New(fakeupstream.Config{Window: opts.Window, Steps: opts.Turns})
	var provider http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(opts.Latency):
		case <-r.Context().Done():
			return
		}
		fake.ServeHTTP(w, r)
	})
	if opts.Upstream != nil {
		provider = opts.Upstream(provider)
	}
	// Every summary that reaches the provider counts as used, also in a
	// request a fault then failed (the fake never sees those).
	var sentMu sync.Mutex
	sent := map[string]bool{}
	inner := provider
	provider = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		var doc struct {
			Messages []json.RawMessage `json:"messages"`
		}
		if json.Unmarshal(b, &doc) == nil {
			for _, m := range doc.Messages {
				if bytes.Contains(m, []byte(summaryMarker)) {
					sentMu.Lock()
					sent[string(m)] = true
					sentMu.Unlock()
				}
			}
		}
		inner.ServeHTTP(w, r)
	})
	upstream := httptest.NewServer(provider)
	t.Cleanup(upstream.Close)
	base := upstream.URL
	logger := slog.New(slog.DiscardHandler)
	if os.Getenv("COMPACT_CLUSTERTEST_LOG") != "" {
		logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	var urls []string
	if opts.Start != nil {
		urls = opts.Start(t, base)
	} else {
		for i := 0; i < opts.Replicas; i++ {
			srv, err := proxy.New(proxy.Config{OpenAIUpstream: base, Window: opts.Window, Summarizer: opts.Summarizer,
				Store: newStore(t), LocalFallback: opts.LocalFallback, Logger: logger})
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(srv)
			t.Cleanup(func() { ts.Close(); srv.Close() })
			urls = append(urls, ts.URL)
		}
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 100}, Timeout: opts.ClientTimeout}
	var retries, disconnects atomic.Int64
	if opts.OutageRequests == 0 {
		opts.OutageRequests = 100
	}
	var answered atomic.Int64
	var outage sync.Mutex
	half := int64(opts.Conversations * (opts.Turns + 1) / 2)
	done := func() {
		n := answered.Add(1)
		if opts.Down == nil {
			return
		}
		switch n {
		case half:
			outage.Lock()
			opts.Down()
			outage.Unlock()
		case half + int64(opts.OutageRequests):
			outage.Lock()
			opts.Up()
			outage.Unlock()
		}
	}
	var wg sync.WaitGroup
	for c := 0; c < opts.Conversations; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conv := NewConversation(client, c)
			conv.Stream = opts.Stream
			conv.retries, conv.disconnects = &retries, &disconnects
			if opts.Disconnect != nil {
				conv.disconnect = func(turn int) bool { return opts.Disconnect(c, turn) }
			}
			if err := converse(conv, urls, opts.Turns, done); err != nil {
				t.Errorf("conversation %d: %v", c, err)
			}
		}()
	}
	wg.Wait()

	res := Result{Fake: fake, Retries: int(retries.Load()), Disconnects: int(disconnects.Load()), LastSummary: map[string]string{}}
	for _, u := range urls {
		res.Compactions += compactions(t, u)
	}
	// Per conversation, in arrival order: the summaries seen and the
	// prefix each request carried up to its summary.
	prefixes := map[string][]byte{} // summary item -> the items up to it
	summaries := map[string]bool{}
	for _, r := range fake.Requests() {
		if r.API == "" || r.Tools == 0 {
			continue
		}
		res.Requests++
		if r.Overflow && opts.Down != nil {
			// During and right after an outage the proxy cannot know a
			// conversation's size; the provider's refusal makes it compact
			// and retry.
			res.Refused++
			continue
		}
		if r.Tokens > res.MaxTokens {
			res.MaxTokens = r.Tokens
		}
		for _, p := range fake.Check(r) {
			t.Errorf("request %d: %s", r.Seq, p)
		}
		res.LastSummary[r.Header.Get("X-Session-Id")] = ""
		for i, it := range r.Items {
			if !bytes.Contains(it, []byte(summaryMarker)) {
				continue
			}
			res.LastSummary[r.Header.Get("X-Session-Id")] = string(it)
			var prefix []byte
			for _, p := range r.Items[:i+1] {
				prefix = append(append(prefix, p...), 0)
			}
			key := string(it)
			if old, ok := prefixes[key]; ok && !bytes.Equal(old, prefix) {
				t.Errorf("request %d: the prefix up to its summary differs from an earlier request with the same summary", r.Seq)
			}
			prefixes[key] = prefix
			summaries[key] = true
		}
	}
	// (A summary written ahead may still reach the provider now.)
	sentMu.Lock()
	res.Summaries = len(sent)
	sentMu.Unlock()
	if len(summaries) > res.Summaries {
		t.Errorf("%d summaries answered, %d sent", len(summaries), res.Summaries)
	}
	// During an outage replicas cannot agree on who compacts (with a local
	// fallback each may write its own summary, possibly the same bytes);
	// outside one, every compaction is used, once.
	if opts.Down == nil && float64(res.Summaries) != res.Compactions {
		t.Errorf("%v compactions recorded by the replicas, %d distinct summaries sent: a crossing was compacted more than once (or a compaction never used)", res.Compactions, res.Summaries)
	}
	if res.Summaries < 2*opts.Conversations {
		t.Errorf("%d summaries over %d conversations: each should cross the trigger at least twice", res.Summaries, opts.Conversations)
	}
	return res
}

// summaryMarker is in the summary item the proxy sends in place of the
// summarized messages.
const summaryMarker = "condensed into the summary below"

// compactions sums the compact_proxy_compactions_total series of the
// replica at base URL u, read from its /metrics.
func compactions(t *testing.T, u string) float64 {
	resp, err := http.Get(u + "/metrics")
	if err != nil {
		t.Fatalf("metrics of %s: %v", u, err)
	}
	defer resp.Body.Close()
	var n float64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "compact_proxy_compactions_total") {
			continue
		}
		var v float64
		if _, err := fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &v); err == nil {
			n += v
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("metrics of %s: %v", u, err)
	}
	return n
}

// converse plays one agent through a whole conversation of turns shell
// steps, each request sent to the next replica in turn.
func converse(c *Conversation, urls []string, turns int, answered func()) error {
	for turn := 0; turn <= turns+1; turn++ {
		c.turn = turn
		done, err := c.Step(urls[(c.ID+turn)%len(urls)])
		if err != nil {
			return fmt.Errorf("turn %d: %w", turn, err)
		}
		answered()
		if done {
			return nil
		}
	}
	return fmt.Errorf("no DONE after %d turns", turns+2)
}

// Conversation is one agent of the scripted shell task on Chat
// Completions: it keeps its whole history and resends it every turn, with
// a tool result of about 6 KB per step, as coding agents do.
type Conversation struct {
	ID int
	// Stream makes Step ask for a streamed answer.
	Stream bool

	client *http.Client
	items  []string
	turn   int
	// retries and disconnects count, when set, the requests sent again
	// and the answers abandoned; disconnect names the turns to abandon.
	retries, disconnects *atomic.Int64
	disconnect           func(turn int) bool
}

// NewConversation starts conversation id.
func NewConversation(client *http.Client, id int) *Conversation {
	return &Conversation{ID: id, client: client, items: []string{`{"role":"system","content":"You are a test agent."}`,
		fmt.Sprintf(`{"role":"user","content":"Conversation %d: run the numbered shell steps."}`, id)}}
}

// Body is the request the conversation sends next.
func (c *Conversation) Body(stream bool) []byte {
	opts := ""
	if stream {
		opts = `,"stream_options":{"include_usage":true}`
	}
	return []byte(`{"model":"gpt-test","stream":` + fmt.Sprint(stream) + opts + `,"messages":[` + strings.Join(c.items, ",") + `],"tools":[{"type":"function","function":{"name":"bash","parameters":{"type":"object","properties":{"command":{"type":"string"}}}}}]}`)
}

// Header is what the conversation's requests carry.
func (c *Conversation) Header() http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Authorization", "Bearer test-key")
	h.Set("X-Session-Id", fmt.Sprintf("conv-%d", c.ID))
	return h
}

// maxAttempts is how many times a step is sent before it fails.
const maxAttempts = 5

// errRetry marks a failure worth sending the request again for.
var errRetry = errors.New("retryable")

// Step sends the history to the proxy at url and appends the answer and
// the tool's output. done is true when the model gave its final answer.
// A transport error, a timeout, a 5xx or a cut stream is retried after a
// short pause, as SDKs do.
func (c *Conversation) Step(url string) (done bool, err error) {
	var msg []byte
	for attempt := 0; ; attempt++ {
		cut := attempt == 0 && c.disconnect != nil && c.disconnect(c.turn)
		msg, err = c.send(url, cut)
		if cut {
			if c.disconnects != nil {
				c.disconnects.Add(1)
			}
			continue
		}
		if err == nil {
			break
		}
		if !errors.Is(err, errRetry) || attempt+1 >= maxAttempts {
			return false, err
		}
		if c.retries != nil {
			c.retries.Add(1)
		}
		time.Sleep(time.Duration(20<<attempt) * time.Millisecond)
	}
	var m struct {
		Content   string `json:"content"`
		ToolCalls []struct {
			ID       string `json:"id"`
			Function struct {
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	}
	_ = json.Unmarshal(msg, &m)
	c.items = append(c.items, string(msg))
	if len(m.ToolCalls) == 0 {
		if !strings.Contains(m.Content, "DONE") {
			return false, fmt.Errorf("answered %q", m.Content)
		}
		return true, nil
	}
	tc := m.ToolCalls[0]
	step := 0
	if i := strings.Index(tc.Function.Arguments, "STEP-"); i >= 0 {
		fmt.Sscanf(tc.Function.Arguments[i+5:], "%d", &step)
	}
	var text strings.Builder
	fmt.Fprintf(&text, "STEP-%d\n", step)
	for n := 1; text.Len() < 6000; n++ {
		fmt.Fprintf(&text, "%d\n", n)
	}
	q, _ := json.Marshal(text.String())
	c.items = append(c.items, `{"role":"tool","tool_call_id":"`+tc.ID+`","content":`+string(q)+`}`)
	return false, nil
}

// send makes one attempt and returns the assistant message. With cut, the
// answer is abandoned after its first chunk.
func (c *Conversation) send(url string, cut bool) ([]byte, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", url+"/v1/chat/completions", bytes.NewReader(c.Body(c.Stream)))
	req.Header = c.Header()
	if cut {
		req.Header.Set("X-Test-Disconnect", "1")
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errRetry, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		err := fmt.Errorf("status %d: %.300s", resp.StatusCode, b)
		if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests {
			err = fmt.Errorf("%w: %v", errRetry, err)
		}
		return nil, err
	}
	if cut {
		br := bufio.NewReader(resp.Body)
		_, err := br.ReadString('\n')
		cancel()
		return nil, err
	}
	if c.Stream {
		return readStream(resp.Body)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errRetry, err)
	}
	var out struct {
		Choices []struct {
			Message json.RawMessage `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(b, &out); err != nil || len(out.Choices) == 0 {
		return nil, fmt.Errorf("%v: %.300s", err, b)
	}
	return out.Choices[0].Message, nil
}

// readStream assembles the assistant message of a streamed Chat
// Completions answer (agentloop.ChatMessage); a stream that ends before
// [DONE] is an error worth a retry.
func readStream(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errRetry, err)
	}
	msg, err := agentloop.ChatMessage(b)
	if errors.Is(err, agentloop.ErrTruncated) {
		return nil, fmt.Errorf("%w: stream ended before [DONE]", errRetry)
	}
	return msg, err
}
