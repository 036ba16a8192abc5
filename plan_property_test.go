package compact

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// shapePath builds a linear path from a shape string, one entry per
// byte: 'u' user, 'a' assistant text, 'c' a tool call and 'r' its result
// (a result not right after its call, metadata aside, answers a made-up
// call), 'm' a
// metadata entry, 'k' a compaction; other bytes add nothing. sizes gives
// the token size of the n-th entry (cycling). keep picks each
// compaction's first kept entry from its index i in the path: an index
// below i names that entry, i names the compaction itself (what pi writes
// when it keeps nothing), anything above names no entry of the path.
func shapePath(shape string, sizes []int, keep func(i int) int) []*Entry {
	var b builder
	size := func() int {
		s := sizes[b.n%len(sizes)]
		return max(s, 1)
	}
	pending := ""
	for i := 0; i < len(shape); i++ {
		if c := shape[i]; c != 'r' && c != 'm' {
			pending = "" // a result answers the call just before it
		}
		switch shape[i] {
		case 'u':
			b.user(size())
		case 'a':
			b.assistant(size())
		case 'c':
			pending = b.call("read", `{"path":"f.go"}`)
		case 'r':
			call := pending
			if call == "" {
				call = fmt.Sprintf("orphan%d", i)
			}
			pending = ""
			b.result(call, "read", size())
		case 'm':
			b.meta(KindThinkingLevelChange)
		case 'k':
			n := len(b.entries)
			id := fmt.Sprintf("e%d", b.n+1) // the id builder.add gives it
			if k := keep(n); k < n {
				id = b.entries[k].ID
			} else if k > n {
				id = "missing"
			}
			b.compaction("earlier summary", id)
		}
	}
	return b.path()
}

// checkPlanInvariants plans path with keep and fails on a panic, an
// error other than ErrNothingToCompact, or a plan that breaks what the
// planner promises: a kept part that starts at a real entry of the path
// after the span start, no message lost or counted twice, and a context
// that, with the compaction appended, holds the summary and the kept
// part.
func checkPlanInvariants(t *testing.T, name string, path []*Entry, keep int) {
	t.Helper()
	var (
		p   *Plan
		err error
	)
	func() {
		defer func() {
			if v := recover(); v != nil {
				t.Fatalf("%s: PlanCompaction panicked: %v", name, v)
			}
		}()
		p, err = PlanCompaction(path, PlanOptions{KeepRecentTokens: keep})
	}()
	if err != nil {
		if !errors.Is(err, ErrNothingToCompact) {
			t.Fatalf("%s: err = %v, want nil or ErrNothingToCompact", name, err)
		}
		return
	}
	if p.SpanStart < 0 || p.SpanStart > p.FirstKeptIndex || p.FirstKeptIndex >= len(path) {
		t.Fatalf("%s: span start %d, first kept %d, path of %d", name, p.SpanStart, p.FirstKeptIndex, len(path))
	}
	if path[p.FirstKeptIndex].ID != p.FirstKeptID {
		t.Fatalf("%s: FirstKeptID %q is not entry %d (%q)", name, p.FirstKeptID, p.FirstKeptIndex, path[p.FirstKeptIndex].ID)
	}
	if p.MessagesToSummarize() == 0 {
		t.Fatalf("%s: a plan with nothing to summarize", name)
	}
	if k := path[p.FirstKeptIndex]; k.IsContextMessage() && k.Message.Role == RoleToolResult {
		t.Fatalf("%s: cut at a tool result (%s)", name, k.ID)
	}
	// A kept tool result's call is never left in the summarized span.
	summarizedCalls := map[string]bool{}
	for _, e := range path[p.SpanStart:p.FirstKeptIndex] {
		if e.IsContextMessage() {
			for _, c := range e.Message.ToolCalls() {
				summarizedCalls[c.ID] = true
			}
		}
	}
	for _, e := range path[p.FirstKeptIndex:] {
		if e.IsContextMessage() && e.Message.Role == RoleToolResult && summarizedCalls[e.Message.ToolCallID] {
			t.Fatalf("%s: kept tool result %s lost its call %s to the summary", name, e.ID, e.Message.ToolCallID)
		}
	}
	before := countMessages(path[p.SpanStart:p.FirstKeptIndex])
	if got := p.MessagesToSummarize() + len(p.Pinned); got != before {
		t.Fatalf("%s: %d messages before the cut, %d summarized or pinned", name, before, got)
	}
	kept := countMessages(path[p.FirstKeptIndex:])
	after := append(path[:len(path):len(path)], &Entry{ID: "new", ParentID: path[len(path)-1].ID, Kind: KindCompaction,
		Compaction: &Compaction{Summary: "new summary", FirstKeptID: p.FirstKeptID}})
	if got := len(BuildContext(after).Messages); got != 1+kept {
		t.Fatalf("%s: context after the compaction holds %d messages, want the summary + %d kept", name, got, kept)
	}
}

