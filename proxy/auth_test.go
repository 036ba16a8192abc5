package proxy

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/compactkit/compact/proxy/store"
)

const testToken = "cpt-0123456789abcdef-test"

// TestAuthToken: with a proxy token set, the real agents' requests are
// refused without it (401, error body in the provider's shape) whatever
// provider credential they carry, pass with it in X-Compact-Token or
// Proxy-Authorization, and the upstream sees the provider credential but
// never the proxy's token. /healthz and /readyz stay open; /metrics and
// passthrough paths need the token.
func TestAuthToken(t *testing.T) {
	claude := http.Header{
		"Authorization":            {"Bearer sk-ant-oat01-oauth-canary"},
		"Anthropic-Version":        {"2023-06-01"},
		"Anthropic-Beta":           {"oauth-2025-04-20,claude-code-20250219"},
		"X-App":                    {"cli"},
		"User-Agent":               {"claude-cli/2.1.90 (external, cli)"},
		"X-Claude-Code-Session-Id": {"3f1c"},
	}
	claudeKey := http.Header{
		"X-Api-Key":         {"sk-ant-api03-canary"},
		"Anthropic-Version": {"2023-06-01"},
		"X-App":             {"cli"},
		"User-Agent":        {"claude-cli/2.1.90 (external, cli)"},
	}
	codex := http.Header{
		"Authorization":      {"Bearer eyJ-codex-canary"},
		"Originator":         {"codex_cli_rs"},
		"Session_id":         {"0199-codex"},
		"Chatgpt-Account-Id": {"acct-canary"},
		"User-Agent":         {"codex_cli_rs/0.169.0"},
	}
	opencode := http.Header{
		"Authorization": {"Bearer sk-opencode-canary"},
		"X-Session-Id":  {"oc-1"},
	}
	with := func(h http.Header, kv ...string) http.Header {
		h = h.Clone()
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	anthropicBody := `{"model":"claude-test","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`
	chatBody := `{"model":"gpt-test","messages":[{"role":"user","content":"hi"}]}`
	responsesBody := `{"model":"gpt-test","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}]}`
	cases := []struct {
		name, method, path, body string
		header                   http.Header
		status                   int
		// errShape is "anthropic" or "openai" for a refusal's body.
		errShape string
	}{
		{"claude oauth without token", "POST", "/v1/messages", anthropicBody, claude, 401, "anthropic"},
		{"claude oauth with token", "POST", "/v1/messages", anthropicBody, with(claude, TokenHeader, testToken), 200, ""},
		{"claude key with wrong token", "POST", "/v1/messages", anthropicBody, with(claudeKey, TokenHeader, testToken+"x"), 401, "anthropic"},
		{"claude key with token", "POST", "/v1/messages", anthropicBody, with(claudeKey, TokenHeader, testToken), 200, ""},
		{"codex without token", "POST", "/v1/responses", responsesBody, codex, 401, "openai"},
		{"codex with proxy-authorization", "POST", "/v1/responses", responsesBody, with(codex, "Proxy-Authorization", "Bearer "+testToken), 200, ""},
		{"opencode token in authorization is not ours", "POST", "/v1/chat/completions", chatBody, with(opencode, "Authorization", "Bearer "+testToken), 401, "openai"},
		{"opencode with token", "POST", "/v1/chat/completions", chatBody, with(opencode, TokenHeader, testToken), 200, ""},
		{"passthrough path without token", "GET", "/v1/models", "", claude, 401, "anthropic"},
		{"passthrough path with token", "GET", "/v1/models", "", with(claude, TokenHeader, testToken), 200, ""},
		{"metrics without token", "GET", "/metrics", "", http.Header{}, 401, "openai"},
		{"metrics with token", "GET", "/metrics", "", http.Header{TokenHeader: {testToken}}, 200, ""},
		{"healthz open", "GET", "/healthz", "", http.Header{}, 200, ""},
		{"readyz open", "GET", "/readyz", "", http.Header{}, 200, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			up := newFakeUpstream(t)
			_, ts := newTestProxy(t, up, Config{Window: 200000, Summarizer: SummarizerExtractive, AuthToken: testToken})
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			req, _ := http.NewRequest(tc.method, ts.URL+tc.path, body)
			req.Header = tc.header.Clone()
			resp, b := roundTrip(t, req)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, b, tc.status)
			}
			if bytes.Contains(b, []byte(testToken)) {
				t.Errorf("the answer quotes the token: %s", b)
			}
			switch tc.errShape {
			case "anthropic":
				var e struct {
					Type  string
					Error struct{ Type, Message string }
				}
				if json.Unmarshal(b, &e) != nil || e.Type != "error" || e.Error.Type != "authentication_error" || e.Error.Message == "" {
					t.Errorf("refusal body %s, want Anthropic's error shape", b)
				}
			case "openai":
				var e struct {
					Error struct{ Type, Message string }
				}
				if json.Unmarshal(b, &e) != nil || e.Error.Type == "" || e.Error.Message == "" {
					t.Errorf("refusal body %s, want OpenAI's error shape", b)
				}
			}
			reqs := up.requests()
			if tc.status == 401 && len(reqs) != 0 {
				t.Errorf("a refused request reached the upstream")
			}
			if tc.status != 200 || !strings.HasPrefix(tc.path, "/v1/") {
				return
			}
			if len(reqs) != 1 {
				t.Fatalf("upstream saw %d requests, want 1", len(reqs))
			}
			got := reqs[0].Header
			for _, name := range []string{TokenHeader, "Proxy-Authorization"} {
				if v, ok := got[http.CanonicalHeaderKey(name)]; ok {
					t.Errorf("upstream got %s: %q", name, v)
				}
			}
			for _, name := range []string{"Authorization", "X-Api-Key", "Chatgpt-Account-Id", "Originator", "X-App", "Anthropic-Beta"} {
				if want := tc.header.Get(name); got.Get(name) != want {
					t.Errorf("upstream got %s %q, want %q", name, got.Get(name), want)
				}
			}
		})
	}
}

