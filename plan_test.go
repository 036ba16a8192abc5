package compact

import (
	"errors"
	"strings"
	"testing"
)

// checkPairing fails when a kept tool result's call is not kept too.
func checkPairing(t *testing.T, p *Plan) {
	t.Helper()
	calls := map[string]bool{}
	for _, e := range p.Path[p.FirstKeptIndex:] {
		if !e.IsContextMessage() {
			continue
		}
		for _, c := range e.Message.ToolCalls() {
			calls[c.ID] = true
		}
		if e.Message.Role == RoleToolResult && !calls[e.Message.ToolCallID] {
			t.Errorf("kept tool result %s lost its call %s", e.ID, e.Message.ToolCallID)
		}
	}
	if k := p.Path[p.FirstKeptIndex]; k.IsContextMessage() && k.Message.Role == RoleToolResult {
		t.Errorf("cut at a tool result (%s)", k.ID)
	}
}

func TestPlanCutsAtTurnBoundary(t *testing.T) {
	var b builder
	for i := 0; i < 6; i++ {
		b.user(1000)
		b.assistant(1000)
	}
	p, err := PlanCompaction(b.path(), PlanOptions{KeepRecentTokens: 3500})
	if err != nil {
		t.Fatal(err)
	}
	// Walking back: 1000+1000+1000+1000 >= 3500 at the 4th newest message
	// (a user message, index 8), which is a valid cut.
	if p.FirstKeptIndex != 8 || p.IsSplitTurn {
		t.Fatalf("cut at %d split=%v, want 8 without split", p.FirstKeptIndex, p.IsSplitTurn)
	}
	if len(p.Messages) != 8 || len(p.TurnPrefix) != 0 {
		t.Fatalf("summarize %d messages + %d prefix, want 8 + 0", len(p.Messages), len(p.TurnPrefix))
	}
	if p.KeptTokens != 4000 {
		t.Errorf("KeptTokens = %d, want 4000", p.KeptTokens)
	}
	if p.TokensBefore != 12000 {
		t.Errorf("TokensBefore = %d, want 12000", p.TokensBefore)
	}
	checkPairing(t, p)
}

func TestPlanNeverCutsAtToolResult(t *testing.T) {
	for keep := 100; keep <= 9000; keep += 250 {
		var b builder
		b.user(50)
		for i := 0; i < 8; i++ {
			id := b.call("bash", `{"command":"make"}`)
			b.result(id, "bash", 1000)
		}
		b.assistant(50)
		b.user(50)
		id := b.call("read", `{"path":"a.go"}`)
		b.result(id, "read", 700)
		b.assistant(40)
		p, err := PlanCompaction(b.path(), PlanOptions{KeepRecentTokens: keep})
		if errors.Is(err, ErrNothingToCompact) {
			continue
		}
		if err != nil {
			t.Fatalf("keep %d: %v", keep, err)
		}
		checkPairing(t, p)
	}
}

func TestPlanMetadataStaysWithKeptPart(t *testing.T) {
	var b builder
	b.user(1000)
	b.assistant(1000)
	meta1 := b.meta(KindThinkingLevelChange)
	b.meta(KindModelChange)
	b.user(1000)
	b.assistant(1000)
	p, err := PlanCompaction(b.path(), PlanOptions{KeepRecentTokens: 2000})
	if err != nil {
		t.Fatal(err)
	}
	if p.FirstKeptID != meta1.ID {
		t.Fatalf("first kept %s (%s), want the metadata entry %s", p.FirstKeptID, p.Path[p.FirstKeptIndex].Kind, meta1.ID)
	}
	if p.IsSplitTurn {
		t.Fatal("a cut before a user message is not a split turn")
	}
	if len(p.Messages) != 2 {
		t.Fatalf("summarize %d messages, want 2", len(p.Messages))
	}
}

