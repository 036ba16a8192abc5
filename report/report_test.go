package report

import (
	"reflect"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

// measureAt is the independent reference for an estimated point: the
// measure of the context rebuilt from the path up to entry i.
func measureAt(path []*compact.Entry, i int) int {
	return compact.Measure(compact.BuildContext(path[:i+1])).Tokens
}

// checkPoints checks the invariants of the chart's points on any path:
// one point per assistant message, in order; a reported point carries
// the provider's figure, an estimated one the measure at that point.
func checkPoints(t *testing.T, r *Report, path []*compact.Entry) {
	t.Helper()
	var calls []int
	for i, e := range path {
		if e.IsContextMessage() && e.Message.Role == compact.RoleAssistant {
			calls = append(calls, i)
		}
	}
	if len(r.Points) != len(calls) || r.Calls != len(calls) {
		t.Fatalf("%d points, Calls %d, want %d (one per assistant message)", len(r.Points), r.Calls, len(calls))
	}
	estimated := 0
	for k, i := range calls {
		p, e := r.Points[k], path[i]
		if p.Call != k+1 || p.EntryID != e.ID {
			t.Errorf("point %d: call %d entry %s, want call %d entry %s", k, p.Call, p.EntryID, k+1, e.ID)
		}
		if u, ok := e.Message.ValidUsage(); ok {
			if p.Estimated || p.Tokens != u.ContextTokens() {
				t.Errorf("point %d (%s): %d tokens, estimated %v; want the reported %d", k, e.ID, p.Tokens, p.Estimated, u.ContextTokens())
			}
			continue
		}
		estimated++
		if want := measureAt(path, i); !p.Estimated || p.Tokens != want {
			t.Errorf("point %d (%s): %d tokens, estimated %v; want the estimate %d", k, e.ID, p.Tokens, p.Estimated, want)
		}
	}
	if r.Estimated != estimated {
		t.Errorf("Estimated = %d, want %d", r.Estimated, estimated)
	}
}

// checkMarkers checks one marker per compaction and context edit on the
// path, placed after the calls that precede it.
func checkMarkers(t *testing.T, r *Report, path []*compact.Entry) {
	t.Helper()
	var want []Marker
	calls := 0
	for _, e := range path {
		switch {
		case e.IsContextMessage() && e.Message.Role == compact.RoleAssistant:
			calls++
		case e.Kind == compact.KindCompaction:
			want = append(want, Marker{Kind: kindOf(reasonOf(e)), EntryID: e.ID, AfterCall: calls})
		case e.Kind == compact.KindContextEdit:
			want = append(want, Marker{Kind: KindEdit, EntryID: e.ID, AfterCall: calls})
		}
	}
	if len(r.Markers) != len(want) {
		t.Fatalf("%d markers, want %d", len(r.Markers), len(want))
	}
	for i, m := range r.Markers {
		if m.Kind != want[i].Kind || m.EntryID != want[i].EntryID || m.AfterCall != want[i].AfterCall {
			t.Errorf("marker %d = %s %s after call %d, want %s %s after call %d", i, m.Kind, m.EntryID, m.AfterCall,
				want[i].Kind, want[i].EntryID, want[i].AfterCall)
		}
	}
}

func reasonOf(e *compact.Entry) string {
	r, _ := e.Compaction.Details["reason"].(string)
	return r
}

func TestBuildSmall(t *testing.T) {
	in := smallInput(t)
	r, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	path := in.Path
	checkPoints(t, r, path)
	checkMarkers(t, r, path)

	// The facts below were worked out by hand from small.jsonl.
	if r.Calls != 8 || r.Estimated != 2 || r.Messages != 16 || r.Compactions != 4 || r.Edits != 1 || r.OffPath != 1 {
		t.Errorf("counts: calls %d (%d estimated), messages %d, compactions %d, edits %d, off path %d; want 8 (2), 16, 4, 1, 1",
			r.Calls, r.Estimated, r.Messages, r.Compactions, r.Edits, r.OffPath)
	}
	if r.Window != 6000 || r.Trigger != 5000 || r.Policy != "reserve" || r.Leaf != "a8" || r.Now.Tokens != 900 {
		t.Errorf("window %d, trigger %d (%s), leaf %s, now %d", r.Window, r.Trigger, r.Policy, r.Leaf, r.Now.Tokens)
	}
	var kinds []MarkerKind
	for _, m := range r.Markers {
		kinds = append(kinds, m.Kind)
	}
	if want := []MarkerKind{KindAutomatic, KindEdit, KindOverflow, KindManual, KindManual}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("marker kinds %v, want %v", kinds, want)
	}
	if e := r.Markers[1]; e.Label != "truncate" || e.TokensBefore-e.TokensAfter != 95 {
		t.Errorf("edit marker %+v: want truncate freeing 95", e)
	}

	type cardFacts struct {
		id                    string
		before, after, freed  int
		afterEstimated        bool
		summarized            int
		summarizer, cost, use string
	}
	c4 := indexOf(t, path, "c4")
	want := []cardFacts{
		{"c1", 4000, 900, 3100, false, 6, "extractive", "", ""},
		{"c2", 2700, 1200, 1500, false, 2, "anthropic:claude-haiku-4-5", "$0.0123", "1,200 in, 300 out"},
		{"c3", 1500, 700, 800, false, 4, "extractive", "", ""},
		// pi records no tokensAfter: the estimate of the summary and a7.
		{"c4", 700, measureAt(path, c4), 700 - measureAt(path, c4), true, 1, "", "", ""},
	}
	if len(r.Cards) != len(want) {
		t.Fatalf("%d cards, want %d", len(r.Cards), len(want))
	}
	for i, w := range want {
		c := r.Cards[i]
		got := cardFacts{c.EntryID, c.TokensBefore, c.TokensAfter, c.Freed, c.AfterEstimated, c.Summarized, c.Summarizer, c.Cost, c.Usage}
		if got != w {
			t.Errorf("card %d = %+v\nwant     %+v", i+1, got, w)
		}
		if c.Number != i+1 {
			t.Errorf("card %d numbered %d", i+1, c.Number)
		}
	}
	c1 := r.Cards[0]
	var titles []string
	var open []bool
	for _, s := range c1.Sections {
		titles = append(titles, s.Title)
		open = append(open, s.Open)
	}
	if want := []string{"Goal", "Constraints & Preferences", "Progress", "Key Decisions", "Next Steps", "Critical Context"}; !reflect.DeepEqual(titles, want) {
		t.Errorf("sections %q, want %q", titles, want)
	}
	if want := []bool{true, false, true, false, true, false}; !reflect.DeepEqual(open, want) {
		t.Errorf("open %v, want %v", open, want)
	}
	if len(c1.Intro) != 1 || c1.Intro[0].Kind != BlockHeading || c1.Intro[0].Text != "Checkpoint" {
		t.Errorf("intro %+v", c1.Intro)
	}
	if !reflect.DeepEqual(c1.ReadFiles, []string{"parse.go"}) || !reflect.DeepEqual(c1.ModifiedFiles, []string{"parse.go"}) {
		t.Errorf("card files %v %v", c1.ReadFiles, c1.ModifiedFiles)
	}
	if c3 := r.Cards[2]; len(c3.Sections) != 0 || len(c3.Intro) != 1 || c3.Intro[0].Text != "Plain summary without headings." {
		t.Errorf("card 3: a summary without headings is all intro: %+v %+v", c3.Intro, c3.Sections)
	}

	if len(r.ReadFiles) != 0 || !reflect.DeepEqual(r.ModifiedFiles, []string{"README.md", "parse.go"}) {
		t.Errorf("files: read %v, modified %v", r.ReadFiles, r.ModifiedFiles)
	}
	if len(r.Largest) != LargestCount || r.Largest[0].EntryID != "r1" || r.Largest[0].Tool != "read" {
		t.Errorf("largest: %d, first %+v", len(r.Largest), r.Largest[0])
	}
	for i := 1; i < len(r.Largest); i++ {
		if r.Largest[i].Tokens > r.Largest[i-1].Tokens {
			t.Errorf("largest not sorted at %d", i)
		}
	}
	tools := map[string]ToolStat{}
	for _, ts := range r.ByTool {
		tools[ts.Tool] = ts
	}
	if tools["read"].Calls != 1 || tools["read"].Results != 1 || tools["edit"].Calls != 1 || tools["write"].Calls != 1 {
		t.Errorf("by tool: %+v", r.ByTool)
	}
	roles := 0
	for _, rs := range r.ByRole {
		roles += rs.Messages
	}
	if roles != r.Messages {
		t.Errorf("by role counts %d messages, want %d", roles, r.Messages)
	}
}

