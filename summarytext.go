package compact

import (
	"fmt"
	"strings"

	"github.com/compactkit/compact/internal/jsontext"
)

// This file holds every text a compaction writes around its summary, in
// the order a reader meets them: the preface that tells the model what
// the summary is, the note after an automatic compaction, the file lists
// that end the summary, the copy of the pinned messages, the shortening
// of a summary that does not fit its budget, and the key by which readers
// of a summary match its section headings.

// SummaryPreface opens the user message that carries a compaction summary
// to the model. It tells the model the text is a hand-over from earlier
// work, not a new request.
const SummaryPreface = "The earlier part of this conversation was condensed into the summary below, " +
	"written to hand the work over. Treat it as the record of what already happened and continue from it."

// ContinuationNote follows the summary after an automatic compaction, which
// interrupts the work rather than ending it.
const ContinuationNote = "This condensing happened automatically, in the middle of the work. Carry on from where it stopped: " +
	"do not redo steps the summary records as done, and do not give a final answer until every remaining step is finished."

// BranchPreface opens the user message that carries a branch summary.
const BranchPreface = "The conversation returned here from another branch; this is a summary of that branch."

// SummaryText returns the text of the user message that stands for a
// compaction summary in the model's context: the preface and the summary
// inside <summary> tags.
func SummaryText(summary string) string {
	return SummaryPreface + "\n\n<summary>\n" + summary + "\n</summary>"
}

// AutomaticCompaction reports whether a compaction entry was made
// automatically (its details record reason threshold or overflow).
func AutomaticCompaction(e *Entry) bool {
	if e == nil || e.Compaction == nil {
		return false
	}
	r, _ := e.Compaction.Details["reason"].(string)
	return r == string(ReasonThreshold) || r == string(ReasonOverflow)
}

// The file lists.

// FormatFileLists renders the file lists that end every summary, as
// <read-files> and <modified-files> blocks, one path per line. It returns
// "" when both lists are empty.
func FormatFileLists(readFiles, modifiedFiles []string) string {
	var b strings.Builder
	if len(readFiles) > 0 {
		b.WriteString("<read-files>\n")
		for _, p := range readFiles {
			b.WriteString(p)
			b.WriteByte('\n')
		}
		b.WriteString("</read-files>")
	}
	if len(modifiedFiles) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("<modified-files>\n")
		for _, p := range modifiedFiles {
			b.WriteString(p)
			b.WriteByte('\n')
		}
		b.WriteString("</modified-files>")
	}
	return b.String()
}

// StripFileLists removes trailing <read-files> and <modified-files> blocks
// from a summary, so that a previous summary can be merged without
// repeating lists the new summary rebuilds anyway.
func StripFileLists(summary string) string {
	for _, tag := range []string{"read-files", "modified-files"} {
		for {
			start := strings.Index(summary, "<"+tag+">")
			if start < 0 {
				break
			}
			end := strings.Index(summary[start:], "</"+tag+">")
			if end < 0 {
				break
			}
			summary = summary[:start] + summary[start+end+len(tag)+3:]
		}
	}
	return strings.TrimRight(summary, " \n\t")
}

// The copy of the pinned messages in a compaction's summary.
//
// Readers that know no pins (pi among them) rebuild the context from the
// summary and the kept part only, so the pinned messages a compaction
// leaves out of its kept part would be lost to them. Each compaction
// therefore also writes a copy of those messages at the end of its
// summary, between pinnedOpen and pinnedClose, and lists their ids in
// its details under "pinned". BuildContext drops the copy while every one
// of those ids is still pinned, since the messages themselves follow the
// summary then; once any of them is unpinned, the copy stays, so an
// unpinned message is still summarized rather than lost.

const (
	pinnedOpen  = "<pinned-messages>"
	pinnedClose = "</pinned-messages>"
	// pinnedIntro opens the copy for a model that reads it.
	pinnedIntro = "Messages the user pinned, word for word:"
)