func TestPlanSplitTurn(t *testing.T) {
	var b builder
	b.user(500)
	b.assistant(500)
	turn := b.user(100)
	id := b.call("bash", `{"command":"go test ./..."}`)
	b.result(id, "bash", 3000)
	id = b.call("bash", `{"command":"go vet ./..."}`)
	b.result(id, "bash", 3000)
	b.assistant(100)
	p, err := PlanCompaction(b.path(), PlanOptions{KeepRecentTokens: 3000})
	if err != nil {
		t.Fatal(err)
	}
	if !p.IsSplitTurn || p.TurnStartIndex != indexOf(p.Path, turn.ID) {
		t.Fatalf("split=%v turnStart=%d, want split at %d", p.IsSplitTurn, p.TurnStartIndex, indexOf(p.Path, turn.ID))
	}
	if len(p.Messages) != 2 {
		t.Errorf("history has %d messages, want the 2 before the turn", len(p.Messages))
	}
	if len(p.TurnPrefix) == 0 || p.TurnPrefix[0] != turn.Message {
		t.Errorf("turn prefix should start with the turn's user message")
	}
	if got := p.Path[p.FirstKeptIndex].Message.Role; got != RoleAssistant {
		t.Errorf("cut at role %s, want assistant", got)
	}
	checkPairing(t, p)
}

// pi bugs #7201/#6879: the newest tool result alone is larger than the
// keep budget. pi keeps everything and summarizes nothing; the planner
// cuts at the last valid point instead.
func TestPlanHugeNewestToolResult(t *testing.T) {
	var b builder
	b.user(100)
	b.assistant(100)
	b.user(100)
	b.assistant(100)
	b.user(100)
	call := b.call("bash", `{"command":"cat huge.log"}`)
	b.result(call, "bash", 30000)
	p, err := PlanCompaction(b.path(), PlanOptions{KeepRecentTokens: 20000})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	if p.MessagesToSummarize() == 0 {
		t.Fatal("nothing summarized")
	}
	if k := p.Path[p.FirstKeptIndex].Message; k.Role != RoleAssistant || len(k.ToolCalls()) != 1 {
		t.Fatalf("want the cut at the tool call (last valid point), got %s", k.Role)
	}
	if len(p.Messages) != 4 || len(p.TurnPrefix) != 1 {
		t.Fatalf("history %d + prefix %d, want 4 + 1", len(p.Messages), len(p.TurnPrefix))
	}
	checkPairing(t, p)
}

func TestPlanNothingToCompact(t *testing.T) {
	small := func() []*Entry {
		var b builder
		b.user(10)
		b.assistant(10)
		return b.path()
	}
	justCompacted := func() []*Entry {
		var b builder
		b.user(10)
		a := b.assistant(10)
		b.compaction("s", a.ID)
		return b.path()
	}
	keptOnly := func() []*Entry {
		var b builder
		b.user(30000)
		u := b.user(10)
		b.assistant(10)
		b.compaction("s", u.ID)
		b.user(10)
		return b.path()
	}
	for name, path := range map[string][]*Entry{"empty": nil, "small": small(), "just compacted": justCompacted(), "kept only": keptOnly()} {
		_, err := PlanCompaction(path, PlanOptions{})
		if !errors.Is(err, ErrNothingToCompact) {
			t.Errorf("%s: err = %v, want ErrNothingToCompact", name, err)
		}
	}
}

