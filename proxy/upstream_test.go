package proxy

import (
	"net/http"
	"strings"
	"testing"
)

// TestResponseHeadersAddNothing: whatever path a response takes through
// the proxy (a relayed answer, a relayed error, a passthrough), it carries
// the upstream's headers and no header the upstream did not send.
func TestResponseHeadersAddNothing(t *testing.T) {
	cases := []struct {
		name, method, path, body string
		status                   int
	}{
		{"answer", "POST", "/v1/chat/completions", `{"model":"gpt-test","messages":[{"role":"user","content":"hi"}]}`, 200},
		{"error", "POST", "/v1/chat/completions", `{"model":"gpt-test","messages":[{"role":"user","content":"refuse me"}]}`, 400},
		{"passthrough", "GET", "/v1/models", "", 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			up := newFakeUpstream(t)
			up.reject400 = func(b []byte) bool { return strings.Contains(string(b), "refuse me") }
			_, ts := newTestProxy(t, up, Config{Window: 200000, Summarizer: SummarizerExtractive})
			req, _ := http.NewRequest(tc.method, ts.URL+tc.path, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			for _, k := range []string{"User-Agent", "Via", "X-Forwarded-For", "Forwarded"} {
				if v, ok := resp.Header[k]; ok {
					t.Errorf("response header %s: %q was added", k, v)
				}
			}
		})
	}
}