// TestAuthTokenChecked: a token too short or that no header can carry is
// refused when the server is made, and without a token anyone may use
// the proxy.
func TestAuthTokenChecked(t *testing.T) {
	for _, tok := range []string{"short", "has a space in it, long enough", "tab\tinside-the-token-xxxxx"} {
		if _, err := New(Config{AuthToken: tok}); err == nil || strings.Contains(err.Error(), tok) {
			t.Errorf("token %q: err %v, want a refusal that does not quote it", tok, err)
		}
	}
	up := newFakeUpstream(t)
	_, ts := newTestProxy(t, up, Config{Window: 200000})
	resp, err := http.Get(ts.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("without a token: status %d", resp.StatusCode)
	}
}

// TestNoCredentialNoState: requests that carry no credential at all are
// passed through as they came: no summary call, nothing stored, however
// far over the trigger they are. The same requests with a credential (in
// a header, in the query string, or a tenant named by TenantHeader) are
// compacted and stored.
func TestNoCredentialNoState(t *testing.T) {
	cases := []struct {
		name, query string
		header      http.Header
		wantStored  bool
	}{
		{"no credential", "", http.Header{}, false},
		{"session id but no credential", "", http.Header{"X-Session-Id": {"s1"}}, false},
		{"x-api-key", "", http.Header{"X-Api-Key": {"sk-ant-canary"}}, true},
		{"authorization", "", http.Header{"Authorization": {"Bearer sk-canary"}}, true},
		{"key in the query", "?key=tenant-a-canary", http.Header{}, true},
		{"tenant header", "", http.Header{"X-Tenant": {"team-a"}}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			up := newFakeUpstream(t)
			st := store.NewMemory(store.MemoryOptions{})
			_, ts := newTestProxy(t, up, Config{Window: 4000, Summarizer: SummarizerExtractive, Store: st, TenantHeader: "X-Tenant"})
			c := newClient(t, Anthropic, ts.URL)
			c.query = tc.query
			c.header = tc.header.Clone()
			c.header.Set("Anthropic-Version", "2023-06-01")
			for i := range 8 {
				c.step(i)
			}
			records, _ := st.Len()
			if stored := records > 0; stored != tc.wantStored {
				t.Errorf("records stored %d, want stored=%v", records, tc.wantStored)
			}
			compacted := false
			for _, r := range up.modelRequests() {
				compacted = compacted || summaryOf(t, Anthropic, r.Body) != ""
				if r.Header.Get("X-Tenant") != "" {
					t.Errorf("the tenant header reached the upstream")
				}
			}
			if compacted != tc.wantStored {
				t.Errorf("compacted %v, want %v", compacted, tc.wantStored)
			}
		})
	}
}

