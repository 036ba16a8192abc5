package proxy

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/compactkit/compact/internal/testing/syncbuf"
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
			mem, _ := apiStore(t)
			var logs syncbuf.Buffer
			srv, err := New(Config{Store: mem, AuthToken: tc.token, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
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
	mem, _ := apiStore(t)
	var logs syncbuf.Buffer
	srv, err := New(Config{Store: mem, AuthToken: token, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
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
