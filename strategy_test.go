package compact

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// estimateContext is the sum of the estimates of a context's messages.
func estimateContext(c *Context) int {
	n := 0
	for _, m := range c.Messages {
		n += m.Tokens()
	}
	return n
}

// withEdit returns path extended by a context_edit entry holding ce.
func withEdit(path []*Entry, ce *ContextEdit) []*Entry {
	e := NewContextEditEntry(ce)
	e.ID = fmt.Sprintf("edit%d", len(path))
	if len(path) > 0 {
		e.ParentID = path[len(path)-1].ID
	}
	out := make([]*Entry, len(path), len(path)+1)
	copy(out, path)
	return append(out, e)
}

// pairingProblems lists the tool results that follow no assistant
// message holding their call, and the tool calls with no result. Real
// sessions have some (a call cut short by an abort); a pass must not add
// any.
func pairingProblems(c *Context) []string {
	var problems []string
	calls := make(map[string]bool)
	results := make(map[string]bool)
	for _, m := range c.Messages {
		if m.Role == RoleToolResult {
			results[m.ToolCallID] = true
		}
	}
	for i, m := range c.Messages {
		switch m.Role {
		case RoleAssistant:
			for _, tc := range m.ToolCalls() {
				calls[tc.ID] = true
				if !results[tc.ID] {
					problems = append(problems, fmt.Sprintf("message %d (%s): tool call %s has no result", i, c.EntryIDs[i], tc.ID))
				}
			}
		case RoleToolResult:
			if !calls[m.ToolCallID] {
				problems = append(problems, fmt.Sprintf("message %d (%s): tool result %s follows no call", i, c.EntryIDs[i], m.ToolCallID))
			}
		}
	}
	return problems
}

// checkStrategy runs s on path twice and checks what every pass must
// hold: the same answer both times; edits that target messages of the
// current context (never a compaction summary), in context order, each
// freeing tokens; FirstChangedID the first target; applying the edit
// frees TokensFreed; call/result pairing as before; stored messages
// untouched. It returns the pass, nil when there is none.
func checkStrategy(tb testing.TB, s Strategy, path []*Entry, env StrategyEnv) *ContextEdit {
	tb.Helper()
	origBefore := BuildOriginalContext(path)
	texts := make([]string, len(origBefore.Messages))
	for i, m := range origBefore.Messages {
		texts[i] = fmt.Sprintf("%+v", m.Content)
	}
	ce, err := s.Plan(path, env)
	if err != nil {
		tb.Fatalf("%s: %v", s.Name(), err)
	}
	again, err := s.Plan(path, env)
	if err != nil {
		tb.Fatalf("%s: %v", s.Name(), err)
	}
	if !reflect.DeepEqual(ce, again) {
		tb.Fatalf("%s: two runs differ", s.Name())
	}
	if ce == nil {
		return nil
	}
	if ce.Strategy != s.Name() || len(ce.Edits) == 0 || ce.TokensFreed <= 0 {
		tb.Fatalf("%s: pass %q with %d edits freeing %d", s.Name(), ce.Strategy, len(ce.Edits), ce.TokensFreed)
	}
	before := BuildContext(path)
	pos := make(map[string]int, len(before.EntryIDs))
	for i, id := range before.EntryIDs {
		pos[id] = i
	}
	last := -1
	for _, ed := range ce.Edits {
		i, ok := pos[ed.TargetID]
		switch {
		case !ok:
			tb.Fatalf("%s: edit of %s, not in the context", s.Name(), ed.TargetID)
		case before.Compaction != nil && ed.TargetID == before.Compaction.ID:
			tb.Fatalf("%s: edit of the compaction summary", s.Name())
		case i <= last:
			tb.Fatalf("%s: edits out of context order at %s", s.Name(), ed.TargetID)
		}
		last = i
	}
	if ce.FirstChangedID != ce.Edits[0].TargetID {
		tb.Errorf("%s: first changed %s, want %s", s.Name(), ce.FirstChangedID, ce.Edits[0].TargetID)
	}

	after := BuildContext(withEdit(path, ce))
	if len(after.Messages) != len(before.Messages) {
		tb.Fatalf("%s: %d messages became %d", s.Name(), len(before.Messages), len(after.Messages))
	}
	for i := range after.Messages {
		b, a := before.Messages[i], after.Messages[i]
		if a.Role != b.Role || a.ToolCallID != b.ToolCallID || a.ToolName != b.ToolName || a.IsError != b.IsError {
			tb.Fatalf("%s: message %d changed role or pairing", s.Name(), i)
		}
	}
	slack := len(ce.Edits) // rounding allowance
	if got, want := estimateContext(before)-estimateContext(after), ce.TokensFreed; got < want-slack || got > want+slack {
		tb.Errorf("%s: estimate dropped by %d, pass says %d", s.Name(), got, want)
	}
	if mb, ma := Measure(before), Measure(after); mb.UsageTokens == 0 {
		if got := mb.Tokens - ma.Tokens; got < ce.TokensFreed-slack || got > ce.TokensFreed+slack {
			tb.Errorf("%s: Measure dropped by %d, pass says %d", s.Name(), got, ce.TokensFreed)
		}
	}
	if b, a := pairingProblems(before), pairingProblems(after); !reflect.DeepEqual(a, b) {
		tb.Errorf("%s: call/result pairing went from %v to %v", s.Name(), b, a)
	}
	for i, m := range BuildOriginalContext(path).Messages {
		if fmt.Sprintf("%+v", m.Content) != texts[i] {
			tb.Fatalf("%s: stored message %d changed", s.Name(), i)
		}
	}
	return ce
}

