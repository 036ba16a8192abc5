package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/golden"
	"github.com/compactkit/compact/proxy"
	"github.com/compactkit/compact/proxy/store"
)

// viewKey is the store key of the conversation viewProxy keeps.
var viewKey = "c:" + strings.Repeat("3f9a", 12)

// viewNow is the clock of the commands under test.
var viewNow = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

// viewProxy starts a proxy (token: "" for none) whose store holds two
// conversations, one with two compactions among three, a summary written
// ahead and a timeline, and returns its URL.
func viewProxy(t *testing.T, token string) string {
	t.Helper()
	mem := store.NewMemory(store.MemoryOptions{})
	at := viewNow.Add(-3 * time.Minute)
	usage := func(read, write, in, out int) compact.Usage {
		return compact.Usage{Input: in, CacheRead: read, CacheWrite: write, Output: out}
	}
	rec := &store.Record{
		Compactions: 3,
		Checkpoints: []store.Checkpoint{
			{Covered: 41, Chain: "b", Summary: "## Goal\nMake the parser accept trailing commas.\n\n## Progress\n- Done: lexer.go emits COMMA before RBRACE\n- In progress: parser_test.go\n\n## Next Steps\n1. Run go test ./parser/...",
				ReadFiles: []string{"parser/lexer.go"}, ModifiedFiles: []string{"parser/lexer.go"}, TokensBefore: 171234, TokensAfter: 23456,
				Reason: compact.ReasonIdle, Summarizer: "claude-sonnet-4-5", Created: at.Add(-20 * time.Minute), Duration: 2400 * time.Millisecond, Ahead: true,
				KeptRole: compact.RoleUser, KeptPreview: "Now make the tests in parser_test.go pass, and keep the error messages as they are.",
				SummaryCalls: []store.SummaryCall{{OnConversation: true, Usage: usage(160000, 0, 11234, 1800)}}},
			{Covered: 20, Chain: "a", Summary: "## Goal\nMake the parser accept trailing commas.", TokensBefore: 168000, TokensAfter: 21000,
				Reason: compact.ReasonThreshold, Summarizer: "extractive", Created: at.Add(-2 * time.Hour), Duration: 35 * time.Millisecond},
		},
		Pending:   &store.Pending{Covered: 60, Prepared: compact.Prepared{Summary: "## Goal\nahead", TokensBefore: 150000, Summarizer: "claude-sonnet-4-5", Created: at}},
		Summaries: store.Tally{Requests: 1, Input: 11234, CacheRead: 160000, Output: 1800, Cost: 0.1089},
		Last: &store.LastCall{Model: "claude-sonnet-4-5", Agent: "claude-cli/2.0.14", IDSource: "header x-claude-code-session-id", Threshold: 183616,
			Units: 80, Bytes: 1160000, Applied: "b",
			LastMiss: &store.CacheMiss{At: at.Add(-time.Minute), Request: 211, Cause: store.MissCompaction, Expected: 171234, Read: 0,
				Detail: "compact replaced messages 1–41 with its summary: expected, paid once", ProviderReason: "messages_changed", ProviderMissed: 168000},
			Usage: usage(140000, 2000, 12, 900), At: at,
			Totals: store.Tally{Requests: 212, Input: 90000, Output: 150000, CacheRead: 21000000, CacheWrite: 900000, TokensSaved: 4200000, Cost: 12.3456},
			Recent: []store.Mark{
				{At: at.Add(-2 * time.Minute), Prompt: 171234, CacheRead: 170000, Output: 700, Client: 171300},
				{At: at.Add(-time.Minute), Prompt: 23456, CacheRead: 0, Output: 800, Client: 172000, Applied: true, Compaction: true},
				{At: at, Prompt: 142012, CacheRead: 140000, Output: 900, Client: 290000, Applied: true},
			}},
	}
	other := &store.Record{Last: &store.LastCall{Model: "gpt-5-codex", Agent: "codex_cli_rs/0.46.0", IDSource: "header session_id",
		Usage: usage(0, 0, 3000, 100), At: viewNow.Add(-26 * time.Hour), Totals: store.Tally{Requests: 1, Input: 3000, Output: 100, Unpriced: 1}}}
	ctx := context.Background()
	if err := mem.Put(ctx, viewKey, rec); err != nil {
		t.Fatal(err)
	}
	if err := mem.Put(ctx, "c:"+strings.Repeat("07", 24), other); err != nil {
		t.Fatal(err)
	}
	reg := compact.NewRegistry([]compact.ModelInfo{{ID: "claude-sonnet-4-5", ContextWindow: 200000,
		Prices: &compact.Prices{Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75, CacheWrite1h: 6}}})
	srv, err := proxy.New(proxy.Config{Store: mem, Registry: reg, AuthToken: token})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() { ts.Close(); srv.Close() })
	return ts.URL
}

