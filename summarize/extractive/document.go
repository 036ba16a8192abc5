package extractive

import (
	"context"
	"strconv"
	"strings"
	"unicode"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsontext"
)

// block is one item of a section: usually a list item, possibly spanning
// several lines, or a table, code block or paragraph kept from a previous
// summary.
type block struct {
	text string
	// alt is a shorter form the budget shrink may use; "" means the
	// generic shortening.
	alt string
	// pinned blocks are markers of what was left out; the shrink keeps
	// them and merging never drops them as duplicates.
	pinned bool
	// gap asks for a blank line before the block (layout kept from a
	// previous summary).
	gap bool
	// short is set once the block was shortened (or cannot be).
	short bool
}

// section is a heading with its blocks and subsections.
type section struct {
	title string
	level int
	// required sections are written even when empty, as "- (none)".
	required bool
	// newestFirst sections list their newest item first, so the shrink
	// takes items from the end.
	newestFirst bool
	blocks      []*block
	subs        []*section
	// dropped counts the blocks the shrink removed.
	dropped int
	// prev holds the blocks merged from a previous summary until finish.
	prev []*block
}

func newSection(level int, title string, required bool) *section {
	return &section{title: title, level: level, required: required}
}

func (s *section) add(text string) *block {
	b := &block{text: text}
	s.blocks = append(s.blocks, b)
	return b
}

func (s *section) addPinned(text string) {
	s.blocks = append(s.blocks, &block{text: text, pinned: true, short: true})
}

func (s *section) sub(level int, title string, required bool) *section {
	c := newSection(level, title, required)
	s.subs = append(s.subs, c)
	return c
}

func (s *section) hasContent() bool {
	if len(s.blocks) > 0 || s.dropped > 0 {
		return true
	}
	for _, c := range s.subs {
		if c.hasContent() {
			return true
		}
	}
	return false
}

func (s *section) visible() bool { return s.required || s.hasContent() }

func droppedMarker(n int) string {
	return "- [… " + plural(n, "item", "items") + " left out to fit the summary budget]"
}

func (s *section) write(b *strings.Builder) {
	b.WriteString(strings.Repeat("#", s.level))
	b.WriteByte(' ')
	b.WriteString(s.title)
	b.WriteByte('\n')
	if s.dropped > 0 && !s.newestFirst {
		b.WriteString(droppedMarker(s.dropped))
		b.WriteByte('\n')
	}
	for i, bl := range s.blocks {
		if bl.gap && i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(bl.text)
		b.WriteByte('\n')
	}
	if s.dropped > 0 && s.newestFirst {
		b.WriteString(droppedMarker(s.dropped))
		b.WriteByte('\n')
	}
	subVisible := false
	for _, c := range s.subs {
		if c.visible() {
			subVisible = true
		}
	}
	if len(s.blocks) == 0 && s.dropped == 0 && !subVisible {
		b.WriteString("- (none)\n")
	}
	for _, c := range s.subs {
		if c.visible() {
			b.WriteByte('\n')
			c.write(b)
		}
	}
}

// document is the whole summary: top-level sections in order.
type document struct {
	sections []*section
}

func (d *document) render() string {
	var b strings.Builder
	for i, s := range d.sections {
		if i > 0 {
			b.WriteByte('\n')
		}
		s.write(&b)
	}
	return strings.TrimRight(b.String(), "\n")
}

// all returns every section, depth first.
func (d *document) all() []*section {
	var out []*section
	var walk func(s *section)
	walk = func(s *section) {
		out = append(out, s)
		for _, c := range s.subs {
			walk(c)
		}
	}
	for _, s := range d.sections {
		walk(s)
	}
	return out
}

// finish puts the blocks merged from a previous summary in place: before
// the new ones, or after them in newest-first sections, dropping new
// blocks that repeat a previous one exactly (and, in newest-first
// sections, previous blocks that repeat a new one).
func (d *document) finish() {
	for _, s := range d.all() {
		if len(s.prev) == 0 {
			continue
		}
		first, second := s.prev, s.blocks
		if s.newestFirst {
			first, second = s.blocks, s.prev
		}
		seen := make(map[string]bool, len(first))
		for _, b := range first {
			if !b.pinned {
				seen[b.text] = true
			}
		}
		out := append([]*block(nil), first...)
		for _, b := range second {
			if !b.pinned && seen[b.text] {
				continue
			}
			out = append(out, b)
		}
		s.blocks, s.prev = out, nil
	}
}

// shrink removes content until the rendered document is estimated at no
// more than maxTokens. It always works on the section whose removable
// blocks are the largest: first it shortens that section's long blocks,
// oldest first, then it drops its oldest blocks, and the section then says
// how many items it lost. Headings and markers stay, so a very small
// budget can still be exceeded.
func (d *document) shrink(ctx context.Context, maxTokens int, o Options) error {
	secs := d.all()
	for iter := 0; ; iter++ {
		if iter%32 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if tokens(d.render()) <= maxTokens {
			return nil
		}
		var best *section
		bestMass := 0
		for _, s := range secs {
			if m := s.mass(); m > bestMass {
				best, bestMass = s, m
			}
		}
		if best == nil {
			return nil
		}
		best.reduce(o)
	}
}

