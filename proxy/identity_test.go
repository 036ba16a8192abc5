package proxy

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/fakeupstream"
	"github.com/compactkit/compact/internal/testing/syncbuf"
	"github.com/compactkit/compact/proxy/store"
)

// TestConversationsNeverShareState: two conversations that open with the
// same first message (as every session of a project does when the agent
// injects its instructions there) and send no session id are compacted
// independently: neither ever receives the other's summary.
func TestConversationsNeverShareState(t *testing.T) {
	up := newFakeUpstream(t)
	_, ts := newTestProxy(t, up, Config{Window: 12000, Policy: compact.Reserve{Tokens: 3000}, Summarizer: SummarizerExtractive})
	a := newClient(t, Chat, ts.URL)
	b := newClient(t, Chat, ts.URL)
	for i := 1; i <= 14; i++ {
		a.step(i)
	}
	// b diverges at its second step: different tool output.
	for i := 101; i <= 114; i++ {
		b.step(i)
	}
	for k, r := range up.modelRequests() {
		list := listOf(t, Chat, r.Body)
		for _, it := range list {
			if !isSummaryItem(it) {
				continue
			}
			hasA := bytes.Contains(it, []byte("step 1 line")) || bytes.Contains(it, []byte("step 2 line"))
			hasB := bytes.Contains(it, []byte("step 101 line")) || bytes.Contains(it, []byte("step 102 line"))
			if hasA && hasB {
				t.Errorf("request %d: a summary mixes both conversations", k)
			}
		}
	}
	// Same again with the same session id on both: the hash chain keeps
	// them apart.
	up2 := newFakeUpstream(t)
	_, ts2 := newTestProxy(t, up2, Config{Window: 12000, Policy: compact.Reserve{Tokens: 3000}, Summarizer: SummarizerExtractive})
	a = newClient(t, Chat, ts2.URL)
	b = newClient(t, Chat, ts2.URL)
	a.header.Set("X-Session-Id", "same")
	b.header.Set("X-Session-Id", "same")
	for i := 1; i <= 12; i++ {
		a.step(i)
		b.step(100 + i)
	}
	for k, r := range up2.modelRequests() {
		body := r.Body
		if bytes.Contains(body, []byte("step 1 line")) && bytes.Contains(body, []byte("step 101 line")) {
			t.Errorf("request %d mixes two conversations that share a session id", k)
		}
	}
}

// TestUpstreamSummarizer: by default the conversation's own model writes
// the summary through the same upstream with the client's credentials.
func TestUpstreamSummarizer(t *testing.T) {
	for _, api := range []API{Anthropic, Chat, Responses} {
		t.Run(string(api), func(t *testing.T) {
			up := newFakeUpstream(t)
			_, ts := newTestProxy(t, up, Config{Window: 12000, Policy: compact.Reserve{Tokens: 3000}})
			c := newClient(t, api, ts.URL)
			for i := 1; i <= 20; i++ {
				c.step(i)
			}
			var summaryReqs []seen
			for _, r := range up.requests() {
				if !isAgentRequest(r.Path, r.Body) {
					summaryReqs = append(summaryReqs, r)
				}
			}
			if len(summaryReqs) == 0 {
				t.Fatal("no summary request reached the upstream")
			}
			r := summaryReqs[0]
			if r.Header.Get("X-Api-Key")+r.Header.Get("Authorization") == "" {
				t.Errorf("summary request carried no credential: %v", r.Header)
			}
			if !bytes.Contains(r.Body, []byte(`-test"`)) {
				t.Errorf("summary request not for the conversation's model: %.200s", r.Body)
			}
			found := false
			for _, m := range up.modelRequests() {
				if bytes.Contains(m.Body, []byte(fakeupstream.HandoverMark)) {
					found = true
				}
			}
			if !found {
				t.Error("the model's summary never reached a later request")
			}
			// A later compaction merges the earlier summary rather than
			// summarizing again what it covers: once a compacted request
			// went upstream, no summary request carries the first step.
			all := up.requests()
			after := -1
			for i, r := range all {
				if isAgentRequest(r.Path, r.Body) && bytes.Contains(r.Body, []byte(fakeupstream.HandoverMark)) {
					after = i
					break
				}
			}
			later := 0
			for _, r := range all[after+1:] {
				if isAgentRequest(r.Path, r.Body) {
					continue
				}
				later++
				if bytes.Contains(r.Body, []byte("step 1 line 0:")) {
					t.Error("a later summary request re-sent messages the earlier summary covers")
				}
			}
			if after < 0 || later == 0 {
				t.Errorf("no second compaction to check (first compacted request at %d, %d summary requests after it)", after, later)
			}
		})
	}
}

