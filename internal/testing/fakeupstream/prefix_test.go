package fakeupstream

import (
	"encoding/json"
	"strings"
	"testing"
)

// req builds a recorded main-loop request from raw list items.
func req(seq int, items ...string) Request {
	r := Request{Seq: seq, API: Anthropic, Tools: 1}
	for _, it := range items {
		r.Items = append(r.Items, json.RawMessage(it))
	}
	return r
}

func TestStablePrefixes(t *testing.T) {
	const (
		sys  = `{"role":"system","content":"s"}`
		a1   = `{"role":"assistant","content":"1"}`
		u1   = `{"role":"user","content":"1"}`
		a2   = `{"role":"assistant","content":"2"}`
		u2   = `{"role":"user","content":"2"}`
		a3   = `{"role":"assistant","content":"3"}`
		u3   = `{"role":"user","content":"3"}`
		sumA = `{"role":"user","content":"summary A"}`
		sumB = `{"role":"user","content":"summary B"}`
		// u2 as Claude Code sends it while it is the newest message.
		u2cc = `{"role":"user","content":[{"type":"text","text":"2","cache_control":{"type":"ephemeral"}}]}`
	)
	cases := []struct {
		name     string
		reqs     []Request
		comps    int
		prefix   int // Prefix of the first compaction
		problems []string
	}{
		{"append only", []Request{req(1, sys, a1), req(2, sys, a1, u1, a2)}, 0, 0, nil},
		{"stable summary", []Request{
			req(1, sys, a1, u1, a2, u2),
			req(2, sys, sumA, a2, u2cc, a3), // compaction: head 1 + summary
			req(3, sys, sumA, a2, u2, a3, u3),
		}, 1, 2, nil},
		{"summary rewritten every turn", []Request{
			req(1, sys, a1, u1, a2, u2),
			req(2, sys, sumA, a2, u2, a3),
			req(3, sys, sumB, a2, u2, a3, u3),
		}, 1, 2, []string{"request 3: list item 1 differs from request 2's while the first kept item 2 did not move"}},
		// The same JSON value with other bytes: invisible to the model,
		// fatal to the provider's cache.
		{"summary re-encoded within an epoch", []Request{
			req(1, sys, a1, u1, a2, u2),
			req(2, sys, sumA, a2, u2, a3),
			req(3, sys, sumA, a2, u2, a3, u3),
			req(4, sys, sumA+" ", a2, u2, a3, u3, a3),
		}, 1, 2, []string{"request 4: list item 1 differs from request 2's: the rewritten prefix changed without a compaction"}},
		{"cache_control moved on the summary", []Request{
			req(1, sys, a1, u1, a2, u2),
			req(2, sys, sumA, a2, u2, a3),
			req(3, sys, `{"role":"user","content":"summary A","cache_control":{"type":"ephemeral"}}`, a2, u2, a3, u3),
		}, 1, 2, []string{"request 3: list item 1 differs from request 2's: the rewritten prefix changed"}},
		// A compaction that replaces as many items as the agent added:
		// the list does not shrink but the first kept item moves.
		{"compaction without a shorter list", []Request{
			req(1, sys, a1, u1, a2),
			req(2, sys, sumA, a2, u2),
			req(3, sys, sumB, u2, a3, u3),
		}, 2, 2, nil},
		{"second compaction starts a new epoch", []Request{
			req(1, sys, a1, u1, a2, u2),
			req(2, sys, sumA, a2, u2, a3),
			req(3, sys, sumB, a3),
			req(4, sys, sumB, a3, u3),
		}, 2, 2, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			comps, problems := StablePrefixes(c.reqs)
			if len(comps) != c.comps || (c.comps > 0 && comps[0].Prefix != c.prefix) {
				t.Errorf("compactions %+v, want %d with prefix %d", comps, c.comps, c.prefix)
			}
			if len(problems) != len(c.problems) {
				t.Fatalf("problems %q, want %q", problems, c.problems)
			}
			for i, p := range c.problems {
				if !strings.Contains(problems[i], p) {
					t.Errorf("problem %q, want it to contain %q", problems[i], p)
				}
			}
		})
	}
}

func TestMainLoop(t *testing.T) {
	reqs := []Request{
		{Seq: 1, API: Chat, Tools: 0},                 // title request
		{Seq: 2, API: Chat, Tools: 3},                 // a turn
		{Seq: 3, API: Chat, Tools: 3, Rejected: true}, // refused
		{Seq: 4, Tools: 0},                            // GET /v1/models
	}
	if got := MainLoop(reqs); len(got) != 1 || got[0].Seq != 2 {
		t.Errorf("MainLoop = %+v", got)
	}
}