// TestBuildReal builds the report of the real pi sessions: pi's
// compactions record no reason (manual) and no tokensAfter (estimated).
func TestBuildReal(t *testing.T) {
	tests := []struct {
		name        string
		compactions int
		// summarized and before are the cards' figures: pi's
		// firstKeptEntryIndex 293 and 551 less the header and the
		// metadata entries before them, and pi's own tokensBefore.
		summarized []int
		before     []int
	}{
		{"before-compaction.jsonl", 2, []int{288, 257}, []int{175004, 185014}},
		{"large-session.jsonl", 0, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := realSession(t, tt.name)
			h := s.Header()
			r, err := Build(Input{File: tt.name, SessionID: h.ID, Cwd: h.Cwd, Entries: s.Entries(), Path: s.Path(),
				Model: compact.ModelInfo{ID: "claude-sonnet-4-5", ContextWindow: 200000}})
			if err != nil {
				t.Fatal(err)
			}
			path := s.Path()
			checkPoints(t, r, path)
			checkMarkers(t, r, path)
			if r.Compactions != tt.compactions || len(r.Cards) != tt.compactions || r.Trigger != 200000-compact.DefaultReserveTokens {
				t.Fatalf("%d compactions, %d cards, trigger %d", r.Compactions, len(r.Cards), r.Trigger)
			}
			for i, c := range r.Cards {
				i0 := indexOf(t, path, c.EntryID)
				if c.Kind != KindManual || c.Summarized != tt.summarized[i] || c.TokensBefore != tt.before[i] ||
					!c.AfterEstimated || c.TokensAfter != measureAt(path, i0) || c.Freed != c.TokensBefore-c.TokensAfter {
					t.Errorf("card %d: %s, %d summarized, %d -> %d (estimated %v)", i+1, c.Kind, c.Summarized, c.TokensBefore, c.TokensAfter, c.AfterEstimated)
				}
				if len(c.Sections) == 0 || c.Sections[0].Title != "Branch" || c.Sections[0].Open || !c.Sections[1].Open {
					t.Errorf("card %d: sections %+v", i+1, c.Sections)
				}
			}
			if len(r.Largest) != LargestCount || r.Largest[0].Tokens < r.Largest[LargestCount-1].Tokens {
				t.Errorf("largest %+v", r.Largest)
			}
			if len(r.ModifiedFiles) == 0 || len(r.ReadFiles) == 0 {
				t.Errorf("files: %d read, %d modified", len(r.ReadFiles), len(r.ModifiedFiles))
			}
		})
	}
}

