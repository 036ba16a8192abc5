package compact

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// pinSession is a history of three turns, each about 4,000 tokens, whose
// first turn reads a file.
func pinSession() (*builder, map[string]string) {
	var b builder
	ids := map[string]string{}
	ids["ask"] = b.msg(TextMessage(RoleUser, "Keep the API stable: never rename exported functions. "+strings.Repeat("x", 400))).ID
	call := b.call("read", `{"path":"api.go"}`)
	ids["call"] = b.entries[len(b.entries)-1].ID
	ids["result"] = b.result(call, "read", 3000).ID
	ids["answer"] = b.assistant(500).ID
	b.user(100)
	b.result(b.call("read", `{"path":"main.go"}`), "read", 4000)
	b.assistant(100)
	b.user(100)
	b.result(b.call("bash", `{"command":"go vet"}`), "bash", 4000)
	ids["last"] = b.assistant(100).ID
	return &b, ids
}

func contextIDs(c *Context) []string { return c.EntryIDs }

func TestPinLabels(t *testing.T) {
	ctx := context.Background()
	b, ids := pinSession()
	log := NewSliceLog(b.path()...)
	// An entry labelled before keeps its label inside the pin.
	if err := log.Append(ctx, &Entry{Kind: KindLabel, Meta: &EntryMeta{TargetID: ids["answer"], Label: "checkpoint"}}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{ids["ask"], ids["answer"]} {
		if err := Pin(ctx, log, id); err != nil {
			t.Fatal(err)
		}
	}
	n := len(log.Entries())
	if err := Pin(ctx, log, ids["ask"]); err != nil || len(log.Entries()) != n {
		t.Errorf("pinning twice wrote %d entries, err %v", len(log.Entries())-n, err)
	}
	labels := Labels(log.Path())
	if labels[ids["ask"]] != "pinned" || labels[ids["answer"]] != "pinned: checkpoint" {
		t.Errorf("labels = %q", labels)
	}
	if ok, err := Unpin(ctx, log, ids["answer"]); err != nil || !ok {
		t.Fatalf("Unpin = %v, %v", ok, err)
	}
	if got := Labels(log.Path())[ids["answer"]]; got != "checkpoint" {
		t.Errorf("label after unpin = %q, want the old label back", got)
	}
	if ok, _ := Unpin(ctx, log, ids["answer"]); ok {
		t.Error("Unpin of an entry not pinned reported a pin")
	}
	if _, ok := Labels(log.Path())[ids["ask"]]; !ok {
		t.Error("the other pin was undone")
	}

	// Errors: unknown ids and entries that are no messages.
	if err := Pin(ctx, log, "nope"); !errors.Is(err, ErrNoEntry) {
		t.Errorf("Pin(unknown) = %v, want ErrNoEntry", err)
	}
	if err := Pin(ctx, log, log.Path()[len(log.Path())-1].ID); !errors.Is(err, ErrNotMessage) {
		t.Errorf("Pin(label entry) = %v, want ErrNotMessage", err)
	}
}

func TestPinGroup(t *testing.T) {
	var b builder
	b.user(10)
	// One assistant message with two calls, then both results.
	m := &Message{Role: RoleAssistant, StopReason: StopToolUse, Content: []Part{
		{Type: PartToolCall, ToolCall: &ToolCall{ID: "c1", Name: "read", Arguments: []byte(`{"path":"a"}`)}},
		{Type: PartToolCall, ToolCall: &ToolCall{ID: "c2", Name: "read", Arguments: []byte(`{"path":"b"}`)}},
	}}
	call := b.msg(m).ID
	r1 := b.result("c1", "read", 10).ID
	b.meta(KindThinkingLevelChange)
	r2 := b.result("c2", "read", 10).ID
	after := b.assistant(10).ID
	orphan := b.result("gone", "read", 10).ID
	tests := []struct {
		name string
		id   string
		want []string
	}{
		{"call", call, []string{call, r1, r2}},
		{"first result", r1, []string{call, r1, r2}},
		{"second result", r2, []string{call, r1, r2}},
		{"plain", after, []string{after}},
		{"orphan result", orphan, []string{orphan}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PinGroup(b.path(), tt.id)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("PinGroup = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCompactKeepsPinnedMessages(t *testing.T) {
	ctx := context.Background()
	b, ids := pinSession()
	log := NewSliceLog(b.path()...)
	if err := Pin(ctx, log, ids["ask"]); err != nil {
		t.Fatal(err)
	}
	// Pinning the result pins its call with it.
	if err := Pin(ctx, log, ids["result"]); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	eng := &Engine{Summarizer: rec, KeepRecentTokens: 4500}
	res, err := eng.Compact(ctx, log, Request{})
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range rec.reqs {
		for _, m := range req.Messages {
			if strings.HasPrefix(m.Text(), "Keep the API stable") || m.ToolCallID == "call2" {
				t.Errorf("the summarizer was given a pinned message: %.40q", m.Text())
			}
		}
	}
	if got := strings.Join(res.Plan.PinnedIDs, ","); got != ids["ask"]+","+ids["call"]+","+ids["result"] {
		t.Errorf("Plan.PinnedIDs = %s", got)
	}
	c := BuildContext(log.Path())
	got := contextIDs(c)
	want := []string{res.Entry.ID, ids["ask"], ids["call"], ids["result"]}
	if len(got) < 5 || strings.Join(got[:4], ",") != strings.Join(want, ",") {
		t.Fatalf("context = %v, want the summary then the pinned %v", got, want[1:])
	}
	if got[4] != res.Plan.FirstKeptID {
		t.Errorf("after the pinned messages comes %s, want the kept part from %s", got[4], res.Plan.FirstKeptID)
	}
	for i := range c.Messages {
		if c.IsPinned(i) != (i >= 1 && i <= 3) {
			t.Errorf("IsPinned(%d) = %v", i, c.IsPinned(i))
		}
	}
	// The summary holds a copy of the pinned messages for readers
	// without pins; the context shows the messages, not the copy.
	if !strings.Contains(res.Entry.Compaction.Summary, pinnedOpen) || !strings.Contains(res.Entry.Compaction.Summary, "Keep the API stable") {
		t.Errorf("the recorded summary has no copy of the pinned messages:\n%s", res.Entry.Compaction.Summary)
	}
	if strings.Contains(c.Messages[0].Text(), pinnedOpen) {
		t.Error("the context's summary still holds the copy while the pins hold")
	}
	if s := c.Messages[0].Text(); !strings.Contains(s, "<read-files>\nmain.go") || strings.Contains(s, "api.go") {
		t.Errorf("the summary's file lists are wrong (main.go summarized, api.go pinned):\n%s", s)
	}
	if s := res.Entry.Compaction.Summary; strings.Index(s, pinnedClose) > strings.Index(s, "<read-files>") {
		t.Error("the copy of the pinned messages is not before the file lists")
	}
	// The pinned messages count in the kept part.
	kept := 0
	for _, m := range c.Messages[1:] {
		kept += m.Tokens()
	}
	if res.Plan.KeptTokens != kept {
		t.Errorf("KeptTokens = %d, want %d (pinned and kept messages)", res.Plan.KeptTokens, kept)
	}

	// A second compaction keeps them still, and the previous summary it
	// passes on has no copy.
	for i := 0; i < 3; i++ {
		log.AppendMessage(ctx, TextMessage(RoleUser, strings.Repeat("n", 8000)))
		a := TextMessage(RoleAssistant, "done")
		a.StopReason = StopEnd
		log.AppendMessage(ctx, a)
	}
	rec.reqs = nil
	res2, err := eng.Compact(ctx, log, Request{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(rec.reqs[0].PreviousSummary, pinnedOpen) {
		t.Error("the previous summary handed on still holds the copy of the pinned messages")
	}
	c = BuildContext(log.Path())
	if got := strings.Join(contextIDs(c)[:4], ","); got != strings.Join([]string{res2.Entry.ID, ids["ask"], ids["call"], ids["result"]}, ",") {
		t.Errorf("after a second compaction the context starts %s", got)
	}

	// Unpinned, the message leaves the context, and the summary shows
	// its copy again, so nothing is lost.
	if _, err := Unpin(ctx, log, ids["ask"]); err != nil {
		t.Fatal(err)
	}
	c = BuildContext(log.Path())
	if contextIDs(c)[1] != ids["call"] {
		t.Errorf("after unpinning, the context is %v", contextIDs(c)[:3])
	}
	if !strings.Contains(c.Messages[0].Text(), "Keep the API stable") {
		t.Error("after unpinning, the summary does not show the message's copy")
	}
}

func TestPinCountsFirstInKeptBudget(t *testing.T) {
	ctx := context.Background()
	b, ids := pinSession()
	plain, err := PlanCompaction(b.path(), PlanOptions{KeepRecentTokens: 4500})
	if err != nil {
		t.Fatal(err)
	}
	log := NewSliceLog(b.path()...)
	if err := Pin(ctx, log, ids["result"]); err != nil {
		t.Fatal(err)
	}
	pinned, err := PlanCompaction(log.Path(), PlanOptions{KeepRecentTokens: 4500})
	if err != nil {
		t.Fatal(err)
	}
	// The 3,000-token pinned result takes its share of the budget: the
	// recent part kept verbatim shrinks.
	if pinned.FirstKeptIndex <= plain.FirstKeptIndex {
		t.Errorf("cut at %d with a pin, %d without: the pin did not count in the budget", pinned.FirstKeptIndex, plain.FirstKeptIndex)
	}
	if pinned.KeptTokens < 3000 {
		t.Errorf("KeptTokens = %d, want the pinned result counted", pinned.KeptTokens)
	}
}

func TestStrategiesLeavePinnedMessages(t *testing.T) {
	ctx := context.Background()
	var b builder
	b.user(10)
	big := b.result(b.call("bash", `{"command":"make"}`), "bash", 5000).ID
	other := b.result(b.call("bash", `{"command":"make"}`), "bash", 5000).ID
	for i := 0; i < 4; i++ {
		b.user(10)
		b.result(b.call("bash", `{"command":"ls"}`), "bash", 10)
		b.assistant(10)
	}
	log := NewSliceLog(b.path()...)
	if err := Pin(ctx, log, big); err != nil {
		t.Fatal(err)
	}
	ce, err := Mask{Turns: 1}.Plan(log.Path(), StrategyEnv{})
	if err != nil || ce == nil {
		t.Fatalf("Mask.Plan = %v, %v", ce, err)
	}
	for _, ed := range ce.Edits {
		if ed.TargetID == big {
			t.Error("Mask edited a pinned tool result")
		}
	}
	if !strings.Contains(targets(ce), other) {
		t.Errorf("Mask did not edit the unpinned result: %s", targets(ce))
	}
	// Pinning a message a pass had shortened shows it whole again, and
	// the measure counts it again.
	if err := log.Append(ctx, NewContextEditEntry(ce)); err != nil {
		t.Fatal(err)
	}
	a := TextMessage(RoleAssistant, "ok")
	a.StopReason, a.Usage = StopEnd, &Usage{Input: 1000}
	log.AppendMessage(ctx, a)
	before := Measure(BuildContext(log.Path()))
	if err := Pin(ctx, log, other); err != nil {
		t.Fatal(err)
	}
	c := BuildContext(log.Path())
	for i, id := range c.EntryIDs {
		if id == other && c.Messages[i].Tokens() < 5000 {
			t.Errorf("the pinned result is still shortened: %d tokens", c.Messages[i].Tokens())
		}
	}
	after := Measure(c)
	if grown := after.Tokens - before.Tokens; grown < 4900 {
		t.Errorf("the measure grew by %d tokens when a 5,000-token result was shown whole", grown)
	}
	if p := measurePath(log.Path(), -1, tokenSizer(log.Path(), Pinned(log.Path()))); p.Tokens != after.Tokens {
		t.Errorf("measurePath = %d, Measure = %d", p.Tokens, after.Tokens)
	}
}

func targets(ce *ContextEdit) string {
	var s []string
	for _, ed := range ce.Edits {
		s = append(s, ed.TargetID)
	}
	return strings.Join(s, ",")
}

func TestMeasureCountsPinAfterUsage(t *testing.T) {
	ctx := context.Background()
	b, ids := pinSession()
	log := NewSliceLog(b.path()...)
	eng := &Engine{Summarizer: &recorder{}, KeepRecentTokens: 4500}
	if _, err := eng.Compact(ctx, log, Request{}); err != nil {
		t.Fatal(err)
	}
	a := TextMessage(RoleAssistant, "ok")
	a.StopReason, a.Usage = StopEnd, &Usage{Input: 6000}
	log.AppendMessage(ctx, a)
	before := Measure(BuildContext(log.Path())).Tokens
	if err := Pin(ctx, log, ids["result"]); err != nil {
		t.Fatal(err)
	}
	after := Measure(BuildContext(log.Path())).Tokens
	if after-before < 3000 {
		t.Errorf("pinning a summarized 3,000-token result after the last usage grew the measure by %d", after-before)
	}
	plan, err := PlanCompaction(log.Path(), PlanOptions{KeepRecentTokens: 100})
	if err == nil && plan.TokensBefore != after {
		t.Errorf("the plan measures %d, Measure %d", plan.TokensBefore, after)
	}
}
