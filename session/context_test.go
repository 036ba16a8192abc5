package session

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

// On before-compaction.jsonl the context at the leaf is the second
// compaction's summary, the messages from its first kept entry up to it,
// then everything after it. At the entry before the second compaction it
// is built on the first compaction instead.
func TestContextBeforeCompactionFixture(t *testing.T) {
	s := mustOpen(t, fixture(t, beforeCompaction), Options{})
	entries := s.Entries()
	var comps []int
	for i, e := range entries {
		if e.Kind == compact.KindCompaction {
			comps = append(comps, i)
		}
	}
	if len(comps) != 2 {
		t.Fatalf("%d compactions, want 2", len(comps))
	}
	cases := []struct {
		name     string
		leaf     int // index in entries
		comp     int // index of the compaction the context must use
		keptFrom int // index of its first kept entry (firstKeptEntryIndex - 1)
	}{
		{"leaf", len(entries) - 1, comps[1], 550},
		{"before the second compaction", comps[1] - 1, comps[0], 292},
		{"at the first compaction", comps[0], comps[0], 292},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path, err := s.PathTo(entries[c.leaf].ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(path) != c.leaf+1 {
				t.Fatalf("path of %d entries, want %d", len(path), c.leaf+1)
			}
			ctx := compact.BuildContext(path)
			comp := entries[c.comp]
			if ctx.Compaction != comp {
				t.Fatalf("context built on %v, want the compaction at %d", ctx.Compaction, c.comp)
			}
			if m := ctx.Messages[0]; m.Role != compact.RoleCompactionSummary || m.Text() != comp.Compaction.Summary ||
				!strings.HasPrefix(m.Text(), "# Context Checkpoint") {
				t.Errorf("first message %s %.60q", m.Role, m.Text())
			}
			if comp.Compaction.FirstKeptID != entries[c.keptFrom].ID {
				t.Fatalf("first kept %q, want entry %d", comp.Compaction.FirstKeptID, c.keptFrom)
			}
			want := []string{comp.ID}
			var wantMsgs []*compact.Message
			for i := c.keptFrom; i <= c.leaf; i++ {
				if i != c.comp && entries[i].IsContextMessage() {
					want = append(want, entries[i].ID)
					wantMsgs = append(wantMsgs, entries[i].Message)
				}
			}
			if !slices.Equal(ctx.EntryIDs, want) {
				t.Fatalf("context has %d messages, want %d", len(ctx.EntryIDs), len(want))
			}
			if !slices.Equal(ctx.Messages[1:], wantMsgs) {
				t.Error("context messages are not the entries' messages")
			}
			if ctx.EntryIDs[1] != entries[c.keptFrom].ID || ctx.Messages[1].Role != compact.RoleUser {
				t.Errorf("the kept part starts with %s (%s)", ctx.EntryIDs[1], ctx.Messages[1].Role)
			}
			// Messages recorded after the compaction start right after the
			// kept ones.
			kept := 0
			for i := c.keptFrom; i < c.comp; i++ {
				if entries[i].IsContextMessage() {
					kept++
				}
			}
			if ctx.FirstAfterCompaction != 1+kept {
				t.Errorf("FirstAfterCompaction %d, want %d", ctx.FirstAfterCompaction, 1+kept)
			}
		})
	}
}

