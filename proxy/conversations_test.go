package proxy

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/golden"
	"github.com/compactkit/compact/internal/testing/syncbuf"
	"github.com/compactkit/compact/proxy/store"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// apiGet fetches path from the proxy at base with the given headers and
// returns the status and body.
func apiGet(t *testing.T, base, path string, h http.Header) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+path, nil)
	if h != nil {
		req.Header = h.Clone()
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// A conversation through the proxy shows in the API as the record counts
// it: the agent from its User-Agent, its totals, every compaction as a
// card with its summary split into sections and its summary request, and
// the timeline of its requests. The JSON is pinned by golden files (the
// conversation's id, which hashes the upstream's random port, replaced).
func TestConversationAPI(t *testing.T) {
	up := newCachingUpstream(t)
	mem := store.NewMemory(store.MemoryOptions{})
	reg := compact.NewRegistry([]compact.ModelInfo{{ID: "claude-test", ContextWindow: 12000, Prices: &testPrices}})
	// The clock moves 30 seconds a step; each step waits for the record
	// of the one before, so the timeline is the same on every run.
	start := time.Date(2026, 11, 27, 9, 30, 0, 0, time.UTC)
	var clock atomic.Int64
	_, ts := proxyIn(t, up.srv.URL, Config{Window: 12000, Policy: compact.Reserve{Tokens: 3000}, Store: mem, Registry: reg,
		AheadMark: -1, Now: func() time.Time { return start.Add(time.Duration(clock.Load()) * 30 * time.Second) }})
	c := newClient(t, Anthropic, ts.URL)
	c.header.Set("X-Session-Id", "api")
	c.header.Set("User-Agent", "claude-cli/2.0.14 (external, cli)")
	const steps = 14
	var rec *store.Record
	for i := 1; i <= steps; i++ {
		clock.Store(int64(i))
		c.step(i)
		rec = conversationRecord(t, mem, i)
	}
	if len(rec.Checkpoints) < 2 {
		t.Fatalf("%d compactions; the test wants at least two", len(rec.Checkpoints))
	}

	status, list := apiGet(t, ts.URL, "/api/conversations", nil)
	if status != http.StatusOK {
		t.Fatalf("list: %d %s", status, list)
	}
	var l ConversationList
	if err := json.Unmarshal(list, &l); err != nil || len(l.Conversations) != 1 {
		t.Fatalf("list: %v: %s", err, list)
	}
	row := l.Conversations[0]
	if row.Agent != "claude-cli/2.0.14" || row.IDSource != "header x-session-id" || row.Model != "claude-test" ||
		row.Requests != steps || row.Compactions != rec.Compactions || row.TokensSaved != rec.Last.Totals.TokensSaved ||
		row.Window != 12000 || row.Trigger != 9000 || row.Tokens != rec.Last.Usage.PromptTokens() {
		t.Errorf("row %+v does not match the record (compactions %d, saved %d)", row, rec.Compactions, rec.Last.Totals.TokensSaved)
	}
	if want := rec.Last.Totals.Cost + rec.Summaries.Cost; fmt.Sprintf("%.6f", row.CostUSD) != fmt.Sprintf("%.6f", want) {
		t.Errorf("cost $%v, want $%v (requests and summaries)", row.CostUSD, want)
	}

	status, show := apiGet(t, ts.URL, "/api/conversations/"+row.ID, nil)
	if status != http.StatusOK {
		t.Fatalf("show: %d %s", status, show)
	}
	var conv Conversation
	if err := json.Unmarshal(show, &conv); err != nil {
		t.Fatal(err)
	}
	if len(conv.Cards) != len(rec.Checkpoints) || len(conv.Timeline) != steps || !conv.Text {
		t.Fatalf("%d cards for %d compactions, %d timeline marks for %d requests", len(conv.Cards), len(rec.Checkpoints), len(conv.Timeline), steps)
	}
	made := 0
	for _, m := range conv.Timeline {
		if m.Compaction {
			made++
		}
	}
	if made != rec.Compactions {
		t.Errorf("timeline marks %d requests as compacting, the record counts %d compactions", made, rec.Compactions)
	}
	for i, card := range conv.Cards {
		cp := rec.Checkpoints[i]
		if card.Summary != cp.Summary || len(card.Sections) == 0 || card.FirstKeptUnit != cp.Covered || len(card.SummaryRequests) != 1 ||
			card.KeptRole != cp.KeptRole || card.KeptPreview == "" || card.KeptPreview != cp.KeptPreview ||
			card.SummaryCostUSD == nil || card.SummaryRequests[0].CacheReadShare < 0.85 {
			t.Errorf("card %d = %+v, want checkpoint %d's summary in sections and its summary request", i, card, i)
		}
	}
	// By full key too.
	if status, b := apiGet(t, ts.URL, "/api/conversations/"+row.Key, nil); status != http.StatusOK || string(b) != string(show) {
		t.Errorf("show by key: %d, and not the same answer as by id", status)
	}

	norm := func(b []byte) []byte {
		s := strings.ReplaceAll(string(b), strings.TrimPrefix(row.Key, "c:"), "KEY")
		return []byte(strings.ReplaceAll(s, row.ID, "ID"))
	}
	golden.Check(t, filepath.Join("testdata", "api", "list.json"), norm(list), *update)
	golden.Check(t, filepath.Join("testdata", "api", "show.json"), norm(show), *update)
}

// secretSummary is the summary text of apiStore's conversation.
const secretSummary = "## Goal\nFix the flaky parser test.\n\n## Progress\n- found the race in lexer.go"

// apiStore returns a memory store holding one conversation with a
// compaction, and its key.
func apiStore(t *testing.T) (*store.Memory, string) {
	t.Helper()
	mem := store.NewMemory(store.MemoryOptions{})
	key := "c:" + strings.Repeat("ab", 24)
	rec := &store.Record{Compactions: 1, Updated: time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC),
		Checkpoints: []store.Checkpoint{{Covered: 4, Chain: "x", Summary: secretSummary, ReadFiles: []string{"lexer.go"}, TokensBefore: 9000, TokensAfter: 2000,
			KeptRole: compact.RoleUser, KeptPreview: "kept-message-text: now rerun it",
			Reason: compact.ReasonThreshold, Summarizer: "extractive"}},
		Last: &store.LastCall{Model: "claude-test", Agent: "claude-cli/2.0.14", Usage: compact.Usage{Input: 2500}}}
	if err := mem.Put(context.Background(), key, rec); err != nil {
		t.Fatal(err)
	}
	return mem, key
}