// mass is the size of the blocks the shrink may still shorten or drop.
func (s *section) mass() int {
	n := 0
	for _, b := range s.blocks {
		if !b.pinned {
			n += jsontext.UTF16Len(b.text) + 1
		}
	}
	return n
}

// reduce shortens the oldest long block of the section, or, when every
// block is short already, drops the oldest one.
func (s *section) reduce(o Options) {
	order := make([]int, len(s.blocks))
	for i := range order {
		if s.newestFirst {
			order[i] = len(s.blocks) - 1 - i
		} else {
			order[i] = i
		}
	}
	for _, i := range order {
		b := s.blocks[i]
		if b.pinned || b.short {
			continue
		}
		b.short = true
		alt := b.alt
		if alt == "" {
			alt = shortenBlock(b.text, o.ShortenedChars)
		}
		if jsontext.UTF16Len(alt) < jsontext.UTF16Len(b.text) {
			b.text = alt
			return
		}
	}
	for _, i := range order {
		if !s.blocks[i].pinned {
			s.blocks = append(s.blocks[:i], s.blocks[i+1:]...)
			s.dropped++
			return
		}
	}
}

// shortenBlock shortens a block's text, keeping the list-item layout of
// the part that stays.
func shortenBlock(text string, n int) string {
	if !strings.HasPrefix(text, "- ") {
		return shorten(text, n)
	}
	// Shorten the item's text (without the list marker and the
	// continuation indent) and lay it out again.
	lines := strings.Split(text[2:], "\n")
	for i := 1; i < len(lines); i++ {
		lines[i] = strings.TrimPrefix(lines[i], "  ")
	}
	return bullet(shorten(strings.Join(lines, "\n"), n))
}

// ---- merging a previous summary ----

// prevPart is a heading of a previous summary with the blocks under it.
// Level 0 is the text before the first heading.
type prevPart struct {
	level  int
	title  string
	blocks []*block
}

// parsePrevious splits a summary into "## " and "### " headings and the
// blocks under them. A block is a list item with its indented
// continuation lines, a table, a fenced code block, or one other line.
// Other headings ("# ", "#### ") become bold lines, so that nothing of
// their text is lost and the result nests under this summary's headings.
// A thematic break ("---") starts a part without heading, like the text
// before the first heading. "- (none)" placeholders are dropped.
func parsePrevious(text string) []prevPart {
	parts := []prevPart{{level: 0}}
	var open *block
	kind := ""
	fence := ""
	blank := false
	for line := range strings.SplitSeq(normalizeNewlines(text), "\n") {
		cur := &parts[len(parts)-1]
		if kind == "fence" {
			open.text += "\n" + line
			if t := strings.TrimSpace(line); strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
				kind, open = "", nil
			}
			continue
		}
		line = strings.TrimRightFunc(line, unicode.IsSpace)
		if line == "" {
			blank = true
			continue
		}
		if strings.HasPrefix(line, "## ") || strings.HasPrefix(line, "### ") {
			level := 2
			if strings.HasPrefix(line, "### ") {
				level = 3
			}
			parts = append(parts, prevPart{level: level, title: strings.TrimSpace(line[level+1:])})
			open, kind, blank = nil, "", false
			continue
		}
		if t := strings.TrimSpace(line); line[0] != ' ' && (t == "---" || t == "***" || t == "___") {
			// A thematic break ends the section it stands in: what
			// follows until the next heading is text of its own (the
			// engine puts one before the start of a split turn).
			parts = append(parts, prevPart{level: 0})
			open, kind, blank = nil, "", false
			continue
		}
		indented := line[0] == ' ' || line[0] == '\t'
		if indented && open != nil {
			if blank {
				open.text += "\n"
			}
			open.text += "\n" + line
			blank = false
			continue
		}
		if kind == "table" && !blank && strings.HasPrefix(line, "|") {
			open.text += "\n" + line
			continue
		}
		b := &block{text: line, gap: blank && len(cur.blocks) > 0}
		blank = false
		switch {
		case strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~"):
			kind = "fence"
			fence = line[:len(line)-len(strings.TrimLeft(line, line[:1]))]
		case strings.HasPrefix(line, "|"):
			kind = "table"
		case headingLineRe(line):
			b.text = "**" + strings.TrimSpace(strings.TrimLeft(line, "#")) + "**"
			kind = "prose"
		case strings.HasPrefix(line, "- ") || strings.HasPrefix(line, "* ") || numbered(line):
			kind = "item"
		default:
			kind = "prose"
		}
		if line == "- (none)" {
			open, kind = nil, ""
			continue
		}
		if strings.HasPrefix(line, "- [… ") {
			b.pinned, b.short = true, true
		}
		cur.blocks = append(cur.blocks, b)
		open = b
	}
	return parts
}

// headingLineRe reports a Markdown heading of a level other than 2 or 3.
func headingLineRe(line string) bool {
	n := len(line) - len(strings.TrimLeft(line, "#"))
	return n >= 1 && n <= 6 && n != 2 && n != 3 && len(line) > n && line[n] == ' '
}