// edited returns the ids a pass edits, in order, and their new texts.
func edited(ce *ContextEdit) ([]string, map[string]string) {
	if ce == nil {
		return nil, nil
	}
	var ids []string
	texts := make(map[string]string)
	for _, ed := range ce.Edits {
		ids = append(ids, ed.TargetID)
		m := Message{Content: ed.Content}
		texts[ed.TargetID] = m.Text()
	}
	return ids, texts
}

// checkEdits runs s on path (see checkStrategy) and checks that it edits
// exactly the entries want, in order, and that placeholder accepts the
// new text of each.
func checkEdits(t *testing.T, s Strategy, path []*Entry, env StrategyEnv, want []string, placeholder func(id, text string) bool) {
	t.Helper()
	got, texts := edited(checkStrategy(t, s, path, env))
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("edits %v, want %v", got, want)
	}
	for _, id := range got {
		if !placeholder(id, texts[id]) {
			t.Errorf("placeholder %q", texts[id])
		}
	}
}

// turnSession builds turns of one tool call each: a short user message, a
// bash call, and a result of the given size. It returns the path and the
// result entries.
func turnSession(sizes ...int) ([]*Entry, []*Entry) {
	var b builder
	var results []*Entry
	for i, n := range sizes {
		b.user(10)
		call := b.call("bash", fmt.Sprintf(`{"command":"step %d"}`, i))
		results = append(results, b.result(call, "bash", n))
		b.assistant(10)
	}
	return b.path(), results
}

func ids(es ...*Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

func TestPrune(t *testing.T) {
	path, r := turnSession(30000, 30000, 30000, 5000)
	skill, rs := turnSession(30000, 30000, 30000, 5000)
	rs[0].Message.ToolName = "skill"
	small, rsmall := turnSession(15000, 30000, 30000, 5000)
	// Results inside the protected turns never count against the budget.
	protectedTurns, rp := turnSession(30000, 100000, 100000)
	tests := []struct {
		name string
		s    Prune
		path []*Entry
		want []string
	}{
		{"beyond 40k of older output", Prune{}, path, ids(r[0])},
		{"protected tool", Prune{ProtectedTools: []string{"skill"}}, skill, nil},
		{"frees too little", Prune{}, small, nil},
		{"lower minimum", Prune{MinimumFree: 10000}, small, ids(rsmall[0])},
		{"smaller budget", Prune{ProtectTokens: 20000}, path, ids(r[0], r[1])},
		{"last two turns", Prune{ProtectTokens: 1, MinimumFree: -2}, protectedTurns, ids(rp[0])},
		{"one protected turn", Prune{ProtectTurns: 1, ProtectTokens: 1, MinimumFree: -2}, protectedTurns, ids(rp[0], rp[1])},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkEdits(t, tt.s, tt.path, StrategyEnv{}, tt.want, func(id, text string) bool {
				return strings.HasPrefix(text, "[bash output removed by prune: ") && strings.HasSuffix(text, "; original in entry "+id+"]")
			})
		})
	}
}

// A pass already applied is not proposed again.
func TestStrategiesIdempotent(t *testing.T) {
	path, _ := turnSession(30000, 30000, 30000, 5000, 3000, 3000, 3000)
	for _, s := range []Strategy{Prune{}, Mask{Turns: 2}, ClearToolUses{TriggerTokens: 1}, Truncate{}} {
		t.Run(s.Name(), func(t *testing.T) {
			ce := checkStrategy(t, s, path, StrategyEnv{})
			if ce == nil {
				t.Fatal("no pass")
			}
			if again := checkStrategy(t, s, withEdit(path, ce), StrategyEnv{}); again != nil {
				t.Fatalf("second pass edits %v", again.Edits)
			}
		})
	}
}

