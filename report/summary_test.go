package report

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func TestParseSummary(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		intro    []Block
		sections []Section
	}{
		{name: "empty"},
		{name: "text only", in: "Just text.\nSecond line.",
			intro: []Block{{Kind: BlockText, Text: "Just text.\nSecond line."}}},
		{name: "extractive headings",
			in: "## Goal\n- Build it\n\n## Progress\n### Done\n- [x] a\n### In Progress\n- [ ] b\n\n## Key Decisions\n- c\n\n## Next Steps\n1. d\n2. e\n",
			sections: []Section{
				{Title: "Goal", Open: true, Blocks: []Block{{Kind: BlockList, Items: []Item{{Text: "Build it"}}}}},
				{Title: "Progress", Open: true, Blocks: []Block{
					{Kind: BlockHeading, Text: "Done"}, {Kind: BlockList, Items: []Item{{Text: "[x] a"}}},
					{Kind: BlockHeading, Text: "In Progress"}, {Kind: BlockList, Items: []Item{{Text: "[ ] b"}}}}},
				{Title: "Key Decisions", Blocks: []Block{{Kind: BlockList, Items: []Item{{Text: "c"}}}}},
				{Title: "Next Steps", Open: true, Blocks: []Block{{Kind: BlockOrdered, Items: []Item{{Text: "d"}, {Text: "e"}}}}},
			}},
		{name: "intro, nesting, continuation, code",
			in:    "# Title\nintro text\n## Current Task: X\n- top\n  - nested\n    more of nested\n\tstill nested\npara after\n```go\n## not a heading\n```\n",
			intro: []Block{{Kind: BlockHeading, Text: "Title"}, {Kind: BlockText, Text: "intro text"}},
			sections: []Section{{Title: "Current Task: X", Open: true, Blocks: []Block{
				{Kind: BlockList, Items: []Item{{Text: "top"}, {Text: "nested\nmore of nested\nstill nested", Depth: 1}}},
				{Kind: BlockText, Text: "para after"},
				{Kind: BlockCode, Text: "## not a heading"},
			}}}},
		{name: "list kinds switch", in: "- a\n1. b\n",
			intro: []Block{{Kind: BlockList, Items: []Item{{Text: "a"}}}, {Kind: BlockOrdered, Items: []Item{{Text: "b"}}}}},
		{name: "unclosed fence keeps the rest", in: "```\nx\n## y",
			intro: []Block{{Kind: BlockCode, Text: "x\n## y"}}},
		{name: "no known title: the first opens", in: "## Branch\n- a\n## Critical Context\n- b\n",
			sections: []Section{{Title: "Branch", Open: true, Blocks: []Block{{Kind: BlockList, Items: []Item{{Text: "a"}}}}},
				{Title: "Critical Context", Blocks: []Block{{Kind: BlockList, Items: []Item{{Text: "b"}}}}}}},
		{name: "CRLF", in: "## Goal\r\n- a\r\n",
			sections: []Section{{Title: "Goal", Open: true, Blocks: []Block{{Kind: BlockList, Items: []Item{{Text: "a"}}}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			intro, sections := ParseSummary(tt.in)
			if !reflect.DeepEqual(intro, tt.intro) {
				t.Errorf("intro = %+v\nwant    %+v", intro, tt.intro)
			}
			if !reflect.DeepEqual(sections, tt.sections) {
				t.Errorf("sections = %+v\nwant       %+v", sections, tt.sections)
			}
		})
	}
}

func TestSectionOpen(t *testing.T) {
	for title, want := range map[string]bool{
		"Goal": true, "goals": true, "Next Steps": true, "Next Steps (WP14-WP20)": true, "Current State": true,
		"Current Task: File Reorganization": true, "Progress": true, "**Objective**": true,
		"Constraints & Preferences": false, "Key Decisions": false, "Critical Context": false, "Branch": false,
		"Turn Request": false, "": false, "Goalkeeper": false,
	} {
		if got := sectionOpen(title); got != want {
			t.Errorf("sectionOpen(%q) = %v, want %v", title, got, want)
		}
	}
}

// FuzzParseSummary: any text parses without panicking, and no non-blank
// line of it is lost.
func FuzzParseSummary(f *testing.F) {
	for _, s := range []string{"", "## Goal\n- a", "# T\n```\ncode", "  - x\n\t1. y\n", "##\n###\n#", "- \n1. \n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		intro, sections := ParseSummary(s)
		var all strings.Builder
		add := func(blocks []Block) {
			for _, b := range blocks {
				all.WriteString(b.Text + "\n")
				for _, it := range b.Items {
					all.WriteString(it.Text + "\n")
				}
			}
		}
		add(intro)
		for _, sec := range sections {
			_ = sectionOpen(sec.Title)
			all.WriteString(sec.Title + "\n")
			add(sec.Blocks)
		}
		// Every word survives, except the Markdown markers the blocks
		// stand for and the fences of code blocks (with their language).
		marker := regexp.MustCompile("^(#+|[-*+]|[0-9]{1,3}\\.)$")
		for _, line := range strings.Split(s, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				continue
			}
			for _, w := range strings.Fields(line) {
				if !marker.MatchString(w) && !strings.Contains(all.String(), strings.TrimLeft(w, "#")) {
					t.Fatalf("word %q of %q lost: %q", w, s, all.String())
				}
			}
		}
	})
}
