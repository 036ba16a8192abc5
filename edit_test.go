package compact

import (
	"strings"
	"testing"
)

func TestContextEditsReplay(t *testing.T) {
	var b builder
	b.user(10)
	call := b.call("bash", `{"command":"cat big.log"}`)
	res := b.result(call, "bash", 5000)
	b.assistant(10)
	placeholder := []Part{{Type: PartText, Text: "[tool output cleared: ~5000 tokens; original in entry " + res.ID + "]"}}
	b.add(&Entry{Kind: KindContextEdit, Edit: &ContextEdit{Strategy: "mask", TokensFreed: 4980, FirstChangedID: res.ID,
		Edits: []Edit{{TargetID: res.ID, Content: placeholder}}}})
	b.user(10)

	c := BuildContext(b.path())
	if got := roles(c.Messages); got != "uatau" {
		t.Fatalf("roles %q: an edit must not add or remove messages", got)
	}
	edited := c.Messages[2]
	if edited == res.Message || edited.Text() != placeholder[0].Text || edited.ToolCallID != call || edited.Role != RoleToolResult {
		t.Fatalf("edited message %+v", edited)
	}
	if res.Message.Text() == placeholder[0].Text || res.Message.Tokens() != 5000 {
		t.Fatal("the stored message was changed")
	}
	if got := Measure(c).Tokens; got > 100 {
		t.Fatalf("the edited context measures %d tokens", got)
	}
	orig := BuildOriginalContext(b.path())
	if orig.Messages[2] != res.Message {
		t.Fatal("the original context must show the stored message")
	}

	// A later edit of the same entry wins.
	b.add(&Entry{Kind: KindContextEdit, Edit: &ContextEdit{Strategy: "truncate",
		Edits: []Edit{{TargetID: res.ID, Content: []Part{{Type: PartText, Text: "second"}}}}}})
	if got := BuildContext(b.path()).Messages[2].Text(); got != "second" {
		t.Fatalf("later edit: %q", got)
	}
}

// The planner measures the context as edited: a pruned tool result no
// longer counts against the kept budget.
func TestPlanUsesEditedSizes(t *testing.T) {
	var b builder
	for i := 0; i < 4; i++ {
		b.user(3000)
		b.assistant(3000)
	}
	b.user(10)
	call := b.call("bash", `{"command":"cat big.log"}`)
	res := b.result(call, "bash", 30000)
	b.assistant(10)
	before, err := PlanCompaction(b.path(), PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b.add(&Entry{Kind: KindContextEdit, Edit: &ContextEdit{Strategy: "prune",
		Edits: []Edit{{TargetID: res.ID, Content: []Part{{Type: PartText, Text: strings.Repeat("x", 40)}}}}}})
	after, err := PlanCompaction(b.path(), PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.TokensBefore >= before.TokensBefore-29000 {
		t.Fatalf("tokens before %d -> %d: the edit was not counted", before.TokensBefore, after.TokensBefore)
	}
	if after.FirstKeptIndex >= before.FirstKeptIndex {
		t.Fatalf("cut %d -> %d: with the big result cleared, more history fits in the kept part", before.FirstKeptIndex, after.FirstKeptIndex)
	}
	if want := Measure(BuildContext(b.path())); after.Usage != want {
		t.Fatalf("plan usage %+v, Measure %+v", after.Usage, want)
	}
}

// Usage reported before a context edit measured the context the edit then
// shrank: Measure takes the pass's savings off it. Usage reported after
// the edit is taken as is.
func TestMeasureAfterContextEdit(t *testing.T) {
	var b builder
	b.user(100)
	call := b.call("bash", `{"command":"cat big.log"}`)
	res := b.result(call, "bash", 12000)
	a := b.assistant(100)
	a.Message.Usage = &Usage{Input: 50000, Output: 100}
	b.add(&Entry{Kind: KindContextEdit, Edit: &ContextEdit{Strategy: "mask", TokensFreed: 11990,
		Edits: []Edit{{TargetID: res.ID, Content: []Part{{Type: PartText, Text: "[cleared]"}}}}}})
	b.user(200)
	u := Measure(BuildContext(b.path()))
	if u.UsageTokens != 50100-11990 || u.TrailingTokens != 200 {
		t.Fatalf("usage after the edit %+v, want %d + 200", u, 50100-11990)
	}
	p, err := PlanCompaction(b.path(), PlanOptions{KeepRecentTokens: 100})
	if err != nil {
		t.Fatal(err)
	}
	if p.Usage != u {
		t.Fatalf("plan usage %+v, Measure %+v", p.Usage, u)
	}
	a2 := b.assistant(50)
	a2.Message.Usage = &Usage{Input: 38500, Output: 50}
	if u := Measure(BuildContext(b.path())); u.UsageTokens != 38550 || u.TrailingTokens != 0 {
		t.Fatalf("fresh usage after the edit %+v", u)
	}
}