func TestMask(t *testing.T) {
	path, r := turnSession(1000, 2000, 3000, 4000)
	var b builder
	b.user(10)
	call := b.call("read", `{"path":"a.go"}`)
	b.result(call, "read", 500) // summarized by the compaction
	b.assistant(10)
	b.compaction("summary", b.user(10).ID)
	call = b.call("read", `{"path":"b.go"}`)
	kept := b.result(call, "read", 500)
	b.user(10)
	b.assistant(10)
	tests := []struct {
		name string
		s    Mask
		path []*Entry
		want []string
	}{
		{"fewer turns than kept", Mask{}, path, nil},
		{"two turns kept", Mask{Turns: 2}, path, ids(r[0], r[1])},
		{"minimum not met", Mask{Turns: 2, MinFree: 4000}, path, nil},
		{"minimum met", Mask{Turns: 2, MinFree: 2900}, path, ids(r[0], r[1])},
		// The summarized result is not in the context; the kept one is.
		{"after a compaction", Mask{Turns: 1}, b.path(), ids(kept)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkEdits(t, tt.s, tt.path, StrategyEnv{}, tt.want, func(id, text string) bool {
				return strings.Contains(text, "output removed by mask: ") && strings.Contains(text, " chars, ~") &&
					strings.HasSuffix(text, "original in entry "+id+"]")
			})
		})
	}
}

func TestClearToolUses(t *testing.T) {
	// Six uses; the second is of an excluded tool.
	var b builder
	b.user(10)
	var results []*Entry
	for i, name := range []string{"bash", "memory", "bash", "bash", "bash", "bash"} {
		call := b.call(name, fmt.Sprintf(`{"command":"step %d","long":"%s"}`, i, strings.Repeat("x", 400)))
		results = append(results, b.result(call, name, 5000))
	}
	b.assistant(10)
	uses := b.path()

	cheap, rc := turnSession(100, 50000, 50000, 50000)
	costly, rx := turnSession(50000, 100, 100, 100)

	tests := []struct {
		name string
		s    ClearToolUses
		env  StrategyEnv
		path []*Entry
		want []string
	}{
		{"under the trigger", ClearToolUses{}, StrategyEnv{}, uses, nil},
		{"trigger from env", ClearToolUses{ClearAtLeast: 1, ExcludeTools: []string{"memory"}}, StrategyEnv{Usage: ContextUsage{Tokens: 150000}}, uses, ids(results[0], results[2])},
		{"keep one", ClearToolUses{TriggerTokens: 1, Keep: 1, ClearAtLeast: 1, ExcludeTools: []string{"memory"}}, StrategyEnv{}, uses,
			ids(results[0], results[2], results[3], results[4])},
		{"clear at least", ClearToolUses{TriggerTokens: 1, ClearAtLeast: 20000}, StrategyEnv{}, uses, nil},
		{"cache cost not covered", ClearToolUses{TriggerTokens: 1}, StrategyEnv{}, cheap, nil},
		{"cache cost covered", ClearToolUses{TriggerTokens: 1}, StrategyEnv{}, costly, ids(rx[0])},
		{"explicit minimum", ClearToolUses{TriggerTokens: 1, ClearAtLeast: 50}, StrategyEnv{}, cheap, ids(rc[0])},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkEdits(t, tt.s, tt.path, tt.env, tt.want, func(_, text string) bool {
				return strings.Contains(text, "output removed by clear_tool_uses: ")
			})
		})
	}

	t.Run("inputs", func(t *testing.T) {
		ce := checkStrategy(t, ClearToolUses{TriggerTokens: 1, ClearAtLeast: 1, ClearInputs: true, ExcludeTools: []string{"memory"}}, uses, StrategyEnv{})
		if ce == nil {
			t.Fatal("no pass")
		}
		c := BuildContext(withEdit(uses, ce))
		cleared := map[string]bool{results[0].Message.ToolCallID: true, results[2].Message.ToolCallID: true}
		n := 0
		for i, m := range c.Messages {
			for _, tc := range m.ToolCalls() {
				var args map[string]any
				if err := json.Unmarshal(tc.Arguments, &args); err != nil {
					t.Fatalf("call %s: arguments %s: %v", tc.ID, tc.Arguments, err)
				}
				note, ok := args["cleared"].(string)
				if ok != cleared[tc.ID] {
					t.Fatalf("call %s: cleared %v, want %v", tc.ID, ok, cleared[tc.ID])
				}
				if ok {
					n++
					if tc.Name != "bash" || !strings.HasSuffix(note, "original in entry "+c.EntryIDs[i]) {
						t.Errorf("call %s %s: %q", tc.ID, tc.Name, note)
					}
				}
			}
		}
		if n != 2 {
			t.Fatalf("%d calls cleared, want 2", n)
		}
	})
}

