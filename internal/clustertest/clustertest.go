// Package clustertest drives several proxy replicas that share one store
// with many concurrent agent conversations, and checks what the issue of
// running the proxy at scale asks: exactly one compaction per crossing of
// the trigger, no request over the window, no tool result without its
// call, and each conversation's compacted prefix byte-identical whichever
// replica sent it. Store packages run it against their own store.
package clustertest

import (
	"bytes"
	"encoding/json"
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

	"github.com/compactkit/compact/internal/fakeupstream"
	"github.com/compactkit/compact/proxy"
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
}

// Result is what a run measured.
type Result struct {
	Requests    int     // model requests the upstream answered
	Compactions float64 // compact_proxy_compactions_total over the replicas
	Summaries   int     // distinct summary items seen upstream
	MaxTokens   int     // the largest upstream request the upstream accepted
	// Refused counts the requests refused as too long and then compacted
	// and retried by the proxy (the client never saw them); they are only
	// allowed in a run with an outage of the store.
	Refused int
}

// Run starts opts.Replicas proxies on the stores newStore returns (one call
// per replica: they must share their data), drives the conversations
// through them round-robin, and fails t on any violation.
func Run(t *testing.T, newStore func(t *testing.T) proxy.Store, opts Options) Result {
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
	fake, base := fakeupstream.Start(t, fakeupstream.Config{Window: opts.Window, Steps: opts.Turns})
	logger := slog.New(slog.DiscardHandler)
	if os.Getenv("COMPACT_CLUSTERTEST_LOG") != "" {
		logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	var replicas []*proxy.Server
	var urls []string
	for i := 0; i < opts.Replicas; i++ {
		srv, err := proxy.New(proxy.Config{OpenAIUpstream: base, Window: opts.Window, Summarizer: opts.Summarizer,
			Store: newStore(t), LocalFallback: opts.LocalFallback, Logger: logger})
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(srv)
		t.Cleanup(func() { ts.Close(); srv.Close() })
		replicas = append(replicas, srv)
		urls = append(urls, ts.URL)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 100}}
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
			if err := converse(client, urls, c, opts.Turns, done); err != nil {
				t.Errorf("conversation %d: %v", c, err)
			}
		}()
	}
	wg.Wait()

	var res Result
	for _, r := range replicas {
		res.Compactions += compactions(t, r)
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
		for i, it := range r.Items {
			if !bytes.Contains(it, []byte("condensed into the summary below")) {
				continue
			}
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
	res.Summaries = len(summaries)
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

// compactions sums a replica's compact_proxy_compactions_total.
func compactions(t *testing.T, srv *proxy.Server) float64 {
	mfs, err := srv.Metrics().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, mf := range mfs {
		if mf.GetName() != "compact_proxy_compactions_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			n += m.GetCounter().GetValue()
		}
	}
	return n
}

// converse plays one agent through a whole conversation of turns shell
// steps, each request sent to the next replica in turn.
func converse(client *http.Client, urls []string, id, turns int, answered func()) error {
	c := NewConversation(client, id)
	for turn := 0; turn <= turns+1; turn++ {
		done, err := c.Step(urls[(id+turn)%len(urls)])
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
	ID     int
	client *http.Client
	items  []string
}

// NewConversation starts conversation id.
func NewConversation(client *http.Client, id int) *Conversation {
	return &Conversation{ID: id, client: client, items: []string{`{"role":"system","content":"You are a test agent."}`,
		fmt.Sprintf(`{"role":"user","content":"Conversation %d: run the numbered shell steps."}`, id)}}
}

// Body is the request the conversation sends next.
func (c *Conversation) Body(stream bool) []byte {
	return []byte(`{"model":"gpt-test","stream":` + fmt.Sprint(stream) + `,"messages":[` + strings.Join(c.items, ",") + `],"tools":[{"type":"function","function":{"name":"bash","parameters":{"type":"object","properties":{"command":{"type":"string"}}}}}]}`)
}

// Header is what the conversation's requests carry.
func (c *Conversation) Header() http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Authorization", "Bearer test-key")
	h.Set("X-Session-Id", fmt.Sprintf("conv-%d", c.ID))
	return h
}

// Step sends the history to the proxy at url and appends the answer and
// the tool's output. done is true when the model gave its final answer.
func (c *Conversation) Step(url string) (done bool, err error) {
	req, _ := http.NewRequest("POST", url+"/v1/chat/completions", bytes.NewReader(c.Body(false)))
	req.Header = c.Header()
	resp, err := c.client.Do(req)
	if err != nil {
		return false, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return false, err
	}
	if resp.StatusCode != 200 {
		return false, fmt.Errorf("status %d: %.300s", resp.StatusCode, b)
	}
	var out struct {
		Choices []struct {
			Message json.RawMessage `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(b, &out); err != nil || len(out.Choices) == 0 {
		return false, fmt.Errorf("%v: %.300s", err, b)
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
	_ = json.Unmarshal(out.Choices[0].Message, &m)
	c.items = append(c.items, string(out.Choices[0].Message))
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
