package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/fakeupstream"
	"github.com/compactkit/compact/internal/testing/syncbuf"
	"github.com/compactkit/compact/proxy/store"
)

// opensWithCompactionItem reports whether an upstream list starts (after
// the head) with a provider compaction: an Anthropic message whose first
// block is a compaction block, or a Responses compaction item.
func carriesCompaction(api API, items []json.RawMessage) bool {
	for _, it := range items {
		if api == Anthropic && opensWithCompaction(it) {
			return true
		}
		if api == Responses && bytes.Contains(it, []byte(`"type":"compaction"`)) {
			return true
		}
	}
	return false
}

// TestNativeSummarizer runs conversations through the proxy with
// SummarizerNative against the scripted provider, which serves and checks
// the providers' own compaction (signed blocks sealed to the credential,
// the beta header, thinking after the block): the proxy asks for the
// provider's compaction, later requests carry its window first (the
// Anthropic block with the beta header) and are accepted, the thinking
// kept after it stays valid (nothing dropped, nothing refused), the
// checkpoint records it, and no summary falls back. A conversation that
// uses context_management gets the upstream summarizer instead, and Chat
// (no provider compaction) too.
func TestNativeSummarizer(t *testing.T) {
	cases := []struct {
		name    string
		api     API
		members string
		// native is whether provider compactions are expected.
		native bool
	}{
		{"anthropic thinking", Anthropic, `"thinking":{"type":"enabled","budget_tokens":1024},"cache_control":{"type":"ephemeral"},`, true},
		{"anthropic with context_management", Anthropic, `"thinking":{"type":"enabled","budget_tokens":1024},"context_management":{"edits":[{"type":"clear_thinking_20251015","keep":"all"}]},`, false},
		{"responses", Responses, "", true},
		{"chat", Chat, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake, base := fakeupstream.Start(t, fakeupstream.Config{Steps: 60, CacheMinTokens: 1})
			var logs syncbuf.Buffer
			srv, ts := proxyIn(t, base, Config{Window: 30000, Policy: compact.Reserve{Tokens: 3000}, Summarizer: SummarizerNative,
				Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			c := newClient(t, tc.api, ts.URL)
			c.marker, c.members = true, tc.members
			for i := 1; i <= 45; i++ {
				c.step(i)
			}
			compactions, carried := 0, 0
			for _, r := range fake.Requests() {
				if r.Status != 200 {
					t.Errorf("request %d %s refused (%d): %s", r.Seq, r.Path, r.Status, r.Error)
				}
				if r.ThinkingRejected {
					t.Errorf("request %d: thinking refused: %s", r.Seq, r.Error)
				}
				if tc.native && r.ThinkingDropped > 0 {
					// compact's own summary drops the thinking whose
					// prefix it changed; the provider's keeps it valid.
					t.Errorf("request %d: %d thinking blocks dropped after a provider compaction", r.Seq, r.ThinkingDropped)
				}
				if r.Compaction {
					compactions++
					continue
				}
				if carriesCompaction(tc.api, r.Items) {
					carried++
					if tc.api == Anthropic && !strings.Contains(strings.Join(r.Header.Values("Anthropic-Beta"), ","), betaCompact) {
						t.Errorf("request %d carries a compaction block without the beta header", r.Seq)
					}
				}
			}
			if tc.native && (compactions < 2 || carried == 0) {
				t.Fatalf("%d provider compactions, %d requests carrying one; want at least 2 and some\n%s", compactions, carried, logs.String())
			}
			if !tc.native && compactions+carried > 0 {
				t.Fatalf("%d provider compactions, %d requests carrying one; want none", compactions, carried)
			}
			if strings.Contains(logs.String(), "used the offline summary") || !strings.Contains(logs.String(), "msg=compacted") {
				t.Errorf("no compaction, or a summary fell back:\n%s", logs.String())
			}
			// The stored checkpoint says what made it and for which
			// credential.
			rec := storedRecord(t, srv)
			if rec == nil || len(rec.Checkpoints) == 0 {
				t.Fatal("no checkpoint stored")
			}
			cp := rec.Checkpoints[0]
			if tc.native && (cp.Native == "" || cp.Credential == "") {
				t.Errorf("checkpoint: native %q, credential %q", cp.Native, cp.Credential)
			}
			if tc.native && !strings.Contains(logs.String(), `summary_requests="`+cp.Native+` compaction: conversation`) {
				t.Errorf("the compaction's log line does not say the provider compacted:\n%s", logs.String())
			}
			if !tc.native && cp.Native != "" {
				t.Errorf("checkpoint: native %q", cp.Native)
			}
		})
	}
}

// storedRecord returns the record of the one conversation in srv's store.
func storedRecord(t *testing.T, srv *Server) *store.Record {
	t.Helper()
	mem, ok := srv.store.(*store.Memory)
	if !ok {
		t.Fatalf("store %T is not the in-memory one", srv.store)
	}
	for _, k := range mem.Keys() {
		if strings.HasPrefix(k, "c:") {
			rec, err := srv.store.Get(context.Background(), k)
			if err != nil {
				t.Fatal(err)
			}
			return rec
		}
	}
	return nil
}

// TestNativeStaysWithItsCredential: a Responses compaction window is
// encrypted for the credential that made it. A request of the same
// session under another credential (a refreshed token) is never sent that
// window: it gets a compaction of its own instead, and the provider
// refuses nothing.
func TestNativeStaysWithItsCredential(t *testing.T) {
	fake, base := fakeupstream.Start(t, fakeupstream.Config{Steps: 80, CacheMinTokens: 1})
	_, ts := proxyIn(t, base, Config{Window: 30000, Policy: compact.Reserve{Tokens: 3000}, Summarizer: SummarizerNative})
	c := newClient(t, Responses, ts.URL)
	c.marker = true
	c.header.Set("Session_id", "codex-session-1")
	for i := 1; i <= 30; i++ {
		c.step(i)
	}
	before := len(fake.Requests())
	c.header.Set("Authorization", "Bearer sk-refreshed-9876543210")
	for i := 31; i <= 34; i++ {
		c.step(i)
	}
	compactedA := false
	for i, r := range fake.Requests() {
		if r.Status != 200 {
			t.Errorf("request %d %s refused (%d): %s", r.Seq, r.Path, r.Status, r.Error)
		}
		if i < before {
			compactedA = compactedA || r.Compaction
			continue
		}
		if !r.Compaction && carriesCompaction(Responses, r.Items) {
			// Only a window made under the new credential may be sent.
			made := false
			for _, q := range fake.Requests()[before:i] {
				made = made || q.Compaction
			}
			if !made {
				t.Errorf("request %d under the new credential carries the old credential's window", r.Seq)
			}
		}
	}
	if !compactedA {
		t.Fatal("no provider compaction under the first credential")
	}
}

// TestNativeRefusedOncePerModel: a provider that refuses its compaction
// for the model (a 400 naming compaction) gets one such request per
// model; that compaction and every later one are written by the upstream
// summarizer, and the log says so once.
func TestNativeRefusedOncePerModel(t *testing.T) {
	fake, _ := fakeupstream.Start(t, fakeupstream.Config{Steps: 60, CacheMinTokens: 1})
	var refused atomic.Int32
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if topLevel(body, "compaction") != nil {
			refused.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"compaction: this model does not support on-demand compaction"},"request_id":"req_1"}`)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		fake.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	var logs syncbuf.Buffer
	_, ts := proxyIn(t, front.URL, Config{Window: 30000, Policy: compact.Reserve{Tokens: 3000}, Summarizer: SummarizerNative,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	c := newClient(t, Anthropic, ts.URL)
	c.marker = true
	for i := 1; i <= 45; i++ {
		c.step(i)
	}
	if n := refused.Load(); n != 1 {
		t.Errorf("%d compaction requests refused, want exactly 1 (once per model)", n)
	}
	if n := strings.Count(logs.String(), "refused its own compaction"); n != 1 {
		t.Errorf("the refusal is logged %d times, want once:\n%s", n, logs.String())
	}
	if n := strings.Count(logs.String(), "msg=compacted"); n < 2 {
		t.Fatalf("%d compactions, want at least 2", n)
	}
	if strings.Contains(logs.String(), "used the offline summary") {
		t.Errorf("a summary fell back to the offline one:\n%s", logs.String())
	}
}