// TestPlanCompactionAtEveryPosition puts a compaction at every position of
// a path, keeping from every entry before it, from itself (pi's "keeps
// nothing") and from an id the path does not hold, and plans with budgets
// from one token to more than the whole path.
func TestPlanCompactionAtEveryPosition(t *testing.T) {
	shapes := []string{
		"uacrcrauacrmaucra",
		"ucrcrcr",
		"u",
		"mm",
		"ua",
		"uacrrr",
	}
	sizes := []int{40, 5, 300, 12, 90, 1}
	for _, base := range shapes {
		for pos := 0; pos <= len(base); pos++ {
			shape := base[:pos] + "k" + base[pos:]
			for kept := 0; kept <= pos+1; kept++ {
				path := shapePath(shape, sizes, func(int) int { return kept })
				for _, keep := range []int{1, 50, 400, 1 << 20} {
					name := fmt.Sprintf("%s kept from %d keep %d", shape, kept, keep)
					checkPlanInvariants(t, name, path, keep)
				}
			}
		}
	}
}

// TestPlanCompactionKeepsNothingAtEnd is pi's compaction that keeps
// nothing (firstKeptEntryIndex its own index) as the last entry: there
// is nothing to compact, and the reason says the session was just
// compacted.
func TestPlanCompactionKeepsNothingAtEnd(t *testing.T) {
	path := shapePath("uacrak", []int{100}, func(i int) int { return i })
	_, err := PlanCompaction(path, PlanOptions{KeepRecentTokens: 10})
	if !errors.Is(err, ErrNothingToCompact) {
		t.Fatalf("err = %v, want ErrNothingToCompact", err)
	}
	if want := "no message after the last compaction (entry e6)"; !strings.Contains(err.Error(), want) {
		t.Errorf("err = %q, want it to say %q", err, want)
	}
}

// FuzzPlanCompaction plans paths of any shape, compactions anywhere and
// keeping from anywhere, and checks the planner's invariants.
func FuzzPlanCompaction(f *testing.F) {
	f.Add("uacrkua", []byte{7, 200, 3}, uint8(5), 100)
	f.Add("uacrak", []byte{1}, uint8(5), 10)
	f.Add("kkk", []byte{9}, uint8(0), 1)
	f.Add("ucrcrkrrk", []byte{30, 2}, uint8(9), 20000)
	f.Fuzz(func(t *testing.T, shape string, sizes []byte, keptFrom uint8, keep int) {
		if len(shape) > 64 {
			shape = shape[:64]
		}
		s := make([]int, 0, len(sizes)+1)
		for _, b := range sizes {
			s = append(s, int(b))
		}
		if len(s) == 0 {
			s = append(s, 10)
		}
		path := shapePath(shape, s, func(i int) int { return int(keptFrom) % (i + 3) })
		checkPlanInvariants(t, fmt.Sprintf("%q keep %d", shape, keep), path, keep)
	})
}
