package compact

import (
	"errors"
	"strings"
	"testing"
)

func roles(msgs []*Message) string {
	s := ""
	for _, m := range msgs {
		switch m.Role {
		case RoleUser:
			s += "u"
		case RoleAssistant:
			s += "a"
		case RoleToolResult:
			s += "t"
		case RoleCompactionSummary:
			s += "S"
		case RoleBranchSummary:
			s += "B"
		case RoleCustom:
			s += "c"
		default:
			s += "?"
		}
	}
	return s
}

func TestBuildContext(t *testing.T) {
	var b builder
	b.user(1)                       // e1
	b.assistant(1)                  // e2
	u2 := b.user(1)                 // e3
	b.meta(KindThinkingLevelChange) // e4
	b.assistant(1)                  // e5
	b.compaction("first", u2.ID)    // e6
	u3 := b.user(1)                 // e7
	b.add(&Entry{Kind: KindModelChange, Meta: &EntryMeta{Provider: "openai", ModelID: "gpt-5"}})
	b.assistant(1)                // e9
	b.compaction("second", u3.ID) // e10
	b.add(&Entry{Kind: KindCustomMessage, Message: TextMessage(RoleCustom, "note")})
	b.user(1)

	c := BuildContext(b.path())
	if got := roles(c.Messages); got != "Suacu" {
		t.Fatalf("context roles %q, want summary, kept u3 a, then custom u", got)
	}
	if c.Messages[0].Text() != "second" || c.EntryIDs[0] != "e10" {
		t.Fatalf("first message %q from %s, want the latest summary", c.Messages[0].Text(), c.EntryIDs[0])
	}
	if c.FirstAfterCompaction != 3 {
		t.Errorf("FirstAfterCompaction = %d, want 3", c.FirstAfterCompaction)
	}
	if c.Model != "gpt-5" || c.Provider != "openai" || c.ThinkingLevel != "high" {
		t.Errorf("model %s/%s thinking %s", c.Provider, c.Model, c.ThinkingLevel)
	}

	// The same entries without compactions: everything in order.
	var plain builder
	plain.user(1)
	plain.meta(KindLabel)
	r := plain.result("x", "bash", 1)
	_ = r
	plain.add(&Entry{Kind: KindBranchSummary, Message: TextMessage(RoleBranchSummary, "branch")})
	if got := roles(BuildContext(plain.path()).Messages); got != "utB" {
		t.Fatalf("roles %q, want utB", got)
	}
}

func TestPathFollowsBranches(t *testing.T) {
	root := &Entry{ID: "r", Kind: KindMessage, Message: TextMessage(RoleUser, "root")}
	a := &Entry{ID: "a", ParentID: "r", Kind: KindMessage, Message: TextMessage(RoleAssistant, "a")}
	b1 := &Entry{ID: "b1", ParentID: "a", Kind: KindMessage, Message: TextMessage(RoleUser, "first branch")}
	b2 := &Entry{ID: "b2", ParentID: "a", Kind: KindMessage, Message: TextMessage(RoleUser, "second branch")}
	entries := []*Entry{root, a, b1, b2}

	p, err := Path(entries, "")
	if err != nil || len(p) != 3 || p[2] != b2 {
		t.Fatalf("default leaf path %v %v, want r a b2", p, err)
	}
	p, err = Path(entries, "b1")
	if err != nil || len(p) != 3 || p[2] != b1 {
		t.Fatalf("path to b1 %v %v", p, err)
	}
	if _, err := Path(entries, "nope"); !errors.Is(err, ErrNoEntry) {
		t.Fatalf("unknown leaf: %v, want ErrNoEntry", err)
	}
	loop := []*Entry{{ID: "x", ParentID: "y"}, {ID: "y", ParentID: "x"}}
	if _, err := Path(loop, "x"); err == nil {
		t.Fatal("a parent cycle must be an error")
	}

	m := NewSliceLog(entries...)
	if err := m.Branch("b1"); err != nil {
		t.Fatal(err)
	}
	if got := m.Path(); len(got) != 3 || got[2] != b1 {
		t.Fatalf("memory path after branch: %v", got)
	}
}