// Synthetic trees with branches: the context follows only the path to the
// leaf asked for, with the latest compaction on that path.
func TestContextBranches(t *testing.T) {
	// a1 (user) - a2 (assistant) -+- b1 (user) - b2 (assistant) - bc (compaction keeping b1) - b3 (user)
	//                             |
	//                             +- c0 (model_change) - c1 (branch_summary) - c2 (user) - c3 (custom_message) - lbl (label)
	//                                                                                   \- d1 (compaction keeping a2) - d2 (user)
	p := writeSession(t, v3Header,
		msgLine("000000a1", "", "user", "a1"),
		`{"type":"message","id":"000000a2","parentId":"000000a1","timestamp":"t","message":{"role":"assistant","content":[{"type":"text","text":"a2"}],"provider":"anthropic","model":"claude","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15},"stopReason":"stop","timestamp":2}}`,
		msgLine("000000b1", "000000a2", "user", "b1"),
		msgLine("000000b2", "000000b1", "assistant", "b2"),
		`{"type":"compaction","id":"000000bc","parentId":"000000b2","timestamp":"t","summary":"sum B","firstKeptEntryId":"000000b1","tokensBefore":100}`,
		msgLine("000000b3", "000000bc", "user", "b3"),
		`{"type":"model_change","id":"000000c0","parentId":"000000a2","timestamp":"t","provider":"openai","modelId":"gpt-5"}`,
		`{"type":"branch_summary","id":"000000c1","parentId":"000000c0","timestamp":"t","fromId":"000000b3","summary":"tried B"}`,
		msgLine("000000c2", "000000c1", "user", "c2"),
		`{"type":"custom_message","id":"000000c3","parentId":"000000c2","timestamp":"t","customType":"note","content":"injected","display":true}`,
		`{"type":"label","id":"000000f0","parentId":"000000c3","timestamp":"t","targetId":"000000c2","label":"here"}`,
		`{"type":"compaction","id":"000000d1","parentId":"000000c2","timestamp":"t","summary":"sum D","firstKeptEntryId":"000000a2","tokensBefore":50}`,
		msgLine("000000d2", "000000d1", "user", "d2"),
	)
	s := mustOpen(t, p, Options{})
	cases := []struct {
		leaf  string
		ids   []string
		roles []compact.Role
		model string
		comp  string
		after int
	}{
		{"000000a2", []string{"000000a1", "000000a2"}, []compact.Role{"user", "assistant"}, "claude", "", 0},
		{"000000b2", []string{"000000a1", "000000a2", "000000b1", "000000b2"}, nil, "claude", "", 0},
		{"000000bc", []string{"000000bc", "000000b1", "000000b2"}, []compact.Role{"compactionSummary", "user", "assistant"}, "claude", "000000bc", 3},
		{"000000b3", []string{"000000bc", "000000b1", "000000b2", "000000b3"}, nil, "claude", "000000bc", 3},
		{"000000c0", []string{"000000a1", "000000a2"}, nil, "gpt-5", "", 0},
		{"000000f0", []string{"000000a1", "000000a2", "000000c1", "000000c2", "000000c3"}, []compact.Role{"user", "assistant", "branchSummary", "user", "custom"}, "gpt-5", "", 0},
		{"000000d2", []string{"000000d1", "000000a2", "000000c1", "000000c2", "000000d2"}, nil, "gpt-5", "000000d1", 4},
		{"", []string{"000000d1", "000000a2", "000000c1", "000000c2", "000000d2"}, nil, "gpt-5", "000000d1", 4}, // the leaf
	}
	for _, c := range cases {
		t.Run("leaf "+c.leaf, func(t *testing.T) {
			path, err := s.PathTo(c.leaf)
			if err != nil {
				t.Fatal(err)
			}
			ctx := compact.BuildContext(path)
			if !slices.Equal(ctx.EntryIDs, c.ids) {
				t.Errorf("context %v, want %v", ctx.EntryIDs, c.ids)
			}
			if c.roles != nil {
				var roles []compact.Role
				for _, m := range ctx.Messages {
					roles = append(roles, m.Role)
				}
				if !slices.Equal(roles, c.roles) {
					t.Errorf("roles %v, want %v", roles, c.roles)
				}
			}
			comp := ""
			if ctx.Compaction != nil {
				comp = ctx.Compaction.ID
			}
			if ctx.Model != c.model || comp != c.comp || ctx.FirstAfterCompaction != c.after {
				t.Errorf("model %q compaction %q after %d; want %q %q %d", ctx.Model, comp, ctx.FirstAfterCompaction, c.model, c.comp, c.after)
			}
		})
	}
	if _, err := s.PathTo("nope"); err == nil {
		t.Error("PathTo of an unknown id succeeded")
	}
	if c := s.Context(); !slices.Equal(c.EntryIDs, cases[len(cases)-1].ids) {
		t.Errorf("Context() at the leaf %v", c.EntryIDs)
	}
	if txt := s.Entry("000000c3").Message.Text(); txt != "injected" {
		t.Errorf("custom message text %q", txt)
	}
}

// Session.Context falls back to the model named by a version 1 header
// when no entry names one.
func TestContextHeaderModel(t *testing.T) {
	s := mustOpen(t, writeSession(t, v1Header, v1MsgLine("user", "hi")), Options{})
	c := s.Context()
	if c.Provider != "anthropic" || c.Model != "claude-sonnet-4-5" || len(c.Messages) != 1 {
		t.Errorf("context model %q/%q, %d messages", c.Provider, c.Model, len(c.Messages))
	}
	empty := mustOpen(t, writeSession(t, v3Header), Options{})
	if p := empty.Path(); len(p) != 0 || empty.Leaf() != "" || len(empty.Context().Messages) != 0 {
		t.Errorf("empty session: path %v leaf %q", p, empty.Leaf())
	}
}

// TestKeptEntryMissingWarns: a compaction whose firstKeptEntryId names no
// entry of the file keeps nothing before it (as pi does); reading the
// file says so in a warning naming the line and both ids, and a
// compaction whose kept entry exists says nothing.
func TestKeptEntryMissingWarns(t *testing.T) {
	p := writeSession(t, v3Header,
		msgLine("000000a1", "", "user", "a1"),
		msgLine("000000a2", "000000a1", "assistant", "a2"),
		`{"type":"compaction","id":"000000c1","parentId":"000000a2","timestamp":"t","summary":"sum","firstKeptEntryId":"000000a2","tokensBefore":100}`,
		msgLine("000000a3", "000000c1", "user", "a3"),
		`{"type":"compaction","id":"000000c2","parentId":"000000a3","timestamp":"t","summary":"sum 2","firstKeptEntryId":"deadbeef","tokensBefore":100}`,
		msgLine("000000a4", "000000c2", "user", "a4"),
	)
	var warned []string
	s := mustOpen(t, p, Options{Warn: func(m string) { warned = append(warned, m) }})
	if len(warned) != 1 {
		t.Fatalf("%d warnings, want 1: %q", len(warned), warned)
	}
	want := fmt.Sprintf("%s:6: compaction entry %q keeps from entry %q, which the file does not hold", p, "000000c2", "deadbeef")
	if !strings.HasPrefix(warned[0], want) {
		t.Errorf("warning %q\nwant it to start with %q", warned[0], want)
	}
	if got := s.Warnings(); len(got) != 1 {
		t.Errorf("Session.Warnings() = %q", got)
	}
}
