package report

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/agents/claudecode"
	"github.com/compactkit/compact/session"
)

// TestClaudeCodeTrigger checks that a Claude Code compaction is drawn
// and labelled by its compact_boundary's trigger: "auto" (Claude Code
// compacting on its own near the window's end) as automatic, "manual"
// (the user's /compact) as manual.
func TestClaudeCodeTrigger(t *testing.T) {
	data, err := os.ReadFile("../agents/claudecode/testdata/compaction.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	const recorded = `"compactMetadata":{"trigger":"manual"`
	if !bytes.Contains(data, []byte(recorded)) {
		t.Fatalf("the fixture has no %s", recorded)
	}
	for _, tc := range []struct {
		trigger string
		want    MarkerKind
		label   string
	}{
		{"auto", KindAutomatic, "automatic (threshold)"},
		{"manual", KindManual, "manual"},
	} {
		t.Run(tc.trigger, func(t *testing.T) {
			file := bytes.ReplaceAll(data, []byte(recorded), []byte(`"compactMetadata":{"trigger":"`+tc.trigger+`"`))
			tr, err := claudecode.Read(file, "compaction.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			s, err := session.FromTranscript(tr, "compaction.jsonl", session.Options{})
			if err != nil {
				t.Fatal(err)
			}
			r, err := Build(Input{File: "compaction.jsonl", Entries: s.Entries(), Path: s.Path(),
				Model: compact.ModelInfo{ID: "claude-haiku-4-5", ContextWindow: 200000}, Policy: compact.Reserve{}})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Cards) != 1 {
				t.Fatalf("%d cards, want 1", len(r.Cards))
			}
			if c := r.Cards[0]; c.Kind != tc.want || c.TokensBefore != 142431 {
				t.Errorf("card kind %s (reason %q), %d tokens before; want %s, 142431", c.Kind, c.Reason, c.TokensBefore, tc.want)
			}
			for _, e := range s.Path() {
				if e.Kind == compact.KindCompaction && compact.AutomaticCompaction(e) != (tc.want == KindAutomatic) {
					t.Errorf("compact.AutomaticCompaction = %v for trigger %q", !(tc.want == KindAutomatic), tc.trigger)
				}
			}
			var kinds []MarkerKind
			for _, m := range r.Markers {
				kinds = append(kinds, m.Kind)
			}
			if len(kinds) != 1 || kinds[0] != tc.want {
				t.Errorf("markers %v, want [%s]", kinds, tc.want)
			}
			var page bytes.Buffer
			if err := Render(&page, r); err != nil {
				t.Fatal(err)
			}
			if badge := `<span class="badge m-` + string(tc.want) + `">` + tc.label + `</span>`; !strings.Contains(page.String(), badge) {
				t.Errorf("the page has no %s", badge)
			}
		})
	}
}