// apiServer is a proxy (with the token, "" for none) over apiStore's
// conversation, and its log.
func apiServer(t *testing.T, token string) (*Server, *syncbuf.Buffer) {
	t.Helper()
	mem, _ := apiStore(t)
	logs := &syncbuf.Buffer{}
	srv, err := New(Config{Store: mem, AuthToken: token, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, logs
}

// serveAs sends a GET of path straight to srv's handler as if from
// remote, with the headers h.
func serveAs(srv *Server, remote, path string, h http.Header) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.RemoteAddr = remote
	for k, v := range h {
		req.Header[k] = v
	}
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, req)
	return w
}

// Who may read the API, and when the conversation's text is in it:
// without a proxy token only loopback clients; with one, only clients
// that present it (from anywhere). The summary never reaches the log.
func TestConversationAPIAccess(t *testing.T) {
	const token = "proxy-token-0123456789"
	withToken := http.Header{TokenHeader: {token}}
	bearer := http.Header{"Proxy-Authorization": {"Bearer " + token}}
	wrong := http.Header{TokenHeader: {"proxy-token-wrong-000000"}}
	for _, tc := range []struct {
		name     string
		token    string
		remote   string
		path     string
		h        http.Header
		status   int
		withText bool
	}{
		{"open loopback", "", "127.0.0.1:5000", "/api/conversations/abababababab", nil, 200, true},
		{"open loopback v6", "", "[::1]:5000", "/api/conversations/abababababab", nil, 200, true},
		{"open remote", "", "192.0.2.7:5000", "/api/conversations/abababababab", nil, 403, false},
		{"open remote list", "", "192.0.2.7:5000", "/api/conversations", nil, 403, false},
		{"token missing on loopback", token, "127.0.0.1:5000", "/api/conversations/abababababab", nil, 401, false},
		{"token wrong", token, "127.0.0.1:5000", "/api/conversations/abababababab", wrong, 401, false},
		{"token missing list", token, "127.0.0.1:5000", "/api/conversations", nil, 401, false},
		{"token given", token, "127.0.0.1:5000", "/api/conversations/abababababab", withToken, 200, true},
		{"token given remote", token, "192.0.2.7:5000", "/api/conversations/abababababab", bearer, 200, true},
		{"token given, text off", token, "192.0.2.7:5000", "/api/conversations/abababababab?text=0", withToken, 200, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, logs := apiServer(t, tc.token)
			w := serveAs(srv, tc.remote, tc.path, tc.h)
			body := w.Body.String()
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.status, body)
			}
			for _, text := range []string{"flaky parser", "lexer.go", "kept-message-text"} {
				if got := strings.Contains(body, text); got != tc.withText {
					t.Errorf("answer holds the conversation's text (%q): %v, want %v: %s", text, got, tc.withText, body)
				}
				if strings.Contains(logs.String(), text) {
					t.Errorf("the log holds the conversation's text: %s", logs.String())
				}
			}
			if strings.Contains(logs.String(), token) {
				t.Error("the log holds the proxy token")
			}
		})
	}
}