func assistantWith(u *Usage, stop StopReason) *Message {
	m := TextMessage(RoleAssistant, "answer")
	m.Usage, m.StopReason = u, stop
	return m
}

// failedCall is an aborted assistant reply that asked for tool call id.
func failedCall(id string) *Message {
	m := &Message{Role: RoleAssistant, StopReason: StopAborted, Content: []Part{
		{Type: PartText, Text: string(make([]byte, 4000))},
		{Type: PartToolCall, ToolCall: &ToolCall{ID: id, Name: "read", Arguments: []byte(`{"path":"a"}`)}},
	}}
	return m
}

// result is a tool result of n tokens answering call id.
func result(id string, n int) *Message {
	m := TextMessage(RoleToolResult, string(make([]byte, n*4)))
	m.ToolCallID = id
	return m
}

func TestMeasure(t *testing.T) {
	text := func(role Role, n int) *Message { return TextMessage(role, string(make([]byte, n*4))) }
	tests := []struct {
		name  string
		msgs  []*Message
		first int
		want  ContextUsage
	}{
		{"estimate only", []*Message{text(RoleUser, 10), text(RoleAssistant, 5)}, 0,
			ContextUsage{Tokens: 15, TrailingTokens: 15, LastUsageIndex: -1}},
		{"usage plus trailing", []*Message{text(RoleUser, 10), assistantWith(&Usage{Input: 100, Output: 20, CacheRead: 300, CacheWrite: 5}, StopEnd), text(RoleUser, 7)}, 0,
			ContextUsage{Tokens: 432, UsageTokens: 425, TrailingTokens: 7, LastUsageIndex: 1}},
		{"total preferred", []*Message{assistantWith(&Usage{Input: 1, Output: 1, Total: 999}, StopToolUse)}, 0,
			ContextUsage{Tokens: 999, UsageTokens: 999, LastUsageIndex: 0}},
		// An aborted or failed reply is neither a report nor sent to the
		// model again (ForModel drops it, as pi does): it counts nothing.
		// Measure used to count its text, 2 tokens each here.
		{"aborted and error not sent", []*Message{assistantWith(&Usage{Input: 50}, StopEnd), assistantWith(&Usage{Input: 0}, StopAborted), assistantWith(&Usage{Input: 70}, StopError)}, 0,
			ContextUsage{Tokens: 50, UsageTokens: 50, LastUsageIndex: 0}},
		{"failed reply with its tool result not sent", []*Message{assistantWith(&Usage{Input: 50}, StopEnd), text(RoleUser, 3), failedCall("c1"), result("c1", 40), text(RoleUser, 2), result("c2", 9)}, 0,
			ContextUsage{Tokens: 50 + 3 + 2 + 9, UsageTokens: 50, TrailingTokens: 3 + 2 + 9, LastUsageIndex: 0}},
		{"excluded shell command not sent", []*Message{text(RoleUser, 10), {Role: RoleBash, Meta: &MessageMeta{Command: "env", Output: string(make([]byte, 400)), ExcludeFromContext: true}},
			{Role: RoleBash, Meta: &MessageMeta{Command: "ls", Output: "ab"}}}, 0,
			ContextUsage{Tokens: 11, TrailingTokens: 11, LastUsageIndex: -1}},
		{"usage before compaction ignored", []*Message{text(RoleCompactionSummary, 3), assistantWith(&Usage{Input: 5000}, StopEnd), text(RoleUser, 4)}, 2,
			ContextUsage{Tokens: 3 + 2 + 4, TrailingTokens: 9, LastUsageIndex: -1}},
	}
	for _, tt := range tests {
		got := Measure(&Context{Messages: tt.msgs, FirstAfterCompaction: tt.first})
		if got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestMeterMatchesMeasure(t *testing.T) {
	var all []*Message
	var m Meter
	for i := 0; i < 200; i++ {
		var msg *Message
		switch i % 5 {
		case 0:
			msg = TextMessage(RoleUser, string(make([]byte, i)))
		case 1:
			msg = assistantWith(&Usage{Input: 1000 + i, Output: i}, StopToolUse)
		case 2:
			msg = TextMessage(RoleToolResult, string(make([]byte, 3*i)))
		case 3:
			msg = assistantWith(&Usage{Input: 5}, StopAborted)
		default:
			msg = TextMessage(RoleAssistant, "ok")
		}
		all = append(all, msg)
		m.Add(msg)
		want := Measure(&Context{Messages: all})
		if got := m.Usage(); got != want {
			t.Fatalf("after %d messages: meter %+v, measure %+v", i+1, got, want)
		}
	}
	var zero Meter
	if u := zero.Usage(); u.LastUsageIndex != -1 || u.Tokens != 0 {
		t.Fatalf("zero meter %+v", u)
	}
	n := NewMeter(&Context{Messages: all})
	if n.Usage() != Measure(&Context{Messages: all}) {
		t.Fatal("NewMeter differs from Measure")
	}
}

func TestForModel(t *testing.T) {
	exit := 2
	in := []*Message{
		TextMessage(RoleCompactionSummary, "## Goal\nship it"),
		TextMessage(RoleUser, "hi"),
		{Role: RoleBash, Meta: &MessageMeta{Command: "make", Output: "boom", ExitCode: &exit}},
		{Role: RoleBash, Meta: &MessageMeta{Command: "secret", ExcludeFromContext: true}},
		{Role: RoleCustom, Content: []Part{{Type: PartText, Text: "from a hook"}}, Meta: &MessageMeta{CustomType: "note"}},
		TextMessage(RoleBranchSummary, "tried another way"),
		TextMessage(RoleAssistant, "ok"),
		failedCall("c1"),
		result("c1", 3),
		{Role: RoleAssistant, StopReason: StopError},
		TextMessage(RoleUser, "again"),
	}
	out := ForModel(in)
	// The failed replies are dropped, as pi drops them, and with them the
	// result of the call that never ran: a provider refuses a result
	// without its call. ForModel used to send them.
	if got := roles(out); got != "uuuuuau" {
		t.Fatalf("roles %q, want five user messages, the assistant and the user", got)
	}
	if s := out[0].Text(); !strings.HasPrefix(s, SummaryPreface) || !strings.Contains(s, "<summary>\n## Goal\nship it\n</summary>") {
		t.Fatalf("summary message %q", s)
	}
	if s := out[2].Text(); !strings.Contains(s, "make") || !strings.Contains(s, "boom") || !strings.Contains(s, "Exit status: 2") {
		t.Fatalf("bash message %q", s)
	}
	if in[4].Role != RoleCustom {
		t.Fatal("ForModel modified its input")
	}
}

// TestMeterCountsWhatForModelSends: the meter counts, message by message,
// exactly the messages ForModel sends, whether they are added one at a
// time or measured at once; an aborted reply, the result of its call and
// a shell command excluded from the context are in neither.
func TestMeterCountsWhatForModelSends(t *testing.T) {
	text := func(role Role, n int) *Message { return TextMessage(role, string(make([]byte, n))) }
	excluded := &Message{Role: RoleBash, Meta: &MessageMeta{Command: "env", Output: "SECRET=1", ExcludeFromContext: true}}
	msgs := []*Message{
		text(RoleUser, 13), text(RoleAssistant, 7), failedCall("c1"), result("c1", 30), result("c9", 3),
		excluded, text(RoleUser, 5), {Role: RoleAssistant, StopReason: StopError}, text(RoleUser, 1),
	}
	want := 0
	for _, m := range ForModel(msgs) {
		want += m.Tokens()
	}
	if want != 4+2+3+2+1 {
		t.Fatalf("ForModel sends %d tokens, want %d", want, 4+2+3+2+1)
	}
	var m Meter
	for _, msg := range msgs {
		m.Add(msg)
	}
	if got := m.Tokens(); got != want {
		t.Errorf("Meter.Add counts %d tokens, ForModel sends %d", got, want)
	}
	if got := Measure(&Context{Messages: msgs}).Tokens; got != want {
		t.Errorf("Measure counts %d tokens, ForModel sends %d", got, want)
	}
}
