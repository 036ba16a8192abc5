package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact/internal/testing/agentloop"
	"github.com/compactkit/compact/internal/testing/fakeupstream"
	"github.com/compactkit/compact/internal/testing/syncbuf"
)

// TestProxyCommandServes starts "compact proxy" on a free port, checks
// /healthz and a passthrough request, and stops it with the context as
// Ctrl-C would.
func TestProxyCommandServes(t *testing.T) {
	up := http.NewServeMux()
	var got []byte
	up.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		got = []byte(r.Header.Get("X-Test"))
		io.WriteString(w, `{"data":[]}`)
	})
	upSrv := httptest.NewServer(up)
	defer upSrv.Close()
	ups := upSrv.URL
	p := startProxy(t, "--store", filepath.Join(t.TempDir(), "p.db"), "--openai-upstream", ups, "--anthropic-upstream", ups, "--window", "100000")
	addr := p.addr
	resp, err := http.Get(addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "ok\n" {
		t.Errorf("/healthz: %q", b)
	}
	req, _ := http.NewRequest("GET", addr+"/v1/models", nil)
	req.Header.Set("X-Test", "passed")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != `{"data":[]}` || string(got) != "passed" {
		t.Errorf("passthrough: body %q, header %q", b, got)
	}
	p.stop()
	if code := <-p.done; code != 0 {
		t.Errorf("exit %d after Ctrl-C; stderr %s", code, p.stderr.String())
	}
}

func TestProxyCommandUsageErrors(t *testing.T) {
	c := newCLI(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"proxy", "--summarizer", "gpt"}, "--summarizer"},
		{[]string{"proxy", "--summarizer", "extractive", "--summary-model", "m"}, "--summary-model"},
		{[]string{"proxy", "--store-ttl", "0s"}, "--store-ttl"},
		{[]string{"proxy", "--max-body", "0"}, "--max-body"},
		{[]string{"proxy", "--summary-timeout", "0s"}, "--summary-timeout"},
		{[]string{"proxy", "--drain-timeout", "0s"}, "--drain-timeout"},
		{[]string{"proxy", "--log-format", "xml"}, "--log-format"},
		{[]string{"proxy", "--openai-upstream", "ftp://x", "--store", "memory"}, "openai upstream"},
		{[]string{"proxy", "--listen", "256.0.0.1:1", "--store", "memory"}, "--listen"},
		{[]string{"proxy", "--window", "-5"}, "--window"},
	} {
		out := c.fails(2, tc.args...)
		if !strings.Contains(out, tc.want) {
			t.Errorf("%v: %q does not name %s", tc.args, out, tc.want)
		}
	}
}

func TestProxyHelp(t *testing.T) {
	out := newCLI(t).ok("proxy", "--help")
	for _, want := range []string{"--listen", "--anthropic-upstream", "--openai-upstream", "--window", "--store", "--summarizer", "--summary-model", "/healthz", "/metrics", "WebSocket"} {
		if !strings.Contains(out, want) {
			t.Errorf("proxy --help lacks %q", want)
		}
	}
}

// TestProxyDrainsStreamsOnShutdown: a stream in flight when the proxy is
// told to stop (Ctrl-C, SIGTERM) is delivered to its end before the
// process exits.
func TestProxyDrainsStreamsOnShutdown(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"n\":1}\n\n")
		w.(http.Flusher).Flush()
		close(started)
		<-release
		io.WriteString(w, "data: {\"n\":2}\n\ndata: [DONE]\n\n")
	}))
	defer up.Close()
	p := startProxy(t, "--store", "memory", "--openai-upstream", up.URL, "--window", "100000")
	addr := p.addr
	resp, err := http.Post(addr+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"gpt-test","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	<-started
	p.stop() // SIGTERM arrives mid-stream
	// Wait until the proxy has stopped accepting connections, so the rest
	// of the stream is sent during the drain.
	for i := 0; i < 1000; i++ {
		c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		r, err := c.Get(addr + "/healthz")
		if err != nil {
			break
		}
		r.Body.Close()
		time.Sleep(5 * time.Millisecond)
	}
	close(release)
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !strings.Contains(string(b), "[DONE]") {
		t.Errorf("stream cut by the shutdown: %q, %v", b, err)
	}
	if code := <-p.done; code != 0 {
		t.Errorf("exit %d; stderr %s", code, p.stderr.String())
	}
}