func TestTruncate(t *testing.T) {
	var b builder
	first := b.user(1000)
	var results, assistants, users []*Entry
	for i := 0; i < 6; i++ {
		users = append(users, b.user(500+10*i))
		call := b.call("bash", `{"command":"ls"}`)
		results = append(results, b.result(call, "bash", 2000+100*i))
		assistants = append(assistants, b.assistant(800))
	}
	call := b.call("bash", `{"command":"false"}`)
	errResult := b.result(call, "bash", 4000)
	errResult.Message.IsError = true
	short := b.user(100) // 400 chars
	for i := 0; i < 3; i++ {
		call := b.call("bash", `{"command":"ls"}`)
		b.result(call, "bash", 1000) // the last three results
	}
	b.user(10)
	b.assistant(10)
	path := b.path()

	// The order targets are taken in: tool results largest first, then
	// assistants oldest first, then users oldest first except the first
	// user message and the last three (the final one, short and
	// users[5]).
	var order []*Entry
	for i := len(results) - 1; i >= 0; i-- {
		order = append(order, results[i])
	}
	order = append(order, assistants...)
	order = append(order, users[:5]...)

	tests := []struct {
		name      string
		s         Truncate
		env       StrategyEnv
		min, max  int // how many of order are taken
		mustTake  *Entry
		mustLeave []*Entry
	}{
		{name: "defaults", env: StrategyEnv{}, min: len(order), max: len(order), mustLeave: []*Entry{first, errResult, short}},
		{name: "target reached by the largest result", env: StrategyEnv{Usage: ContextUsage{Tokens: 100000}, Target: 99000}, min: 1, max: 1},
		{name: "target needs assistants", env: StrategyEnv{Usage: ContextUsage{Tokens: 100000}, Target: 88000}, min: 7, max: 11},
		{name: "already under the target", env: StrategyEnv{Target: 1000000}},
		{name: "minimum not met", s: Truncate{MinFree: 100000}},
		{name: "shorter texts", s: Truncate{MinChars: 300, KeepLast: 1}, min: -1, mustTake: short, mustLeave: []*Entry{first, errResult}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, texts := edited(checkStrategy(t, tt.s, path, tt.env))
			for _, e := range tt.mustLeave {
				if _, ok := texts[e.ID]; ok {
					t.Errorf("%s was truncated", e.ID)
				}
			}
			if tt.mustTake != nil {
				if _, ok := texts[tt.mustTake.ID]; !ok {
					t.Errorf("%s was not truncated", tt.mustTake.ID)
				}
			}
			if tt.min < 0 {
				return
			}
			if len(got) < tt.min || len(got) > tt.max {
				t.Fatalf("%d edits, want %d to %d", len(got), tt.min, tt.max)
			}
			for _, e := range order[:len(got)] {
				orig := e.Message.Text()
				n := len(orig) // ASCII
				head, tail := min(n*15/100, 6000), min(n*8/100, 3000)
				label := fmt.Sprintf("\n[… truncated by truncate: original %d chars, %d chars left out; original in entry %s …]\n", n, n-head-tail, e.ID)
				if want := orig[:head] + label + orig[n-tail:]; texts[e.ID] != want {
					t.Errorf("%s: got %d chars, want %d (taken out of order?)", e.ID, len(texts[e.ID]), len(want))
				}
			}
		})
	}
}

func TestTruncateHeadAndTail(t *testing.T) {
	tests := []struct {
		chars      int
		head, tail int
	}{
		{500, 75, 40},
		{10000, 1500, 800},
		{40000, 6000, 3000},
		{100000, 6000, 3000},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.chars), func(t *testing.T) {
			text := strings.Repeat("é", tt.chars) // two bytes each: cuts must fall between characters
			m := TextMessage(RoleToolResult, text)
			// The same cut whether the pass keeps its edits or, for
			// PreviewFigures, builds them in a reused buffer.
			for _, figures := range []bool{false, true} {
				p := &pass{v: &strategyView{}, figures: figures}
				content, ok := Truncate{}.truncated(p, m, "e9", 500)
				if !ok {
					t.Fatal("not truncated")
				}
				got := content[0].Text
				label := fmt.Sprintf("\n[… truncated by truncate: original %d chars, %d chars left out; original in entry e9 …]\n",
					tt.chars, tt.chars-tt.head-tt.tail)
				if want := strings.Repeat("é", tt.head) + label + strings.Repeat("é", tt.tail); got != want {
					t.Fatalf("figures %v: got %d bytes, want %d", figures, len(got), len(want))
				}
			}
		})
	}
	if _, ok := (Truncate{}).truncated(&pass{v: &strategyView{}}, TextMessage(RoleUser, strings.Repeat("x", 499)), "e1", 500); ok {
		t.Fatal("a 499-char message was truncated")
	}
}