// The table of conversations and one conversation's cards, for people
// (golden files) and as the API's JSON.
func TestProxyStatusAndShow(t *testing.T) {
	base := viewProxy(t, "")
	c := newCLI(t)
	c.now = func() time.Time { return viewNow }
	golden.Check(t, filepath.Join("testdata", "proxyview", "status.txt"), []byte(c.ok("proxy", "status", "--url", base)), *update)
	golden.Check(t, filepath.Join("testdata", "proxyview", "show.txt"), []byte(c.ok("proxy", "show", "3f9a3f9a3f9a", "--url", base)), *update)
	if out := c.ok("proxy", "status", "--url", base, "--limit", "1"); !strings.Contains(out, "3f9a3f9a3f9a") || strings.Contains(out, "070707070707") {
		t.Errorf("--limit 1 does not keep the most recently active conversation alone:\n%s", out)
	}

	// An empty proxy lists an empty array, not null.
	if out := c.ok("--json", "proxy", "status", "--url", viewProxyEmpty(t)); !strings.Contains(out, `"conversations": []`) {
		t.Errorf("status --json of an empty proxy: %s", out)
	}
	var l proxy.ConversationList
	c.okJSON(&l, "--json", "proxy", "status", "--url", base)
	if len(l.Conversations) != 2 || l.Conversations[0].Key != viewKey || l.Conversations[0].TokensSaved != 4200000 {
		t.Errorf("status --json = %+v", l)
	}
	// show --json is the API's answer byte for byte.
	out := c.ok("--json", "proxy", "show", viewKey, "--url", base)
	var conv proxy.Conversation
	if err := json.Unmarshal([]byte(out), &conv); err != nil || len(conv.Cards) != 2 || conv.Cards[0].Reason != compact.ReasonIdle || len(conv.Cards[0].Sections) != 3 {
		t.Errorf("show --json = %v %s", err, out)
	}
	_, api := getBody(t, base+"/api/conversations/"+viewKey)
	if out != api {
		t.Error("show --json is not the API's answer as it is")
	}
}

// getBody fetches url.
func getBody(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The token comes from the usual places; without it a proxy that has one
// refuses, and the error says where to give it without quoting anything
// secret. A proxy that is not there, and an unknown id, are one clear
// line each.
func TestProxyViewErrorsAndToken(t *testing.T) {
	base := viewProxy(t, cmdTestToken)
	c := newCLI(t)
	r := c.run("proxy", "status", "--url", base)
	if r.code == 0 || !strings.Contains(r.stderr, "401") || !strings.Contains(r.stderr, "--auth-token-file") {
		t.Errorf("status without the token: exit %d, %q", r.code, r.stderr)
	}
	c.env[envProxyToken] = cmdTestToken
	if out := c.ok("proxy", "show", "3f9a3f9a3f9a", "--url", base); !strings.Contains(out, "trailing commas") {
		t.Errorf("show with the token from $%s lacks the summary:\n%s", envProxyToken, out)
	}
	r = c.run("proxy", "show", "0123456789ab", "--url", base)
	if strings.Contains(r.stderr, "compact proxy: ") {
		t.Errorf("the proxy's prefix is repeated: %q", r.stderr)
	}
	if r.code == 0 || !strings.Contains(r.stderr, "404") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Errorf("show of an unknown id: exit %d, %q", r.code, r.stderr)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := "http://" + ln.Addr().String()
	ln.Close()
	r = c.run("proxy", "status", "--url", gone)
	if r.code == 0 || !strings.Contains(r.stderr, "no proxy answers") {
		t.Errorf("status with no proxy: exit %d, %q", r.code, r.stderr)
	}
	if r := c.run("proxy", "status", "--url", "ftp://x"); r.code != 2 || !strings.Contains(r.stderr, "--url") {
		t.Errorf("status --url ftp://x: exit %d, %q", r.code, r.stderr)
	}
}

// viewProxyEmpty starts a proxy that keeps no conversation.
func viewProxyEmpty(t *testing.T) string {
	t.Helper()
	srv, err := proxy.New(proxy.Config{Store: store.NewMemory(store.MemoryOptions{})})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() { ts.Close(); srv.Close() })
	return ts.URL
}
