package proxy

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/proxy/store"
)

// TestUIAccess: the live view shows conversations to loopback clients of
// a proxy without a token and to anyone who signed in or sent the token
// of one that has it; everyone else gets no conversation text. Signing
// in sets a cookie that is not the token, valid for the page alone, and
// neither the token nor the text reaches the log.
func TestUIAccess(t *testing.T) {
	const token = "proxy-token-0123456789"
	for _, tc := range []struct {
		name     string
		token    string
		remote   string
		path     string
		h        http.Header
		status   int
		withText bool
	}{
		{"open loopback", "", "127.0.0.1:5000", "/ui", nil, 200, true},
		{"open loopback, one conversation", "", "[::1]:5000", "/ui?c=abababababab", nil, 200, true},
		{"open remote", "", "192.0.2.7:5000", "/ui", nil, 403, false},
		{"token missing: the sign-in page", token, "127.0.0.1:5000", "/ui", nil, 401, false},
		{"token wrong", token, "192.0.2.7:5000", "/ui", http.Header{TokenHeader: {"proxy-token-wrong-000000"}}, 401, false},
		{"cookie forged", token, "192.0.2.7:5000", "/ui", http.Header{"Cookie": {uiCookie + "=" + token}}, 401, false},
		{"token header", token, "192.0.2.7:5000", "/ui", http.Header{TokenHeader: {token}}, 200, true},
		{"unknown page", "", "127.0.0.1:5000", "/ui/other", nil, 404, false},
		{"unknown conversation: said, the list still shown", "", "127.0.0.1:5000", "/ui?c=0123456789ab", nil, 200, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, logs := apiServer(t, tc.token)
			w := serveAs(srv, tc.remote, tc.path, tc.h)
			body := w.Body.String()
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d: %.300s", w.Code, tc.status, body)
			}
			if tc.status != 200 && strings.Contains(body, "abababababab") {
				t.Error("a page refused names the conversations")
			}
			for _, text := range []string{"flaky parser", "lexer.go"} {
				if got := strings.Contains(body, text); got != tc.withText {
					t.Errorf("page holds the conversation's text (%q): %v, want %v", text, got, tc.withText)
				}
				if strings.Contains(logs.String(), text) {
					t.Errorf("the log holds the conversation's text: %s", logs.String())
				}
			}
			if strings.Contains(tc.path, "0123456789ab") && !strings.Contains(body, "No conversation 0123456789ab") {
				t.Error("an unknown conversation is not said to be unknown")
			}
			if tc.status == 401 && !strings.Contains(body, `name="token"`) {
				t.Error("the sign-in page has no token field")
			}
			if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
				t.Errorf("Content-Security-Policy %q: the page may load from elsewhere", csp)
			}
		})
	}
}

// TestUISignIn: a browser signs in with the form, gets a cookie for /ui
// alone (HttpOnly, SameSite=Strict) whose value is not the token, and
// sees the conversations with it; a wrong token goes back to the form.
func TestUISignIn(t *testing.T) {
	const token = "proxy-token-0123456789"
	srv, logs := apiServer(t, token)
	post := func(tok string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, UIPath+"/login", strings.NewReader(url.Values{"token": {tok}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.RemoteAddr = "192.0.2.7:5000"
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, req)
		return w
	}
	w := post("proxy-token-wrong-000000")
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != UIPath+"?failed=1" || len(w.Result().Cookies()) != 0 {
		t.Fatalf("wrong token: %d to %q with cookies %v", w.Code, w.Header().Get("Location"), w.Result().Cookies())
	}
	if page := serveAs(srv, "192.0.2.7:5000", UIPath+"?failed=1", nil); !strings.Contains(page.Body.String(), "not the proxy's token") {
		t.Error("after a wrong token the form does not say so")
	}
	w = post(token)
	cookies := w.Result().Cookies()
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != UIPath || len(cookies) != 1 {
		t.Fatalf("right token: %d to %q with cookies %v", w.Code, w.Header().Get("Location"), cookies)
	}
	c := cookies[0]
	if c.Value == token || strings.Contains(c.Value, token) || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != UIPath {
		t.Errorf("cookie %+v: want HttpOnly, SameSite=Strict, path %s, and not the token", c, UIPath)
	}
	page := serveAs(srv, "192.0.2.7:5000", UIPath, http.Header{"Cookie": {c.Name + "=" + c.Value}})
	if page.Code != 200 || !strings.Contains(page.Body.String(), "flaky parser") {
		t.Errorf("signed in: %d, conversation shown %v", page.Code, strings.Contains(page.Body.String(), "flaky parser"))
	}
	// The cookie opens the page, not the API nor the model routes.
	if api := serveAs(srv, "192.0.2.7:5000", ConversationsPath, http.Header{"Cookie": {c.Name + "=" + c.Value}}); api.Code != http.StatusUnauthorized {
		t.Errorf("the page's cookie opened the API: %d", api.Code)
	}
	if strings.Contains(logs.String(), token) || strings.Contains(logs.String(), c.Value) {
		t.Errorf("the log holds the token or the cookie: %s", logs.String())
	}
}

// BenchmarkUIPage measures one refresh of the live view (what an open
// page costs the proxy every 2 seconds) with 100 conversations of 50
// requests and 4 compactions each in the memory store: listing them,
// building the shown one's chart and cards, rendering the page.
func BenchmarkUIPage(b *testing.B) {
	mem := store.NewMemory(store.MemoryOptions{})
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	summary := strings.Repeat("## Goal\n- Make the parser accept trailing commas.\n\n## Progress\n- Done: lexer.go\n\n## Next Steps\n1. Run the tests\n", 8)
	for c := range 100 {
		rec := &store.Record{Compactions: 4}
		for k := range 4 {
			rec.Checkpoints = append(rec.Checkpoints, store.Checkpoint{Covered: 20 * (k + 1), Chain: fmt.Sprint(k), Summary: summary,
				TokensBefore: 150000, TokensAfter: 30000, Reason: compact.ReasonThreshold, Summarizer: "claude-sonnet-4-5",
				Created: at.Add(time.Duration(k) * time.Hour), KeptRole: compact.RoleUser, KeptPreview: "now rerun it"})
		}
		last := &store.LastCall{Model: "claude-sonnet-4-5", Agent: "claude-cli/2.1.332", Units: 90, Bytes: 600000, Applied: "3",
			Usage: compact.Usage{Input: 200, CacheRead: 90000}, At: at.Add(time.Duration(c) * time.Minute)}
		for i := range store.MaxRecent {
			last.Recent = store.AppendRecent(last.Recent, store.Mark{At: at.Add(time.Duration(i) * time.Second), Prompt: 30000 + 2000*i,
				CacheRead: 29000 + 2000*i, Client: 150000 + 2000*i, Applied: true, Compaction: i%12 == 0})
		}
		last.Totals = store.Tally{Requests: 200, Input: 9000, CacheRead: 9000000, Output: 30000}
		if err := mem.Put(context.Background(), fmt.Sprintf("c:%048x", c+1), rec); err != nil {
			b.Fatal(err)
		}
		if err := mem.PutLast(context.Background(), fmt.Sprintf("c:%048x", c+1), last); err != nil {
			b.Fatal(err)
		}
	}
	srv, err := New(Config{Store: mem, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	b.ReportAllocs()
	size := 0
	for b.Loop() {
		w := serveAs(srv, "127.0.0.1:5000", UIPath, nil)
		if w.Code != 200 {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
		size = w.Body.Len()
	}
	b.ReportMetric(float64(size), "page-bytes")
}
