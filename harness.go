package compact

import "strings"

// The tags around a reminder that Claude Code writes into the user's turn:
// into a prompt's text, as a text block of its own beside the prompt, and
// into tool results. The model reads them; they are not the user's words.
const (
	reminderOpen  = "<system-reminder>"
	reminderClose = "</system-reminder>"
)

// PartRun is a stretch of a user message's parts: the user's own parts, or
// reminder blocks (see SplitReminders).
type PartRun struct {
	// Parts are the parts of the run, in the order written.
	Parts []Part
	// Reminder is set when every part of the run is one
	// <system-reminder>…</system-reminder> block, tags included.
	Reminder bool
}

// SplitReminders splits the parts of a user message into runs of the
// user's own parts and of the <system-reminder>…</system-reminder> blocks
// Claude Code embeds in their text, in the order written. A text part
// holding a complete block is cut around it: the block becomes a part of
// its own, and the user's text on either side loses only its surrounding
// blank space. An opening tag without its closing tag is left in the
// user's text. Parts holding no reminder come back as one run of the same
// parts; no parts give no runs.
//
// Readers turn a reminder run into a harness note (see HarnessNotePrefix),
// so that summaries never quote a reminder as the user's request.
func SplitReminders(parts []Part) []PartRun {
	var runs []PartRun
	add := func(p Part, reminder bool) {
		if n := len(runs); n > 0 && runs[n-1].Reminder == reminder {
			runs[n-1].Parts = append(runs[n-1].Parts, p)
			return
		}
		runs = append(runs, PartRun{Parts: []Part{p}, Reminder: reminder})
	}
	for _, p := range parts {
		if p.Type != PartText || !strings.Contains(p.Text, reminderOpen) {
			add(p, false)
			continue
		}
		s := p.Text
		for {
			i := strings.Index(s, reminderOpen)
			j := -1
			if i >= 0 {
				j = strings.Index(s[i:], reminderClose)
			}
			if j < 0 {
				if t := strings.TrimSpace(s); t != "" {
					q := p
					q.Text = t
					add(q, false)
				}
				break
			}
			if t := strings.TrimSpace(s[:i]); t != "" {
				q := p
				q.Text = t
				add(q, false)
			}
			q := p
			q.Text = s[i : i+j+len(reminderClose)]
			add(q, true)
			s = s[i+j+len(reminderClose):]
		}
	}
	return runs
}

// WithoutReminders returns s without its complete
// <system-reminder>…</system-reminder> blocks (see SplitReminders), the
// user's text on either side of each block joined by a blank line; s
// itself when it holds none.
func WithoutReminders(s string) string {
	if !strings.Contains(s, reminderOpen) {
		return s
	}
	var kept []string
	for _, r := range SplitReminders([]Part{{Type: PartText, Text: s}}) {
		if !r.Reminder {
			for _, p := range r.Parts {
				kept = append(kept, p.Text)
			}
		}
	}
	return strings.Join(kept, "\n\n")
}
