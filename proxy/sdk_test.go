package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compactkit/compact/internal/testing/fakeupstream"
	"github.com/compactkit/compact/proxy"
)

// The official SDKs as clients: proxy/testdata/sdk/client.mjs drives the
// npm packages "openai" and "@anthropic-ai/sdk" through a tool loop in all
// six ways (three APIs, streamed and not) against the proxy, which sits in
// front of fakeupstream. The SDKs must parse every response the proxy
// passes on, and what they parse must be what the fake sent.
//
// The SDKs are installed by .ci/run (npm ci in proxy/testdata/sdk); the
// test skips without them unless COMPACT_REQUIRE_SDK is set, as .ci/run
// does, so CI never skips it.

// sdkModes are the client's conversations, each its own API and framing.
var sdkModes = []string{"anthropic", "anthropic-stream", "chat", "chat-stream", "responses", "responses-stream"}

// sdkTurn is one line of client.mjs's output: one call as the SDK saw it.
type sdkTurn struct {
	Mode      string `json:"mode"`
	API       string `json:"api"`
	Stream    bool   `json:"stream"`
	Turn      int    `json:"turn"`
	OK        bool   `json:"ok"`
	Error     string `json:"error"`
	SentItems int    `json:"sent_items"`
	ID        string `json:"id"`
	Stop      string `json:"stop"`
	CallID    string `json:"tool_call_id"`
	ToolName  string `json:"tool_name"`
	ToolArgs  string `json:"tool_args"`
	Text      string `json:"text"`
	Usage     *usage `json:"usage"`
}

// usage is a response's token counts, as an SDK reports them or as read
// from the fake's own bytes. Total is 0 where the API has none (Anthropic).
type usage struct {
	Input  int `json:"input"`
	Output int `json:"output"`
	Total  int `json:"total"`
}

// sdkEnv locates node and the installed SDKs, or skips (fails when
// COMPACT_REQUIRE_SDK is set) with the way to install them.
func sdkEnv(t *testing.T) (node, script, modules string) {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...) + "; install them with `npm ci --prefix proxy/testdata/sdk` (.ci/run does), or point COMPACT_NODE_MODULES at a node_modules folder holding openai and @anthropic-ai/sdk"
		if os.Getenv("COMPACT_REQUIRE_SDK") != "" {
			t.Fatalf("COMPACT_REQUIRE_SDK is set but %s", msg)
		}
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not on PATH (%v)", err)
	}
	script, err = filepath.Abs(filepath.Join("testdata", "sdk", "client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	// Reading the script (not only running it) lets go test's cache see
	// when it changes.
	if _, err := os.ReadFile(script); err != nil {
		t.Fatal(err)
	}
	modules = os.Getenv("COMPACT_NODE_MODULES")
	if modules == "" {
		modules = filepath.Join(filepath.Dir(script), "node_modules")
	}
	if modules, err = filepath.Abs(modules); err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"openai", "@anthropic-ai/sdk"} {
		if _, err := os.Stat(filepath.Join(modules, pkg, "package.json")); err != nil {
			missing("the npm package %s is not installed in %s", pkg, modules)
		}
	}
	return node, script, modules
}

// exchange is one request the fake answered, with the answer's bytes.
type exchange struct {
	front int // index of the client's request it served (see sdkRig.front)
	req   fakeupstream.Request
	resp  []byte
}

// sdkRig is the fake upstream, the proxy, and recorders on both sides of
// the proxy. The client makes one call at a time, so every upstream
// exchange belongs to the client request in flight (cur).
type sdkRig struct {
	fake   *fakeupstream.Fake
	srv    *proxy.Server
	url    string // the proxy's base URL, what the SDKs are pointed at
	window int    // the fake's window, 0 for none

	mu        sync.Mutex
	cur       int          // index of the client request in flight
	front     [][]byte     // bodies of the client's requests, as sent
	frontResp []*teeWriter // the proxy's answers to them
	exchanges []exchange
}