// pi bug #2608: the second compaction must summarize what the first kept.
func TestPlanSecondCompactionCoversKeptMessages(t *testing.T) {
	var b builder
	b.user(5000)
	b.assistant(5000)
	kept := b.user(5000)
	keptA := b.assistant(5000)
	comp := b.compaction("## Goal\nfirst\n\n<read-files>\nold.go\n</read-files>", kept.ID)
	comp.Compaction.ReadFiles = []string{"old.go"}
	comp.Compaction.ModifiedFiles = []string{"mod.go"}
	for i := 0; i < 4; i++ {
		b.user(5000)
		b.assistant(5000)
	}
	p, err := PlanCompaction(b.path(), PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.SpanStart != indexOf(p.Path, kept.ID) {
		t.Fatalf("span starts at %d, want the first kept entry %d", p.SpanStart, indexOf(p.Path, kept.ID))
	}
	if len(p.Messages) < 2 || p.Messages[0] != kept.Message || p.Messages[1] != keptA.Message {
		t.Fatal("the messages kept by the first compaction are not summarized by the second")
	}
	for _, m := range p.Messages {
		if m.Role == RoleCompactionSummary {
			t.Fatal("the previous summary must not be summarized as a message")
		}
	}
	if p.PreviousSummary != "## Goal\nfirst" {
		t.Fatalf("previous summary %q, want it without file lists", p.PreviousSummary)
	}
	if strings.Join(p.ReadFiles, ",") != "old.go" || strings.Join(p.ModifiedFiles, ",") != "mod.go" {
		t.Fatalf("files %v %v, want the previous lists carried over", p.ReadFiles, p.ModifiedFiles)
	}
}

func TestPlanFileTracking(t *testing.T) {
	var b builder
	b.user(10)
	hook := b.compaction("hook summary", "")
	hook.Compaction.FromHook = true
	hook.Compaction.ReadFiles = []string{"/untrusted.go"}
	b.user(10)
	b.result(b.call("read", `{"path":"/p/a.go"}`), "read", 10)
	b.result(b.call("Read", `{"file_path":"/p/b.go"}`), "Read", 10)
	b.result(b.call("edit", `{"path":"/p/a.go","oldText":"x","newText":"y"}`), "edit", 10)
	b.result(b.call("write", `{"path":"/p/new.go","content":"package p"}`), "write", 10)
	b.result(b.call("MultiEdit", `{"file_path":"/p/c.go","edits":[]}`), "MultiEdit", 10)
	b.result(b.call("apply_patch", `{"input":"*** Begin Patch\n*** Update File: /p/d.go\n@@\n*** Add File: /p/e.go\n+x\n*** End Patch"}`), "apply_patch", 10)
	b.user(30000)
	b.assistant(10)
	p, err := PlanCompaction(b.path(), PlanOptions{KeepRecentTokens: 1000})
	if err != nil {
		t.Fatal(err)
	}
	wantRead := "/p/b.go"
	wantMod := "/p/a.go,/p/c.go,/p/d.go,/p/e.go,/p/new.go"
	if got := strings.Join(p.ReadFiles, ","); got != wantRead {
		t.Errorf("read files %s, want %s", got, wantRead)
	}
	if got := strings.Join(p.ModifiedFiles, ","); got != wantMod {
		t.Errorf("modified files %s, want %s", got, wantMod)
	}
}

func TestPlanTokensBeforeMatchesMeasure(t *testing.T) {
	var b builder
	b.user(3000)
	a := b.assistant(3000)
	a.Message.Usage = &Usage{Input: 9000, Output: 500}
	b.user(20000)
	b.assistant(100)
	p, err := PlanCompaction(b.path(), PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := 9500 + 20100; p.TokensBefore != want || p.Usage.UsageTokens != 9500 || p.Usage.TrailingTokens != 20100 {
		t.Fatalf("usage %+v, want %d = 9500 + 20100", p.Usage, want)
	}
}

// Right after a compaction a smaller keep budget still finds work: the
// kept part itself is summarized (what a forced compaction needs).
func TestPlanRightAfterCompactionWithSmallerBudget(t *testing.T) {
	var b builder
	b.user(1000)
	kept := b.user(5000)
	b.assistant(5000)
	b.user(5000)
	b.assistant(5000)
	b.compaction("first", kept.ID)
	if _, err := PlanCompaction(b.path(), PlanOptions{KeepRecentTokens: 20000}); !errors.Is(err, ErrNothingToCompact) {
		t.Fatalf("same budget: %v, want nothing to compact", err)
	}
	p, err := PlanCompaction(b.path(), PlanOptions{KeepRecentTokens: 8000})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Messages) != 2 || p.Messages[0] != kept.Message || p.PreviousSummary != "first" {
		t.Fatalf("summarize %d messages (prev %q), want the 2 oldest kept ones", len(p.Messages), p.PreviousSummary)
	}
}

func TestPlanUsageMatchesMeasureAroundCompactions(t *testing.T) {
	for _, usageAfter := range []bool{false, true} {
		var b builder
		b.user(3000)
		a := b.assistant(3000)
		a.Message.Usage = &Usage{Input: 7000} // before the compaction: ignored
		kept := b.user(3000)
		b.assistant(3000)
		b.compaction("s", kept.ID)
		b.user(30000)
		a2 := b.assistant(100)
		if usageAfter {
			a2.Message.Usage = &Usage{Input: 40000, Output: 100}
		}
		b.user(200)
		p, err := PlanCompaction(b.path(), PlanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if want := Measure(BuildContext(b.path())); p.Usage != want {
			t.Errorf("usage after compaction %v: plan %+v, Measure %+v", usageAfter, p.Usage, want)
		}
	}
}
