//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact/internal/testing/fakeupstream"
	"github.com/compactkit/compact/internal/testing/syncbuf"
	"github.com/compactkit/compact/proxy"
)

// requireProxyCommand skips the test when the compact binary has no proxy
// command with the flags startProxy passes.
func requireProxyCommand(t *testing.T, bin string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "proxy", "--help").CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--anthropic-upstream")) || !bytes.Contains(out, []byte("--openai-upstream")) {
		t.Skipf("%s proxy --help does not offer --anthropic-upstream/--openai-upstream (err %v): the proxy command is not built in yet", bin, err)
	}
}

// proxyProc is a running `compact proxy`.
type proxyProc struct {
	url string          // http://127.0.0.1:PORT
	log *syncbuf.Buffer // its stdout and stderr
}

// startProxy runs `compact proxy` in front of the fake at upstream and
// waits until its /healthz answers 200. Both upstream flags take the
// fake's base URL without /v1: the proxy appends the path it received
// (/v1/messages, /v1/chat/completions, /v1/responses, ...) to it.
//
// summarizer is the --summarizer value: "extractive" (offline) or
// "upstream" (the agent's model writes the summary through the fake, with
// the agent's own credentials).
func startProxy(t *testing.T, bin, upstream string, window int, summarizer string, extra ...string) *proxyProc {
	t.Helper()
	addr := freeAddr(t)
	p := &proxyProc{url: "http://" + addr, log: &syncbuf.Buffer{}}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, append([]string{"proxy",
		"--listen", addr,
		"--window", strconv.Itoa(window),
		"--anthropic-upstream", upstream,
		"--openai-upstream", upstream,
		"--store", filepath.Join(t.TempDir(), "proxy-store"),
		"--summarizer", summarizer,
	}, extra...)...)
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting %s proxy: %v", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cancel()
		<-exited
		if t.Failed() {
			t.Logf("proxy log tail:\n%s", tail(p.log.String(), 4000))
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("compact proxy exited before serving: %v\n%s", err, p.log.String())
		default:
		}
		resp, err := http.Get(p.url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("compact proxy: /healthz not ready after 30s (last error %v)\n%s", err, p.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// freeAddr returns a loopback address with a port that was free a moment
// ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// compactions returns the sum of compact_proxy_compactions_total over its
// series on the proxy's /metrics, -1 when the proxy serves no such metric.
func (p *proxyProc) compactions(t *testing.T) float64 {
	t.Helper()
	return p.metric(t, "compact_proxy_compactions_total")
}

// metric sums the series of the proxy's metric name (every label set),
// -1 when the proxy serves none or cannot be reached.
func (p *proxyProc) metric(t *testing.T, name string) float64 {
	t.Helper()
	resp, err := http.Get(p.url + "/metrics")
	if err != nil {
		t.Logf("GET /metrics: %v", err)
		return -1
	}
	defer resp.Body.Close()
	total, found := 0.0, false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		fields := strings.Fields(line)
		if v, err := strconv.ParseFloat(fields[len(fields)-1], 64); err == nil {
			total, found = total+v, true
		}
	}
	if !found {
		return -1
	}
	return total
}

// checkPrefixes runs fakeupstream.StablePrefixes on the agent's turns as
// the upstream saw them, fails on its problems, and returns the number of
// compactions seen.
func checkPrefixes(t *testing.T, f *fakeupstream.Fake) int {
	t.Helper()
	comps, problems := fakeupstream.StablePrefixes(fakeupstream.MainLoop(f.Requests()))
	for _, c := range comps {
		t.Logf("compaction seen upstream at request #%d: %d items -> %d, items up to the summary: %d", c.Seq, c.Before, c.After, c.Prefix)
	}
	for _, p := range problems {
		t.Error(p)
	}
	return len(comps)
}

// checkLiveView reads the proxy's conversation API and its live view
// after a real agent's run: the conversation is listed under the agent's
// own name (from its headers), and its page shows that name and a card
// for each compaction the API keeps.
func (p *proxyProc) checkLiveView(t *testing.T) {
	t.Helper()
	var list proxy.ConversationList
	if err := getJSON(p.url+proxy.ConversationsPath, &list); err != nil {
		t.Errorf("the conversation API: %v", err)
		return
	}
	if len(list.Conversations) == 0 {
		t.Error("the conversation API lists no conversation after the agent's run")
		return
	}
	for _, row := range list.Conversations {
		if row.Agent == "" || strings.HasPrefix(row.Agent, "Go-http-client") {
			t.Errorf("conversation %s: agent %q, want the agent's own name", row.ID, row.Agent)
		}
		var c proxy.Conversation
		if err := getJSON(p.url+proxy.ConversationsPath+"/"+row.ID, &c); err != nil {
			t.Errorf("conversation %s: %v", row.ID, err)
			continue
		}
		resp, err := http.Get(p.url + proxy.UIPath + "?c=" + row.ID)
		if err != nil {
			t.Errorf("the live view: %v", err)
			continue
		}
		page, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Errorf("the live view of %s: %d %v", row.ID, resp.StatusCode, err)
			continue
		}
		if !bytes.Contains(page, []byte(">"+row.Agent+"<")) {
			t.Errorf("the live view of %s does not name its agent %q", row.ID, row.Agent)
		}
		if got := bytes.Count(page, []byte(`<article class="card`)); got != len(c.Cards) {
			t.Errorf("the live view of %s shows %d compaction cards, the API keeps %d", row.ID, got, len(c.Cards))
		}
		share := -1.0
		if row.CacheReadShare != nil {
			share = *row.CacheReadShare
		}
		t.Logf("live view: conversation %s of %s, %d requests, %d compactions, cache read share %.3f", row.ID, row.Agent, row.Requests, row.Compactions, share)
	}
}

// getJSON decodes the JSON answer of a GET of url.
func getJSON(url string, v any) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