// Truncation leaves tool calls, thinking and images in place and merges
// the text parts into one.
func TestTruncateKeepsOtherParts(t *testing.T) {
	tc := &ToolCall{ID: "c1", Name: "bash", Arguments: json.RawMessage(`{}`)}
	m := &Message{Role: RoleAssistant, Content: []Part{
		{Type: PartThinking, Thinking: "hmm"},
		{Type: PartText, Text: strings.Repeat("a", 600)},
		{Type: PartToolCall, ToolCall: tc},
		{Type: PartText, Text: strings.Repeat("b", 600)},
	}}
	content, ok := Truncate{}.truncated(&pass{v: &strategyView{}}, m, "e1", 500)
	if !ok || len(content) != 3 || content[0].Type != PartThinking || content[1].Type != PartText || content[2].ToolCall != tc {
		t.Fatalf("content %+v", content)
	}
}

// A message another pass shrank further is not truncated again.
func TestTruncateSkipsClearedMessages(t *testing.T) {
	path, r := turnSession(3000, 3000, 3000, 3000, 3000, 3000)
	masked := checkStrategy(t, Mask{Turns: 4}, path, StrategyEnv{})
	if got, _ := edited(masked); !reflect.DeepEqual(got, ids(r[0], r[1])) {
		t.Fatalf("mask edits %v", got)
	}
	path = withEdit(path, masked)
	got, _ := edited(checkStrategy(t, Truncate{KeepLast: 1}, path, StrategyEnv{}))
	if !reflect.DeepEqual(got, ids(r[2], r[3], r[4])) {
		t.Fatalf("truncate edits %v, want %v", got, ids(r[2], r[3], r[4]))
	}
}

func TestStripImages(t *testing.T) {
	img := Part{Type: PartImage, Image: &Image{MimeType: "image/png", Data: "iVBORw0KGgo="}}
	var b builder
	oldUser := b.msg(&Message{Role: RoleUser, Content: []Part{{Type: PartText, Text: "look"}, img}})
	call := b.call("screenshot", `{}`)
	oldShot := b.result(call, "screenshot", 1)
	oldShot.Message.Content = append(oldShot.Message.Content, img, img)
	b.assistant(10)
	b.user(10) // text only
	b.assistant(10)
	cur := b.msg(&Message{Role: RoleUser, Content: []Part{img}})
	call = b.call("screenshot", `{}`)
	curShot := b.result(call, "screenshot", 1)
	curShot.Message.Content = append(curShot.Message.Content, img)
	b.assistant(10)
	withImages := b.path()
	noOld, _ := turnSession(10, 10)

	tests := []struct {
		name string
		s    StripImages
		path []*Entry
		want []string
	}{
		{"older turns", StripImages{}, withImages, ids(oldUser, oldShot)},
		{"minimum not met", StripImages{MinFree: 5000}, withImages, nil},
		{"no images", StripImages{}, noOld, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ce := checkStrategy(t, tt.s, tt.path, StrategyEnv{})
			got, _ := edited(ce)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("edits %v, want %v", got, tt.want)
			}
			if ce == nil {
				return
			}
			if ce.TokensFreed < 3*ImageTokens-100 {
				t.Errorf("freed %d for three images", ce.TokensFreed)
			}
			for _, ed := range ce.Edits {
				for _, p := range ed.Content {
					if p.Type == PartImage {
						t.Errorf("%s still holds an image", ed.TargetID)
					}
					if p.Type == PartText && strings.HasPrefix(p.Text, "[image/png") &&
						p.Text != "[image/png removed by strip_images: ~1200 tokens; original in entry "+ed.TargetID+"]" {
						t.Errorf("marker %q", p.Text)
					}
				}
			}
			c := BuildContext(withEdit(tt.path, ce))
			for i, id := range c.EntryIDs {
				if id == cur.ID || id == curShot.ID {
					if c.Messages[i] != cur.Message && c.Messages[i] != curShot.Message {
						t.Errorf("the current turn's %s was edited", id)
					}
				}
			}
		})
	}
}