// TestBuildEmpty: a session holding only its header gives a page without
// calls, markers or cards, and says so.
func TestBuildEmpty(t *testing.T) {
	r, err := Build(Input{File: "empty.jsonl", Model: compact.ModelInfo{ID: "m", ContextWindow: 100000}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Calls != 0 || len(r.Points) != 0 || len(r.Markers) != 0 || len(r.Cards) != 0 || r.Leaf != "" || r.Trigger != 100000-compact.DefaultReserveTokens {
		t.Fatalf("empty report %+v", r)
	}
	var b strings.Builder
	if err := Render(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"No model call on this path.", "No compaction on this path.", "No messages."} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("the empty page lacks %q", s)
		}
	}
}

// TestUnknownWindow: without a window there is no trigger, and the
// chart draws neither line.
func TestUnknownWindow(t *testing.T) {
	in := smallInput(t)
	in.Model = compact.ModelInfo{}
	r, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if r.Window != 0 || r.Trigger != 0 || r.Decision.Compact {
		t.Errorf("window %d, trigger %d, decision %+v", r.Window, r.Trigger, r.Decision)
	}
	if r.Model != "claude-sonnet-4-5" {
		t.Errorf("model %q: want the session's", r.Model)
	}
	c := newChart(r)
	if c.Window != nil || c.Trigger != nil {
		t.Error("lines drawn for an unknown window")
	}
}

func TestKindOf(t *testing.T) {
	for reason, want := range map[string]MarkerKind{
		"threshold": KindAutomatic, "overflow": KindOverflow, "manual": KindManual, "": KindManual, "other": KindManual,
	} {
		if got := kindOf(reason); got != want {
			t.Errorf("kindOf(%q) = %s, want %s", reason, got, want)
		}
	}
}

func TestCostAndUsage(t *testing.T) {
	tests := []struct {
		cost, usage any
		want        [2]string
	}{
		{nil, nil, [2]string{"", ""}},
		{0.5, map[string]any{"input": 1500.0, "output": 20.0}, [2]string{"$0.5000", "1,500 in, 20 out"}},
		{map[string]any{"total": 0.01234}, map[string]any{"input": 0.0}, [2]string{"$0.0123", ""}},
		{"free", "lots", [2]string{"", ""}},
	}
	for _, tt := range tests {
		if got := [2]string{costOf(tt.cost), usageOf(tt.usage)}; got != tt.want {
			t.Errorf("costOf(%v), usageOf(%v) = %q, want %q", tt.cost, tt.usage, got, tt.want)
		}
	}
}

func TestPreview(t *testing.T) {
	long := make([]byte, 500)
	for i := range long {
		long[i] = 'a'
	}
	tests := []struct {
		m    *compact.Message
		want string
	}{
		{compact.TextMessage(compact.RoleUser, "  hello\n\n  world "), "hello world"},
		{&compact.Message{Role: compact.RoleAssistant, Content: []compact.Part{{Type: compact.PartToolCall,
			ToolCall: &compact.ToolCall{Name: "read", Arguments: []byte(`{"path":"a.go"}`)}}}}, `read({"path":"a.go"})`},
		{&compact.Message{Role: compact.RoleAssistant, Content: []compact.Part{{Type: compact.PartThinking, Thinking: "hmm"}}}, "hmm"},
		{compact.TextMessage(compact.RoleUser, string(long)), string(long[:previewRunes-1]) + "…"},
		{compact.TextMessage(compact.RoleUser, "éé"), "éé"},
	}
	for _, tt := range tests {
		if got := preview(tt.m); got != tt.want {
			t.Errorf("preview = %q, want %q", got, tt.want)
		}
	}
}