// TestProxyStartsWithRedisDown: a proxy pointed at a Redis that is not
// there starts anyway, passes requests through, and says on /readyz that
// its store is unavailable.
func TestProxyStartsWithRedisDown(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"hi"}}],"usage":{"prompt_tokens":5,"completion_tokens":1}}`)
	}))
	defer up.Close()
	p := startProxy(t, "--redis", "redis://:hunter2-secret@127.0.0.1:1/0", "--openai-upstream", up.URL, "--window", "100000")
	addr := p.addr
	resp, err := http.Get(addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("/readyz %d with Redis down, want 503", resp.StatusCode)
	}
	resp, err = http.Post(addr+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"gpt-test","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"content":"hi"`) {
		t.Errorf("request with Redis down: %d %s", resp.StatusCode, b)
	}
	p.stop()
	<-p.done
	if strings.Contains(p.stderr.String(), "hunter2-secret") {
		t.Error("the Redis password reached the log")
	}
}

func TestProxyRedisUsage(t *testing.T) {
	c := newCLI(t)
	out := c.fails(2, "proxy", "--redis", "redis://127.0.0.1:1/0", "--store", "memory")
	if !strings.Contains(out, "--redis") {
		t.Errorf("%q", out)
	}
	out = c.fails(2, "proxy", "--redis", "http://127.0.0.1:1/0")
	if !strings.Contains(out, "--redis") {
		t.Errorf("%q", out)
	}
	// --redis-ca goes with a TLS URL, and must hold a certificate.
	out = c.fails(2, "proxy", "--redis", "redis://127.0.0.1:1/0", "--redis-ca", "ca.pem")
	if !strings.Contains(out, "--redis-ca") || !strings.Contains(out, "rediss://") {
		t.Errorf("--redis-ca with redis://: %q", out)
	}
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(notPEM, []byte("not a certificate"), 0o600)
	out = c.fails(2, "proxy", "--redis", "rediss://127.0.0.1:1/0", "--redis-ca", notPEM)
	if !strings.Contains(out, "--redis-ca") || !strings.Contains(out, "no PEM certificate") {
		t.Errorf("--redis-ca with a file that is not PEM: %q", out)
	}
	out = c.fails(1, "proxy", "--redis", "rediss://127.0.0.1:1/0", "--redis-ca", filepath.Join(t.TempDir(), "missing.pem"))
	if !strings.Contains(out, "--redis-ca") || !strings.Contains(out, "missing.pem") {
		t.Errorf("--redis-ca with a missing file: %q", out)
	}
}

// runningProxy is "compact proxy" running in this process.
type runningProxy struct {
	addr   string             // its base URL
	stop   context.CancelFunc // Ctrl-C or SIGTERM
	done   chan int           // its exit code, once it returned
	stderr *syncbuf.Buffer
}

// startProxy runs "compact proxy --listen 127.0.0.1:0" with args and
// waits for the line that says where it listens.
func startProxy(t *testing.T, args ...string) *runningProxy {
	t.Helper()
	pr, pw := io.Pipe()
	p := &runningProxy{done: make(chan int, 1), stderr: &syncbuf.Buffer{}}
	a := &app{stdin: strings.NewReader(""), stdout: pw, stderr: p.stderr, logger: slog.New(slog.DiscardHandler),
		getenv: func(string) string { return "" }}
	ctx, cancel := context.WithCancel(context.Background())
	p.stop = cancel
	t.Cleanup(cancel)
	go func() {
		p.done <- a.execute(ctx, append([]string{"proxy", "--listen", "127.0.0.1:0"}, args...))
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("no listening line: %v (stderr %s)", err, p.stderr.String())
	}
	go io.Copy(io.Discard, pr)
	p.addr = strings.TrimSpace(strings.TrimPrefix(line, "compact proxy listening on "))
	return p
}

