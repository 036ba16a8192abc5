package redis

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/compactkit/compact/proxy"
	"github.com/compactkit/compact/proxy/store"
)

// rawClient is a plain go-redis client on srv, for the tests' own
// commands.
func rawClient(t *testing.T, srv *server) *goredis.Client {
	t.Helper()
	o, err := goredis.ParseURL(srv.url())
	if err != nil {
		t.Fatal(err)
	}
	c := goredis.NewClient(o)
	t.Cleanup(func() { c.Close() })
	return c
}

// fillUp writes 64 KB values into srv until it refuses writes (OOM).
func fillUp(t *testing.T, srv *server) {
	t.Helper()
	c := rawClient(t, srv)
	val := strings.Repeat("x", 64<<10)
	for i := 0; ; i++ {
		err := c.Set(context.Background(), "filler:"+strconv.Itoa(i), val, 0).Err()
		if err != nil {
			if !strings.Contains(err.Error(), "OOM") {
				t.Fatal(err)
			}
			return
		}
		if i > 1000 {
			t.Fatal("redis never refused a write")
		}
	}
}

// TestFullServerNotReady: a Redis at maxmemory with noeviction (Redis's
// default policy) answers reads but refuses writes; the store's Put fails
// and Ping reports it, so the proxy falls back and /readyz says not
// ready.
func TestFullServerNotReady(t *testing.T) {
	srv := startServer(t, "--maxmemory", "1mb", "--maxmemory-policy", "noeviction")
	st := srv.open(t, Options{})
	ctx := context.Background()
	fillUp(t, srv)
	rec := &store.Record{Checkpoints: []store.Checkpoint{{Covered: 2, Chain: "ab", Summary: "s"}}}
	if err := st.Put(ctx, "c:full", rec); err == nil {
		t.Fatal("Put succeeded on a full Redis")
	}
	if _, err := st.Get(ctx, "c:full"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get on a full Redis: %v, want ErrNotFound (reads still work)", err)
	}
	err := st.Ping(ctx)
	if err == nil {
		t.Fatal("Ping reports a full Redis ready")
	}
	if !strings.Contains(err.Error(), "OOM") {
		t.Errorf("Ping: %v, want the server's OOM reply", err)
	}
}

// TestStalledServerHeldToDeadline: with the server stalled (DEBUG SLEEP
// 3), each call gives up at its deadline, and the calls after it fail at
// once for a while instead of each waiting again; a proxy request in the
// stall is answered through its local fallback well before the stall
// ends.
func TestStalledServerHeldToDeadline(t *testing.T) {
	srv := startServer(t, "--enable-debug-command", "yes")
	// (The default CallTimeout is a second; half of it keeps the test
	// far from the stall's end whatever the machine's load.)
	st := srv.open(t, Options{CallTimeout: 500 * time.Millisecond})
	ctx := context.Background()
	stall := func() {
		t.Helper()
		c := rawClient(t, srv)
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.Do(context.Background(), "DEBUG", "SLEEP", "3")
		}()
		t.Cleanup(func() { <-done })
		time.Sleep(200 * time.Millisecond) // let the sleep start
	}

	stall()
	start := time.Now()
	_, err := st.Get(ctx, "c:slow")
	first := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Get in a stall: %v, want its deadline exceeded", err)
	}
	start = time.Now()
	_, err = st.Get(ctx, "c:slow")
	second := time.Since(start)
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("second Get in a stall: %v, want ErrUnavailable at once", err)
	}
	t.Logf("first call gave up after %v, the next after %v", first, second)
	if first > 2*time.Second {
		t.Errorf("first Get took %v in a 3 s stall", first)
	}
}

// TestProxyRequestInStall: a request that arrives while Redis is
// stalled is answered through the local fallback, well before the stall
// ends, and counted as a store failure.
func TestProxyRequestInStall(t *testing.T) {
	srv := startServer(t, "--enable-debug-command", "yes")
	// (The default CallTimeout is a second; half of it keeps the test
	// far from the stall's end whatever the machine's load.)
	st := srv.open(t, Options{CallTimeout: 500 * time.Millisecond})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":100,"output_tokens":1}}`)
	}))
	defer up.Close()
	p, err := proxy.New(proxy.Config{AnthropicUpstream: up.URL, Window: 200000, Store: st, LocalFallback: true})
	if err != nil {
		t.Fatal(err)
	}
	ps := httptest.NewServer(p)
	defer ps.Close()
	send := func(session, turn string) time.Duration {
		t.Helper()
		body := `{"model":"claude-sonnet-4-5","max_tokens":100,"messages":[{"role":"user","content":"` + turn + `"}]}`
		req, _ := http.NewRequest(http.MethodPost, ps.URL+"/v1/messages", bytes.NewReader([]byte(body)))
		req.Header.Set("X-Api-Key", "sk-test")
		req.Header.Set("X-Session-Id", session)
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !bytes.Contains(b, []byte(`"ok"`)) {
			t.Fatalf("%d %s", resp.StatusCode, b)
		}
		return time.Since(start)
	}
	send("before", "hello")
	c := rawClient(t, srv)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Do(context.Background(), "DEBUG", "SLEEP", "3")
	}()
	defer func() { <-done }()
	time.Sleep(200 * time.Millisecond)
	// A conversation this replica has not seen: its record must be read.
	took := send("during", "hello")
	t.Logf("request in the stall took %v", took)
	if took > 1500*time.Millisecond {
		t.Errorf("request in a 3 s stall took %v", took)
	}
	m, err := http.Get(ps.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	mb, _ := io.ReadAll(m.Body)
	m.Body.Close()
	if !bytes.Contains(mb, []byte(`compact_proxy_fail_open_total{stage="store"}`)) {
		t.Errorf("the stall was not counted as a store failure")
	}
}