// Keys of the sections a previous summary's headings can map to.
const (
	keyGoal        = "goal"
	keyConstraints = "constraints"
	keyProgress    = "progress"
	keyDone        = "done"
	keyActive      = "active"
	keyBlocked     = "blocked"
	keyDecisions   = "decisions"
	keyNext        = "next"
	keyCritical    = "critical"
	keyCommands    = "commands"
	keyResolved    = "resolved"
	keyUsers       = "users"
	keyOthers      = "others"
	keyEarlier     = "earlier"
	keyShellFiles  = "shellfiles"
	keyIdentifiers = "identifiers"
	keyRoles       = "roles"
)

var headingKeys = map[string]string{
	"goal": keyGoal, "goals": keyGoal, "objective": keyGoal, "objectives": keyGoal,
	"constraints and preferences": keyConstraints, "constraints": keyConstraints, "preferences": keyConstraints,
	"requirements": keyConstraints, "user preferences": keyConstraints,
	"progress": keyProgress, "status": keyProgress,
	"done": keyDone, "completed": keyDone, "completed work": keyDone, "completed work packages": keyDone,
	"completed tasks": keyDone, "accomplished": keyDone,
	"in progress": keyActive, "current task": keyActive, "current work": keyActive, "current state": keyActive,
	"current status": keyActive, "work in progress": keyActive,
	"blocked": keyBlocked, "blockers": keyBlocked, "open issues": keyBlocked, "known issues": keyBlocked,
	"key decisions": keyDecisions, "key decisions made": keyDecisions, "decisions": keyDecisions,
	"decisions made": keyDecisions, "design decisions": keyDecisions,
	"next steps": keyNext, "next": keyNext, "todo": keyNext, "to do": keyNext, "remaining work": keyNext,
	"remaining tasks":  keyNext,
	"critical context": keyCritical, "important context": keyCritical, "key context": keyCritical,
	"commands run": keyCommands, "errors since resolved": keyResolved, "user messages": keyUsers,
	"other messages": keyOthers, "earlier summary": keyEarlier,
	"files touched by shell commands": keyShellFiles, "identifiers": keyIdentifiers,
	"who does what": keyRoles, "roles": keyRoles, "owners": keyRoles, "ownership": keyRoles,
}

// headingKey maps a heading to a section key, "" when it is unknown.
// Headings are compared by compact.SummaryHeadingKey, so case, "&", a
// parenthesized tail and a ":" tail do not matter.
func headingKey(title string) string {
	return headingKeys[compact.SummaryHeadingKey(title)]
}

// mergeTarget is what a previous summary is merged into.
type mergeTarget struct {
	byKey map[string]*section
	// critical receives the sections whose headings are unknown, as
	// subsections.
	critical *section
	// earlier receives the text before the first heading.
	earlier *section
}

// mergePrevious distributes a previous summary's blocks over the document.
// Known headings go to their section (with the original heading kept as a
// bold line when it differs); unknown "## " headings, and unknown "### "
// headings under Critical Context, become subsections of Critical Context;
// other unknown "### " headings become bold lines where they stand. Text
// without any heading (before the first heading or after a "---") is kept
// under Earlier summary.
func mergePrevious(prev string, t mergeTarget) {
	parts := parsePrevious(prev)
	var target *section
	parentKey := ""
	put := func(s *section, blocks []*block) {
		s.prev = append(s.prev, blocks...)
	}
	label := func(title string) *block {
		return &block{text: "**" + title + "**"}
	}
	for _, p := range parts {
		if p.level == 0 {
			if len(p.blocks) > 0 {
				put(t.earlier, p.blocks)
			}
			continue
		}
		key := headingKey(p.title)
		if s := t.byKey[key]; s != nil {
			target = s
			if p.level == 2 {
				parentKey = key
			}
			if !strings.EqualFold(strings.TrimSpace(p.title), s.title) {
				put(s, []*block{label(p.title)})
			}
			put(s, p.blocks)
			continue
		}
		if p.level == 2 || parentKey == keyCritical || target == nil {
			s := t.critical.unknownSub(p.title)
			target = s
			if p.level == 2 {
				parentKey = "unknown"
			}
			put(s, p.blocks)
			continue
		}
		put(target, []*block{label(p.title)})
		put(target, p.blocks)
	}
}

// unknownSub returns the subsection titled title, adding it when missing.
func (s *section) unknownSub(title string) *section {
	for _, c := range s.subs {
		if strings.EqualFold(c.title, title) {
			return c
		}
	}
	return s.sub(3, title, false)
}

// flattenPrevious turns a whole previous summary into blocks, headings
// included as bold lines.
func flattenPrevious(prev string) []*block {
	var out []*block
	for _, p := range parsePrevious(prev) {
		if p.level > 0 {
			out = append(out, &block{text: "**" + p.title + "**", gap: len(out) > 0})
		}
		out = append(out, p.blocks...)
	}
	return out
}

// countLine renders a pinned marker for items not listed.
func countLine(n int, what string) string {
	return "- [… " + strconv.Itoa(n) + " " + what + " not listed]"
}
