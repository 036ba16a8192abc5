package report

import (
	"slices"
	"strings"

	"github.com/compactkit/compact"
)

// Section is one "## " section of a summary. The page shows it as a
// collapsible <details> element, open when Open is set.
type Section struct {
	Title  string  `json:"title"`
	Open   bool    `json:"open,omitempty"`
	Blocks []Block `json:"blocks"`
}

// BlockKind says how a block of summary text is shown.
type BlockKind string

// The kinds of blocks in a summary.
const (
	// BlockText is a paragraph; its line breaks are kept.
	BlockText BlockKind = "text"
	// BlockList is a bulleted list, BlockOrdered a numbered one.
	BlockList    BlockKind = "list"
	BlockOrdered BlockKind = "ordered"
	// BlockHeading is a heading inside a section ("### ", or "# " before
	// the first section).
	BlockHeading BlockKind = "heading"
	// BlockCode is a fenced code block, shown verbatim.
	BlockCode BlockKind = "code"
)

// Block is a run of summary text of one kind. Lists have Items; the
// other kinds have Text.
type Block struct {
	Kind  BlockKind `json:"kind"`
	Text  string    `json:"text,omitempty"`
	Items []Item    `json:"items,omitempty"`
}

// Item is one list item. Depth is its nesting level, 0 at the top (two
// spaces or a tab of indentation per level, capped at 3).
type Item struct {
	Text  string `json:"text"`
	Depth int    `json:"depth,omitempty"`
}

// openSections are the normalized titles of the sections shown open: what
// the conversation is for, where it stands and what comes next. The
// extractive summarizer writes "Goal", "Progress" (done, in progress,
// blocked) and "Next Steps"; model summaries use the other names.
var openSections = map[string]bool{
	"goal": true, "goals": true, "objective": true, "objectives": true,
	"progress": true, "status": true, "current state": true, "current status": true, "current task": true,
	"current work": true, "in progress": true, "work in progress": true,
	"next steps": true, "next": true, "todo": true, "to do": true, "remaining work": true, "remaining tasks": true,
}

// sectionOpen reports whether a section with this title is shown open.
// Titles are compared by compact.SummaryHeadingKey, so case, "&", a
// parenthesized tail ("Next Steps (WP14-WP20)") and a ":" tail ("Current
// Task: File Reorganization") do not matter.
func sectionOpen(title string) bool {
	return openSections[compact.SummaryHeadingKey(title)]
}

// ParseSummary splits a Markdown summary into the text before its first
// "## " heading and one section per "## " heading. Inside them it
// recognizes headings, bulleted and numbered lists, fenced code and
// paragraphs; everything else (emphasis, links) stays as written. The
// report's compaction cards and the proxy's conversation API
// (/api/conversations/{id}) show summaries through it.
func ParseSummary(summary string) (intro []Block, sections []Section) {
	var cur *[]Block = &intro
	var para []string
	var list *Block
	flush := func() {
		if len(para) > 0 {
			*cur = append(*cur, Block{Kind: BlockText, Text: strings.Join(para, "\n")})
			para = nil
		}
		if list != nil {
			*cur = append(*cur, *list)
			list = nil
		}
	}
	lines := strings.Split(strings.ReplaceAll(summary, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "## "):
			flush()
			sections = append(sections, Section{Title: strings.TrimSpace(line[3:]), Open: sectionOpen(line[3:])})
			cur = &sections[len(sections)-1].Blocks
		case strings.HasPrefix(trimmed, "```"):
			flush()
			var code []string
			for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "```"); i++ {
				code = append(code, lines[i])
			}
			*cur = append(*cur, Block{Kind: BlockCode, Text: strings.Join(code, "\n")})
		case strings.HasPrefix(line, "#"):
			flush()
			*cur = append(*cur, Block{Kind: BlockHeading, Text: strings.TrimSpace(strings.TrimLeft(line, "#"))})
		case trimmed == "":
			flush()
		default:
			item, ordered, ok := listItem(line)
			switch {
			case ok:
				kind := BlockList
				if ordered {
					kind = BlockOrdered
				}
				if list != nil && list.Kind != kind && item.Depth == 0 {
					flush()
				}
				if list == nil {
					if len(para) > 0 {
						flush()
					}
					list = &Block{Kind: kind}
				}
				list.Items = append(list.Items, item)
			case list != nil && line != trimmed:
				// An indented line continues the list's last item.
				list.Items[len(list.Items)-1].Text += "\n" + trimmed
			default:
				if list != nil {
					flush()
				}
				para = append(para, line)
			}
		}
	}
	flush()
	// A summary whose titles are all unknown still opens on something.
	if len(sections) > 0 && !slices.ContainsFunc(sections, func(s Section) bool { return s.Open }) {
		sections[0].Open = true
	}
	return intro, sections
}

// listItem recognizes a list item: "- ", "* " or "+ " (bulleted) or
// "1. " (numbered) after optional indentation.
func listItem(line string) (item Item, ordered, ok bool) {
	trimmed := strings.TrimLeft(line, " \t")
	width := 0
	for _, c := range line[:len(line)-len(trimmed)] {
		if c == '\t' {
			width += 2
		} else {
			width++
		}
	}
	item.Depth = min(width/2, 3)
	for _, b := range []string{"- ", "* ", "+ "} {
		if strings.HasPrefix(trimmed, b) {
			item.Text = strings.TrimSpace(trimmed[2:])
			return item, false, true
		}
	}
	digits := 0
	for digits < len(trimmed) && trimmed[digits] >= '0' && trimmed[digits] <= '9' {
		digits++
	}
	if digits > 0 && digits < 4 && strings.HasPrefix(trimmed[digits:], ". ") {
		item.Text = strings.TrimSpace(trimmed[digits+2:])
		return item, true, true
	}
	return Item{}, false, false
}