// pinnedBlock renders msgs as the copy appended to a summary; "" for
// none.
func pinnedBlock(msgs []*Message) string {
	if len(msgs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(pinnedOpen + "\n" + pinnedIntro + "\n")
	for _, m := range msgs {
		b.WriteString("\n[")
		b.WriteString(string(m.Role))
		if m.Role == RoleToolResult && m.ToolName != "" {
			b.WriteString(" of " + m.ToolName)
		}
		b.WriteString("]\n")
		if t := m.Text(); t != "" {
			b.WriteString(t)
			b.WriteByte('\n')
		}
		for _, tc := range m.ToolCalls() {
			fmt.Fprintf(&b, "(tool call %s %s)\n", tc.Name, tc.Arguments)
		}
	}
	b.WriteString(pinnedClose)
	return b.String()
}

// StripPinnedCopy removes the copy of pinned messages a compaction wrote
// into summary (see the "pinned" details of a compaction entry).
func StripPinnedCopy(summary string) string {
	i := strings.Index(summary, pinnedOpen)
	if i < 0 {
		return summary
	}
	j := strings.Index(summary[i:], pinnedClose)
	if j < 0 {
		return summary
	}
	rest := strings.TrimLeft(summary[i+j+len(pinnedClose):], "\n")
	head := strings.TrimRight(summary[:i], "\n")
	if rest == "" {
		return head
	}
	if head == "" {
		return rest
	}
	return head + "\n\n" + rest
}

// pinnedCopyIDs returns the ids a compaction's details list as copied
// into its summary, nil for none.
func pinnedCopyIDs(c *Compaction) []string {
	if c == nil || c.Details == nil {
		return nil
	}
	switch v := c.Details["pinned"].(type) {
	case []string:
		return v
	case []any:
		ids := make([]string, 0, len(v))
		for _, x := range v {
			if s, ok := x.(string); ok {
				ids = append(ids, s)
			}
		}
		return ids
	}
	return nil
}

// Shortening.

// ShortenSummary shortens a Markdown summary to about maxTokens (chars/4)
// while keeping every heading: each section keeps its first lines in
// proportion to its size, and a marker line says how many lines it lost.
// A summary that already fits is returned unchanged. The result can still
// exceed maxTokens when the headings and markers alone do not fit.
func ShortenSummary(summary string, maxTokens int) string {
	if (jsontext.UTF16Len(summary)+3)/4 <= maxTokens {
		return summary
	}
	type section struct {
		heading string // "" for text before the first heading
		lines   []string
	}
	var secs []section
	cur := section{}
	for _, line := range strings.Split(summary, "\n") {
		if strings.HasPrefix(line, "#") {
			secs = append(secs, cur)
			cur = section{heading: line}
			continue
		}
		cur.lines = append(cur.lines, line)
	}
	secs = append(secs, cur)

	budget := maxTokens * 4
	fixed, body := 0, 0
	for _, s := range secs {
		if s.heading != "" {
			fixed += jsontext.UTF16Len(s.heading) + 1
		}
		for _, l := range s.lines {
			body += jsontext.UTF16Len(l) + 1
		}
	}
	// Room for the bodies, after the headings and one marker per section.
	room := budget - fixed - 40*len(secs)
	if room < 0 {
		room = 0
	}
	var b strings.Builder
	for _, s := range secs {
		if s.heading != "" {
			b.WriteString(s.heading)
			b.WriteByte('\n')
		}
		size := 0
		for _, l := range s.lines {
			size += jsontext.UTF16Len(l) + 1
		}
		share := 0
		if body > 0 {
			share = int(float64(room) * float64(size) / float64(body))
		}
		used, dropped, full := 0, 0, false
		for _, l := range s.lines {
			n := jsontext.UTF16Len(l) + 1
			if !full && used+n <= share {
				b.WriteString(l)
				b.WriteByte('\n')
				used += n
				continue
			}
			// A line longer than what is left of the share (a model's
			// answer may be one huge line) keeps its head when the rest
			// of the share is worth it.
			if !full && share-used >= 200 {
				b.WriteString(jsontext.CutUTF16(l, share-used-10))
				b.WriteString(" […]\n")
				full = true // the cut line is not counted as left out
				continue
			}
			full = true
			if strings.TrimSpace(l) != "" {
				dropped++
			}
		}
		if dropped > 0 {
			fmt.Fprintf(&b, "- [… %d line(s) left out to fit the context]\n\n", dropped)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// Section headings.

// TurnPrefixIntro separates, in a recorded summary, the summary of the
// history from that of the start of a turn the cut split (see
// Plan.IsSplitTurn).
const TurnPrefixIntro = "---\n\n**The current turn began before the kept messages. Its start:**\n\n"

// SplitTurnPrefix splits a recorded summary into the summary of the
// history and that of a split turn's start (after TurnPrefixIntro), ""
// when it has none. A summary merging an earlier one reads the two apart:
// the turn was cut once, and its start is history now.
func SplitTurnPrefix(summary string) (history, prefix string) {
	intro := strings.TrimSpace(TurnPrefixIntro)
	i := strings.LastIndex(summary, intro)
	if i < 0 {
		return summary, ""
	}
	return strings.TrimSpace(summary[:i]), strings.TrimSpace(summary[i+len(intro):])
}

// SummaryHeadingKey returns the form in which readers of a summary (the
// report, the extractive summarizer merging an earlier summary) compare a
// section heading with the names they know: lower case, "&" read as
// "and", a parenthesized tail ("Next Steps (WP14-WP20)") and a ":" tail
// ("Current Task: File Reorganization") dropped, surrounding punctuation
// and Markdown emphasis trimmed and inner spaces collapsed. Models name
// the same section in many ways; this is the one rule for seeing through
// the wording, so "## **Next steps:**" and "## Next Steps (later)" both
// read "next steps".
func SummaryHeadingKey(title string) string {
	t := strings.ToLower(strings.TrimSpace(title))
	t = strings.ReplaceAll(t, "&", "and")
	if i := strings.IndexByte(t, '('); i > 0 {
		t = t[:i]
	}
	if i := strings.IndexByte(t, ':'); i > 0 {
		t = t[:i]
	}
	return strings.Join(strings.Fields(strings.Trim(t, " .:-*_`")), " ")
}
