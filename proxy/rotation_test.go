package proxy

import (
	"bytes"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

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
				_, ts := newTestProxy(t, up, Config{Window: 6000, Policy: compact.Reserve{Tokens: 1000}})
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