// TestProxyStoreKeyUsage: a record key that is too short, from the
// environment or a file, or a key file that cannot be read, is a usage
// error naming where the key came from and never quoting it.
func TestProxyStoreKeyUsage(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short")
	if err := os.WriteFile(short, []byte("tiny-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  string
		args []string
		want string
	}{
		{"short env", "tiny-secret", nil, "COMPACT_STORE_KEY"},
		{"short file", "", []string{"--store-key-file", short}, "--store-key-file " + short},
		{"missing file", "", []string{"--store-key-file", filepath.Join(dir, "none")}, "--store-key-file"},
		{"short file wins over a good env", strings.Repeat("k", 32), []string{"--store-key-file", short}, "--store-key-file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCLI(t)
			c.env["COMPACT_STORE_KEY"] = tc.env
			out := c.fails(2, append([]string{"proxy", "--store", "memory", "--listen", "127.0.0.1:0"}, tc.args...)...)
			if !strings.Contains(out, tc.want) {
				t.Errorf("%q does not name %s", out, tc.want)
			}
			if strings.Contains(out, "tiny-secret") {
				t.Errorf("the error quotes the key: %q", out)
			}
		})
	}
}

// TestProxyServerLogNoStackTrace: what net/http logs itself (a panic a
// handler did not recover) reaches the log as one line, never a stack
// trace or the panic's goroutine dump.
func TestProxyServerLogNoStackTrace(t *testing.T) {
	for _, tc := range []struct {
		name  string
		value any
		want  string
	}{
		{"string panic", "boom", "http: panic serving"},
		{"error panic", io.ErrUnexpectedEOF, "unexpected EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs syncbuf.Buffer
			logger := slog.New(slog.NewTextHandler(&logs, nil))
			addrc := make(chan string, 1)
			a := &app{stdin: strings.NewReader(""), stdout: addrWriter(addrc), stderr: io.Discard, logger: logger}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			h := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(tc.value) })
			go func() { done <- serveProxy(ctx, "127.0.0.1:0", h, time.Second, logger, a) }()
			addr := <-addrc
			if _, err := http.Get(addr + "/x"); err == nil {
				t.Error("a request whose handler panicked got an answer")
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			out := logs.String()
			if !strings.Contains(out, tc.want) {
				t.Errorf("log lacks %q:\n%s", tc.want, out)
			}
			for _, bad := range []string{"goroutine ", ".go:"} {
				if strings.Contains(out, bad) {
					t.Errorf("log holds %q (a stack trace):\n%s", bad, out)
				}
			}
		})
	}
}

// addrWriter sends the address serveProxy announces on c.
type addrWriter chan string

func (c addrWriter) Write(p []byte) (int, error) {
	if _, addr, ok := strings.Cut(strings.TrimSpace(string(p)), "listening on "); ok {
		c <- addr
	}
	return len(p), nil
}

// TestProxyHookFromConfig: the configuration file's onCompactionCmd runs
// the command for every compaction, as --on-compaction-cmd does.
func TestProxyHookFromConfig(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "events.jsonl")
	cfg := filepath.Join(dir, "config.json")
	writeFile(t, cfg, `{"onCompactionCmd": "cat >> `+out+`"}`)
	_, up := fakeupstream.Start(t, fakeupstream.Config{Steps: 30, OutputLines: 600, Window: 20000})
	p := startProxy(t, "--config", cfg, "--store", "memory", "--summarizer", "extractive", "--anthropic-upstream", up, "--window", "20000")
	if _, err := agentloop.Run(context.Background(), agentloop.Options{API: agentloop.Anthropic, BaseURL: p.addr, Turns: 31}); err != nil {
		t.Fatal(err)
	}
	var got []byte
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if got, _ = os.ReadFile(out); bytes.Contains(got, []byte(`"type":"compaction_end"`)) || bytes.Contains(got, []byte(`"tokensAfter"`)) {
			break
		}
	}
	if !bytes.Contains(got, []byte(`"tokensAfter"`)) {
		t.Fatalf("the command from the configuration got no compaction event: %q (stderr %s)", got, p.stderr.String())
	}
}