// newSDKRig starts the fake with fakeWindow and the proxy with
// proxyWindow, the extractive summarizer and an in-memory store.
func newSDKRig(t *testing.T, fakeWindow, proxyWindow, steps int) *sdkRig {
	t.Helper()
	rig := &sdkRig{window: fakeWindow, cur: -1}
	rig.fake = fakeupstream.New(fakeupstream.Config{Window: fakeWindow, Steps: steps})
	upstream := httptest.NewServer(http.HandlerFunc(rig.upstream))
	t.Cleanup(upstream.Close)
	srv, err := proxy.New(proxy.Config{
		AnthropicUpstream: upstream.URL,
		OpenAIUpstream:    upstream.URL,
		Window:            proxyWindow,
		Summarizer:        proxy.SummarizerExtractive,
		Logger:            slog.New(slog.NewTextHandler(testLogWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	rig.srv = srv
	front := httptest.NewServer(http.HandlerFunc(rig.client))
	t.Cleanup(front.Close)
	rig.url = front.URL
	return rig
}

// client records a client request's body and passes it to the proxy.
func (rig *sdkRig) client(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	rig.mu.Lock()
	rig.cur = len(rig.front)
	rig.front = append(rig.front, body)
	tee := &teeWriter{ResponseWriter: w}
	rig.frontResp = append(rig.frontResp, tee)
	rig.mu.Unlock()
	rig.srv.ServeHTTP(tee, r)
}

// upstream serves one request with the fake, keeping a copy of the answer
// and the fake's record of the request. Requests are served one at a time
// so that the last record is this request's.
func (rig *sdkRig) upstream(w http.ResponseWriter, r *http.Request) {
	rig.mu.Lock()
	defer rig.mu.Unlock()
	tee := &teeWriter{ResponseWriter: w}
	rig.fake.ServeHTTP(tee, r)
	reqs := rig.fake.Requests()
	rig.exchanges = append(rig.exchanges, exchange{front: rig.cur, req: reqs[len(reqs)-1], resp: tee.bytes()})
}

// teeWriter keeps a copy of what it writes and flushes as it goes, so
// streams stay streams. The copy may be read while the handler runs.
type teeWriter struct {
	http.ResponseWriter
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *teeWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.buf.Write(p)
	w.mu.Unlock()
	return w.ResponseWriter.Write(p)
}

// bytes returns a copy of what was written so far.
func (w *teeWriter) bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.buf.Bytes())
}

func (w *teeWriter) Flush() {
	if fl, ok := w.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
}

// testLogWriter sends the proxy's warnings to the test log.
type testLogWriter struct{ t *testing.T }

func (w testLogWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// runClient runs client.mjs against the rig and returns its turns by mode.
func (rig *sdkRig) runClient(t *testing.T, turns int) map[string][]sdkTurn {
	t.Helper()
	node, script, modules := sdkEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Env = append(os.Environ(),
		"COMPACT_SDK_BASE="+rig.url,
		fmt.Sprintf("COMPACT_SDK_TURNS=%d", turns),
		"COMPACT_SDK_MODULES="+modules,
		"COMPACT_SDK_MODES="+strings.Join(sdkModes, ","),
	)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Errorf("client.mjs: %v\nstderr:\n%s", err, stderr.String())
	}
	byMode := map[string][]sdkTurn{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if n == 1 {
			t.Logf("client.mjs: %s", line)
			continue
		}
		var turn sdkTurn
		if err := json.Unmarshal(line, &turn); err != nil {
			t.Fatalf("client.mjs output line %d is not a turn: %v: %s", n, err, line)
		}
		if !turn.OK {
			t.Errorf("%s turn %d: the SDK failed: %s", turn.Mode, turn.Turn, turn.Error)
		}
		byMode[turn.Mode] = append(byMode[turn.Mode], turn)
	}
	return byMode
}

// answered returns the exchange whose answer carries the response id the
// SDK reported, the client request it served and the proxy's answer to
// it. The client has its answer, so the proxy is done writing it.
func (rig *sdkRig) answered(id string) (e exchange, sent, got []byte, ok bool) {
	rig.mu.Lock()
	defer rig.mu.Unlock()
	for _, e := range rig.exchanges {
		if a, _ := readAnswer(e.resp); a.id == id && id != "" {
			return e, rig.front[e.front], rig.frontResp[e.front].bytes(), true
		}
	}
	return exchange{}, nil, nil, false
}

// answer is what the fake's own bytes said: the response id and the final
// usage (the last one a stream carried; Anthropic's message_delta counts
// are totals, not increments).
type answer struct {
	id    string
	usage *usage
}

// readAnswer reads a JSON body or an SSE stream of any of the three APIs.
func readAnswer(resp []byte) (answer, error) {
	var docs [][]byte
	if bytes.HasPrefix(bytes.TrimSpace(resp), []byte("{")) {
		docs = append(docs, resp)
	} else {
		for _, line := range bytes.Split(resp, []byte("\n")) {
			if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok && !bytes.Equal(data, []byte("[DONE]")) {
				docs = append(docs, data)
			}
		}
	}
	var a answer
	for _, d := range docs {
		var doc struct {
			ID       string          `json:"id"`
			Usage    json.RawMessage `json:"usage"`
			Message  json.RawMessage `json:"message"`
			Response json.RawMessage `json:"response"`
		}
		if err := json.Unmarshal(d, &doc); err != nil {
			return a, err
		}
		for _, inner := range []json.RawMessage{doc.Message, doc.Response} {
			if len(inner) > 0 && inner[0] == '{' {
				_ = json.Unmarshal(inner, &doc)
			}
		}
		if a.id == "" {
			a.id = doc.ID
		}
		if u := parseUsage(doc.Usage); u != nil {
			a.usage = u
		}
	}
	return a, nil
}

// parseUsage reads the usage object of any of the three APIs, nil for
// none or null.
func parseUsage(raw json.RawMessage) *usage {
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	var u struct {
		Input      *int `json:"input_tokens"`
		Output     *int `json:"output_tokens"`
		Prompt     *int `json:"prompt_tokens"`
		Completion *int `json:"completion_tokens"`
		Total      int  `json:"total_tokens"`
	}
	if json.Unmarshal(raw, &u) != nil {
		return nil
	}
	out := &usage{Total: u.Total}
	switch {
	case u.Input != nil && u.Output != nil:
		out.Input, out.Output = *u.Input, *u.Output
	case u.Prompt != nil && u.Completion != nil:
		out.Input, out.Output = *u.Prompt, *u.Completion
	default:
		return nil
	}
	return out
}

// listLen is the length of a request body's message list (messages, or
// the input of Responses).
func listLen(t *testing.T, api string, body []byte) int {
	t.Helper()
	var doc struct {
		Messages []json.RawMessage `json:"messages"`
		Input    []json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("client request body is not JSON: %v", err)
	}
	if api == "responses" {
		return len(doc.Input)
	}
	return len(doc.Messages)
}

// checkTurns asserts what every SDK parsed and that the proxy passed each
// answer on unchanged; it returns, per mode, the turns the fake saw with
// fewer items than the client sent (compacted turns).
func (rig *sdkRig) checkTurns(t *testing.T, byMode map[string][]sdkTurn, steps int) map[string]int {
	t.Helper()
	compacted := map[string]int{}
	for _, mode := range sdkModes {
		turns := byMode[mode]
		if len(turns) != steps+1 {
			t.Errorf("%s: the client made %d turns, want %d (%d shell steps and the final answer)", mode, len(turns), steps+1, steps)
		}
		for _, turn := range turns {
			if !turn.OK {
				continue
			}
			where := fmt.Sprintf("%s turn %d", mode, turn.Turn)
			final := turn.Turn == steps+1
			wantStop := map[string][2]string{
				"anthropic": {"tool_use", "end_turn"},
				"chat":      {"tool_calls", "stop"},
				"responses": {"completed", "completed"},
			}[turn.API]
			switch {
			case final && (turn.Stop != wantStop[1] || turn.Text != fmt.Sprintf("DONE after %d steps", steps) || turn.CallID != ""):
				t.Errorf("%s: the SDK read stop %q, text %q, tool call %q; want %q and the final text", where, turn.Stop, turn.Text, turn.CallID, wantStop[1])
			case !final && (turn.Stop != wantStop[0] || turn.ToolName != "bash" || turn.CallID == "" || !strings.Contains(turn.ToolArgs, fmt.Sprintf("STEP-%d;", turn.Turn))):
				t.Errorf("%s: the SDK read stop %q, tool call %q %q(%s); want %q and a bash call for STEP-%d", where, turn.Stop, turn.CallID, turn.ToolName, turn.ToolArgs, wantStop[0], turn.Turn)
			}
			e, sent, got, ok := rig.answered(turn.ID)
			if !ok {
				t.Errorf("%s: no upstream answer carries the response id %q the SDK read", where, turn.ID)
				continue
			}
			if string(e.req.API) != turn.API || e.req.Stream != turn.Stream {
				t.Errorf("%s: answered by a %s request (stream %v), want %s (stream %v)", where, e.req.API, e.req.Stream, turn.API, turn.Stream)
			}
			if !bytes.Equal(got, e.resp) {
				t.Errorf("%s: the proxy's answer differs from the upstream's:\nproxy:    %.300q\nupstream: %.300q", where, got, e.resp)
			}
			fakeSaid, err := readAnswer(e.resp)
			if err != nil || fakeSaid.usage == nil {
				t.Errorf("%s: the fake's answer has no usage (%v): %.300s", where, err, e.resp)
				continue
			}
			if turn.Usage == nil || *turn.Usage != *fakeSaid.usage {
				t.Errorf("%s: the SDK read usage %+v, the fake sent %+v", where, turn.Usage, *fakeSaid.usage)
			}
			if fakeSaid.usage.Input != e.req.Tokens {
				t.Errorf("%s: the fake reported %d input tokens for a %d-token request", where, fakeSaid.usage.Input, e.req.Tokens)
			}
			clientItems := listLen(t, turn.API, sent)
			t.Logf("%s: %s %s(%s) text %q usage %+v; items %d sent, %d upstream", where, turn.Stop, turn.ToolName, turn.CallID, turn.Text, *turn.Usage, clientItems, len(e.req.Items))
			if clientItems != turn.SentItems {
				t.Errorf("%s: the proxy received %d items, the client says it sent %d", where, clientItems, turn.SentItems)
			}
			if len(e.req.Items) < clientItems {
				compacted[mode]++
			} else if !bytes.Equal(e.req.Body, sent) {
				t.Errorf("%s: uncompacted (%d items in, %d out), but the upstream body differs from the client's:\nclient:   %.300s\nupstream: %.300s", where, clientItems, len(e.req.Items), sent, e.req.Body)
			}
		}
	}
	return compacted
}

// checkUpstream asserts that no upstream request was one a provider would
// refuse (over the window, unpaired tool calls) and that compactions kept
// their prefixes stable. With allowOverflow, requests over the window are
// allowed, as long as the proxy's retry of the same client request was
// accepted; it returns how many there were.
func (rig *sdkRig) checkUpstream(t *testing.T, allowOverflow bool) int {
	t.Helper()
	rig.mu.Lock()
	exchanges := append([]exchange(nil), rig.exchanges...)
	rig.mu.Unlock()
	overflows := 0
	byConv := map[string][]fakeupstream.Request{}
	for i, e := range exchanges {
		r := e.req
		if allowOverflow && r.Overflow && len(r.Problems) == 0 {
			overflows++
			if i+1 == len(exchanges) || exchanges[i+1].front != e.front || exchanges[i+1].req.Rejected {
				t.Errorf("upstream request #%d (%s, %d tokens) overflowed the %d-token window and the proxy did not retry it successfully", r.Seq, r.API, r.Tokens, rig.window)
			}
		} else {
			for _, p := range rig.fake.Check(r) {
				t.Errorf("upstream request #%d (%s, %d tokens, window %d): %s", r.Seq, r.API, r.Tokens, rig.window, p)
			}
			if r.Rejected {
				t.Errorf("upstream request #%d (%s) was refused with status %d", r.Seq, r.API, r.Status)
			}
		}
		key := fmt.Sprintf("%s stream=%v", r.API, r.Stream)
		byConv[key] = append(byConv[key], r)
	}
	for key, conv := range byConv {
		_, problems := fakeupstream.StablePrefixes(fakeupstream.MainLoop(conv))
		for _, p := range problems {
			t.Errorf("%s: %s", key, p)
		}
	}
	if got, want := len(exchanges), len(rig.fake.Requests()); got != want {
		t.Errorf("recorded %d upstream exchanges, the fake %d requests", got, want)
	}
	return overflows
}

// metricSum is the value of one of the proxy's counters, summed over its
// series.
func metricSum(t testing.TB, srv *proxy.Server, name string) float64 {
	t.Helper()
	families, err := srv.Metrics().Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, f := range families {
		if f.GetName() == name {
			for _, m := range f.GetMetric() {
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total
}

// TestSDKClients runs the official SDKs through the proxy twice: with a
// small window, where each conversation outgrows it and is compacted on
// the way, and with a large one, where every request must reach the
// upstream byte for byte as the SDK sent it.
func TestSDKClients(t *testing.T) {
	sdkEnv(t)
	// Each turn adds a tool call and a 6 KB result, about 1,800 tokens
	// once JSON-escaped: 11 steps make some 20,000 tokens, beyond the
	// 12,000-token window the fake enforces.
	const steps, window = 11, 12000

	t.Run("compacting", func(t *testing.T) {
		rig := newSDKRig(t, window, window, steps)
		byMode := rig.runClient(t, steps+1)
		compacted := rig.checkTurns(t, byMode, steps)
		rig.checkUpstream(t, false)
		for _, mode := range sdkModes {
			if compacted[mode] == 0 {
				t.Errorf("%s: no turn reached the upstream compacted", mode)
			}
		}
		if n := metricSum(t, rig.srv, "compact_proxy_compactions_total"); n == 0 {
			t.Errorf("compact_proxy_compactions_total is 0, want compactions")
		}
		if max := rig.fake.MaxTokens(); max > window {
			t.Errorf("the largest upstream request counts %d tokens, over the %d-token window", max, window)
		}
		t.Logf("compacted turns per mode %v; largest upstream request %d tokens", compacted, rig.fake.MaxTokens())
	})

	// The proxy believes the window is 12,000 tokens, the fake refuses
	// anything over 7,000 with its overflow error: the proxy must compact
	// and retry, and the SDKs see only the accepted answers.
	t.Run("overflow", func(t *testing.T) {
		const small = 7000
		rig := newSDKRig(t, small, window, steps)
		byMode := rig.runClient(t, steps+1)
		compacted := rig.checkTurns(t, byMode, steps)
		overflows := rig.checkUpstream(t, true)
		for _, mode := range sdkModes {
			if compacted[mode] == 0 {
				t.Errorf("%s: no turn reached the upstream compacted", mode)
			}
		}
		retries := metricSum(t, rig.srv, "compact_proxy_overflow_retries_total")
		if overflows == 0 || retries != float64(overflows) {
			t.Errorf("%d upstream overflows, compact_proxy_overflow_retries_total %v; want some, each retried once", overflows, retries)
		}
		t.Logf("%d overflows retried; compacted turns per mode %v", overflows, compacted)
	})

	t.Run("passthrough", func(t *testing.T) {
		rig := newSDKRig(t, 0, 1<<20, steps)
		byMode := rig.runClient(t, steps+1)
		compacted := rig.checkTurns(t, byMode, steps)
		rig.checkUpstream(t, false)
		for mode, n := range compacted {
			if n > 0 {
				t.Errorf("%s: %d turns reached the upstream with fewer items than the client sent, under a window they never near", mode, n)
			}
		}
		if n := metricSum(t, rig.srv, "compact_proxy_compactions_total"); n != 0 {
			t.Errorf("compact_proxy_compactions_total is %v, want 0", n)
		}
		if got, want := len(rig.fake.Requests()), len(rig.front); got != want {
			t.Errorf("the fake received %d requests for the client's %d", got, want)
		}
	})
}
