package compact

import (
	"fmt"
	"strings"
)

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