// Bad requests get a clear error in JSON; pages join up.
func TestConversationAPIErrorsAndPages(t *testing.T) {
	mem, key := apiStore(t)
	for _, k := range []string{"c:" + strings.Repeat("01", 24), "c:" + strings.Repeat("02", 24), "s:" + strings.Repeat("03", 24)} {
		if err := mem.Put(context.Background(), k, &store.Record{}); err != nil {
			t.Fatal(err)
		}
	}
	srv, err := New(Config{Store: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	const local = "127.0.0.1:5000"
	for _, tc := range []struct {
		path   string
		status int
		want   string
	}{
		{"/api/conversations/zz", 400, "conversation id"},
		{"/api/conversations/0123456789ab", 404, "no conversation"},
		{"/api/conversations/s:" + strings.Repeat("03", 24), 400, "conversation id"},
		{"/api/conversations?limit=0", 400, "limit"},
		{"/api/conversations?limit=x", 400, "limit"},
		{"/api/conversations?cursor=s:1", 400, "cursor"},
		{"/api/conversations/" + key, 200, "flaky parser"},
	} {
		w := serveAs(srv, local, tc.path, nil)
		if w.Code != tc.status || !strings.Contains(w.Body.String(), tc.want) {
			t.Errorf("GET %s = %d %s; want %d with %q", tc.path, w.Code, w.Body, tc.status, tc.want)
		}
		if w.Code != 200 {
			var e APIError
			if json.Unmarshal(w.Body.Bytes(), &e) != nil || e.Error.Message == "" {
				t.Errorf("GET %s: error body %s is not an APIError", tc.path, w.Body)
			}
		}
	}
	req := httptest.NewRequest(http.MethodPost, "/api/conversations", nil)
	req.RemoteAddr = local
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, req)
	if w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", w.Code)
	}

	// Three conversations (the session copy under s: is not one), two a
	// page.
	var keys []string
	path := "/api/conversations?limit=2"
	for range 3 {
		w := serveAs(srv, local, path, nil)
		var l ConversationList
		if err := json.Unmarshal(w.Body.Bytes(), &l); err != nil || w.Code != 200 {
			t.Fatalf("%s: %d %s", path, w.Code, w.Body)
		}
		for _, c := range l.Conversations {
			keys = append(keys, c.Key)
		}
		if l.Next == "" {
			break
		}
		path = "/api/conversations?limit=2&cursor=" + l.Next
	}
	if len(keys) != 3 || !strings.HasPrefix(keys[0], "c:") || keys[2] == keys[1] {
		t.Errorf("pages listed %v; want the three conversations once each", keys)
	}
}

// A kept message's preview is its text, else its tool calls, white
// space folded and cut on a character boundary.
func TestKeptPreview(t *testing.T) {
	long := strings.Repeat("é", store.KeptPreviewRunes+5)
	call := &compact.Message{Role: compact.RoleAssistant, Content: []compact.Part{{Type: compact.PartToolCall,
		ToolCall: &compact.ToolCall{ID: "t1", Name: "Bash", Arguments: []byte(`{"command":"seq 1 3"}`)}}}}
	for _, tc := range []struct {
		in   *compact.Message
		want string
	}{
		{compact.TextMessage(compact.RoleUser, "  run\n\tthe tests  "), "run the tests"},
		{compact.TextMessage(compact.RoleUser, long), strings.Repeat("é", store.KeptPreviewRunes-1) + "…"},
		{compact.TextMessage(compact.RoleUser, long[:2*store.KeptPreviewRunes]), long[:2*store.KeptPreviewRunes]},
		{call, `Bash {"command":"seq 1 3"}`},
	} {
		if got := keptPreview(tc.in); got != tc.want {
			t.Errorf("keptPreview = %.40q (%d runes), want %.40q", got, len([]rune(got)), tc.want)
		}
	}
}