// TestTenantsApart: conversations of tenants whose credential is not in a
// header (a key in the query string, a tenant header) get keys of their
// own, even with the same session id; the same tenant keeps its key.
func TestTenantsApart(t *testing.T) {
	srv, err := New(Config{TenantHeader: "X-Tenant"})
	if err != nil {
		t.Fatal(err)
	}
	keyOf := func(target string, h http.Header) string {
		r := httptest.NewRequest("POST", target, nil)
		r.Header = h
		r, _ = srv.withTenant(r)
		id, ok := identifyByHeader(Anthropic, srv.namespace(Anthropic, r), r.Header)
		if !ok {
			t.Fatal("no session header")
		}
		return id.key
	}
	sess := func(kv ...string) http.Header {
		h := http.Header{"X-Session-Id": {"same"}}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	cases := []struct {
		name       string
		a, b       string
		ha, hb     http.Header
		wantShared bool
	}{
		{"query keys differ", "/v1/messages?key=A", "/v1/messages?key=B", sess(), sess(), false},
		{"query key same", "/v1/messages?key=A", "/v1/messages?key=A&x=1", sess(), sess(), true},
		{"api_key spelling", "/v1/messages?api_key=A", "/v1/messages?api_key=B", sess(), sess(), false},
		{"tenants differ", "/v1/messages", "/v1/messages", sess("X-Tenant", "a"), sess("X-Tenant", "b"), false},
		{"tenant same", "/v1/messages", "/v1/messages", sess("X-Tenant", "a"), sess("X-Tenant", "a"), true},
		{"header credential unchanged by the rule", "/v1/messages", "/v1/messages", sess("X-Api-Key", "k"), sess("X-Api-Key", "k"), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			shared := keyOf(tc.a, tc.ha) == keyOf(tc.b, tc.hb)
			if shared != tc.wantShared {
				t.Errorf("shared key %v, want %v", shared, tc.wantShared)
			}
		})
	}
	// Without a query credential or tenant, keys are what they were before
	// the rule (stored state stays valid across the upgrade).
	r := httptest.NewRequest("POST", "/v1/messages", nil)
	r.Header = sess("X-Api-Key", "k")
	old, _ := identifyByHeader(Anthropic, srv.upstreamFor(Anthropic).String(), r.Header)
	if got := keyOf("/v1/messages", sess("X-Api-Key", "k")); got != old.key {
		t.Errorf("key changed for a request with a header credential")
	}
}

// FuzzPresentedToken: whatever the headers hold, reading the token never
// panics, X-Compact-Token wins over Proxy-Authorization, and only the
// Bearer scheme of Proxy-Authorization is read.
func FuzzPresentedToken(f *testing.F) {
	f.Add("", "Bearer "+testToken)
	f.Add(testToken, "Basic abc")
	f.Add(" x ", "bearer   y  ")
	f.Add("", "Bearer")
	f.Fuzz(func(t *testing.T, own, proxyAuth string) {
		r := httptest.NewRequest("GET", "/v1/models", nil)
		if own != "" {
			r.Header.Set(TokenHeader, own)
		}
		if proxyAuth != "" {
			r.Header.Set("Proxy-Authorization", proxyAuth)
		}
		tok, ok := presentedToken(r)
		switch {
		case own != "":
			if !ok || tok != strings.TrimSpace(own) {
				t.Errorf("X-Compact-Token %q gave %q, %v", own, tok, ok)
			}
		case ok:
			scheme, _, _ := strings.Cut(strings.TrimSpace(proxyAuth), " ")
			if !strings.EqualFold(scheme, "bearer") || tok != strings.TrimSpace(tok) {
				t.Errorf("Proxy-Authorization %q gave %q", proxyAuth, tok)
			}
		}
	})
}
