package proxy

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/syncbuf"
	"github.com/compactkit/compact/proxy/store"
)

// TestEvictionsNotSilent: two tenants share a store too small for both.
// When the second tenant's compactions push the first one's out, the
// store counts it (compact_proxy_store_evictions_total) and the proxy
// says so in its log, instead of the first tenant just paying a new
// summary without anybody knowing why.
func TestEvictionsNotSilent(t *testing.T) {
	var logs syncbuf.Buffer
	up := newFakeUpstream(t)
	// Room for about one conversation's record.
	st := store.NewMemory(store.MemoryOptions{MaxBytes: 6000})
	_, ts := newTestProxy(t, up, Config{Window: 6000, Policy: compact.Reserve{Tokens: 1000}, Summarizer: SummarizerExtractive,
		Store: st, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	tenant := func(key, session string) *client {
		c := newClient(t, Chat, ts.URL)
		c.header.Set("Authorization", "Bearer "+key)
		c.header.Set("X-Session-Id", session)
		return c
	}
	a, b := tenant("sk-tenant-a-0123456789", "a-1"), tenant("sk-tenant-b-0123456789", "b-1")
	for i := 1; i <= 6; i++ {
		a.step(i)
	}
	if st.Evictions() != 0 {
		t.Fatalf("%d evictions with one tenant; the store should hold its record", st.Evictions())
	}
	for i := 1; i <= 6; i++ {
		b.step(i)
	}
	if up.summaries.Load() == 0 && st.Evictions() == 0 {
		t.Fatal("no compaction happened: the test's conversations are too short")
	}
	n := st.Evictions()
	if n == 0 {
		t.Fatal("the second tenant's records did not push the first one's out; the store is too large for this test")
	}
	body := served(t, ts.URL)
	if want := fmt.Sprintf("\ncompact_proxy_store_evictions_total %d\n", n); !strings.Contains(body, want) {
		t.Errorf("/metrics does not say %q", strings.TrimSpace(want))
	}
	if !strings.Contains(logs.String(), "store full") {
		t.Errorf("no log line says the store dropped conversations (%d evictions):\n%s", n, logs.String())
	}
	if strings.Contains(logs.String(), "sk-tenant") {
		t.Error("the log holds a tenant's key")
	}
}