// TestUnknownWindowPassesThrough: a model the registry does not know is
// passed through uncompacted, and said once in the log.
func TestUnknownWindowPassesThrough(t *testing.T) {
	var logs syncbuf.Buffer
	up := newFakeUpstream(t)
	_, ts := newTestProxy(t, up, Config{Registry: compact.NewRegistry(nil), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	c := newClient(t, Chat, ts.URL)
	for i := 1; i <= 6; i++ {
		c.step(i)
	}
	if !forwardedUnchanged(t, up, c) {
		t.Fatal("request was rewritten for a model with an unknown window")
	}
	n := strings.Count(logs.String(), `msg="model window unknown`)
	if n != 1 {
		t.Errorf("unknown window logged %d times, want once", n)
	}
}

// TestCountTokensUsesTheCompaction: count_tokens of a compacted
// conversation counts what the model would see, and never compacts.
func TestCountTokensUsesTheCompaction(t *testing.T) {
	up := newFakeUpstream(t)
	_, ts := newTestProxy(t, up, Config{Window: 12000, Policy: compact.Reserve{Tokens: 3000}, Summarizer: SummarizerExtractive})
	c := newClient(t, Anthropic, ts.URL)
	c.header.Set("X-Claude-Code-Session-Id", "s1")
	for i := 1; i <= 10; i++ {
		c.step(i)
	}
	req, _ := http.NewRequest("POST", ts.URL+"/v1/messages/count_tokens", bytes.NewReader(c.bodyBefore(len(c.items)-2)))
	req.Header = c.header.Clone()
	roundTrip(t, req)
	last := lastOf(t, up.requests())
	if last.Path != "/v1/messages/count_tokens" {
		t.Fatalf("last upstream path %s", last.Path)
	}
	if summaryOf(t, Anthropic, last.Body) == "" {
		t.Error("count_tokens was sent without the conversation's compaction")
	}
}

// TestSessionKey: the session key of a request leaves its credential out,
// so it is the same across a token change, and keeps everything else in;
// a request without an id has none.
func TestSessionKey(t *testing.T) {
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	p := &Parsed{Model: "m"}
	base := identify(Anthropic, "https://a", hdr("Authorization", "Bearer a", "X-Session-Id", "s1"), p)
	for _, tc := range []struct {
		name        string
		api         API
		up          string
		h           http.Header
		sameSession bool
	}{
		{"new token", Anthropic, "https://a", hdr("Authorization", "Bearer b", "X-Session-Id", "s1"), true},
		{"api key instead", Anthropic, "https://a", hdr("X-Api-Key", "k", "X-Session-Id", "s1"), true},
		{"other session", Anthropic, "https://a", hdr("Authorization", "Bearer a", "X-Session-Id", "s2"), false},
		{"other upstream", Anthropic, "https://b", hdr("Authorization", "Bearer a", "X-Session-Id", "s1"), false},
		{"other api", Chat, "https://a", hdr("Authorization", "Bearer a", "X-Session-Id", "s1"), false},
		{"other header", Anthropic, "https://a", hdr("Authorization", "Bearer a", "Session_id", "s1"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := identify(tc.api, tc.up, tc.h, p)
			if (id.session == base.session) != tc.sameSession {
				t.Errorf("same session key: %v, want %v", id.session == base.session, tc.sameSession)
			}
			if id.key == base.key {
				t.Error("same conversation key under another credential or id")
			}
			if err := store.CheckKey(id.session); err != nil {
				t.Error(err)
			}
		})
	}
	if id := identify(Anthropic, "https://a", hdr("Authorization", "Bearer a"), p); id.session != "" {
		t.Errorf("a fingerprinted request has session key %q", id.session)
	}
}

// TestCredentialRotation: a client whose credential changes mid-session
// (a Claude Code OAuth refresh: new bearer token, same session id, same
// messages) keeps its stored compaction: the next request is rewritten to
// the same bytes as without the change, with no new summary. A client with
// another credential, the same session id and other messages does not get
// that compaction.
func TestCredentialRotation(t *testing.T) {
	for _, api := range []API{Anthropic, Chat, Responses} {
		t.Run(string(api), func(t *testing.T) {
			// run plays the conversation; after the first compaction the
			// next request goes with the token rotate gives (or the same).
			run := func(rotate string) (up *fakeUpstream, c *client, at int, url string) {
				up = newFakeUpstream(t)
				// (In line: the first summary request is the compaction.)
				_, ts := newTestProxy(t, up, Config{Window: 6000, Policy: compact.Reserve{Tokens: 1000}, AheadMark: -1})
				c = newClient(t, api, ts.URL)
				c.header.Del("X-Api-Key")
				c.header.Set("Authorization", "Bearer oauth-token-a")
				c.header.Set("X-Claude-Code-Session-Id", "session-1")
				for i := 1; i <= 20; i++ {
					c.step(i)
					if up.summaries.Load() > 0 {
						if rotate != "" {
							c.header.Set("Authorization", "Bearer "+rotate)
						}
						c.step(i + 1)
						return up, c, i + 1, ts.URL
					}
				}
				t.Fatal("no compaction in 20 steps")
				return
			}
			want, _, wantAt, _ := run("")
			got, c, gotAt, url := run("oauth-token-b")
			wreqs, greqs := want.modelRequests(), got.modelRequests()
			if wantAt != gotAt || len(wreqs) != len(greqs) {
				t.Fatalf("the runs differ before the rotation: %d/%d steps", wantAt, gotAt)
			}
			last := greqs[len(greqs)-1]
			sum := summaryOf(t, api, last.Body)
			if sum == "" {
				t.Fatal("the request after the rotation was not rewritten")
			}
			if g, w := got.summaries.Load(), want.summaries.Load(); g != w {
				t.Errorf("%d summaries with the rotation, %d without: the compaction was thrown away", g, w)
			}
			if !bytes.Equal(last.Body, wreqs[len(wreqs)-1].Body) {
				t.Errorf("the request after the rotation differs from the one without it")
			}

			// Another tenant: same session id, its own credential, a
			// history of the same shape with other content.
			before := got.summaries.Load()
			other := newClient(t, api, url)
			other.header = c.header.Clone()
			other.header.Set("Authorization", "Bearer tenant-c")
			for _, it := range c.items {
				other.items = append(other.items, strings.ReplaceAll(it, "Count the lines", "Delete the files"))
			}
			other.items = other.items[len(other.items)-len(c.items):]
			other.step(100)
			// Over the trigger and without a compaction of its own, it
			// must get a summary written for it.
			if got.summaries.Load() != before+1 {
				t.Errorf("another tenant's request did not get its own summary (%d summaries, had %d): it was given this conversation's compaction", got.summaries.Load(), before)
			}
		})
	}
}
