package compact

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

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

// OrphanResultKind is the kind of harness note (see HarnessNotePrefix)
// that stands for a tool result whose call the conversation does not
// hold: see OrphanResult.
const OrphanResultKind = "orphan_result"

// orphanLabelMax caps the tool name and id an orphan result's first line
// quotes from the file, in bytes.
const orphanLabelMax = 200

// OrphanResult returns the harness note that a reader of agent's format
// ("claude-code", "codex", ...) makes of r, a tool result whose call the
// conversation does not hold: the call was lost, cut by the agent's own
// truncation or condensation, or the result names a call that never was.
//
// Such a result cannot stay a RoleToolResult message, since providers
// reject a result without its call, and it is not the user's words
// either, so summaries must never quote it as the user's request. The
// note is a RoleCustom message of CustomType
// "harness:<agent>:orphan_result" whose text begins with a line naming
// what it is and which call it answered, for example
//
//	[tool result without its call: read_file (toolu_01)]
//
// followed by r's content; the model still sees all of it as user text
// (see ForModel). The note keeps r's Timestamp, Extra (shared, not
// copied) and Details; a failed result says so in its first line. Tool
// name and id are taken from r.ToolName and r.ToolCallID, each cut to one
// line of at most 200 bytes; when both are empty the line names none.
// r is not modified.
func OrphanResult(agent string, r *Message) *Message {
	var label []string
	if s := orphanLabel(r.ToolName); s != "" {
		label = append(label, s)
	}
	if s := orphanLabel(r.ToolCallID); s != "" {
		if len(label) > 0 {
			s = "(" + s + ")"
		}
		label = append(label, s)
	}
	head := "[tool result without its call"
	if len(label) > 0 {
		head += ": " + strings.Join(label, " ")
	}
	if r.IsError {
		head += "; it reports an error"
	}
	head += "]"

	content := make([]Part, 0, len(r.Content)+1)
	if len(r.Content) > 0 && r.Content[0].Type == PartText {
		p := r.Content[0]
		if p.Text != "" {
			p.Text = head + "\n" + p.Text
		} else {
			p.Text = head
		}
		content = append(content, p)
		content = append(content, r.Content[1:]...)
	} else {
		content = append(content, Part{Type: PartText, Text: head})
		content = append(content, r.Content...)
	}
	m := &Message{
		Role:      RoleCustom,
		Content:   content,
		Timestamp: r.Timestamp,
		Extra:     r.Extra,
		Meta:      &MessageMeta{CustomType: HarnessNoteType(agent, OrphanResultKind)},
	}
	if r.Meta != nil {
		m.Meta.Details = r.Meta.Details
	}
	return m
}

// orphanLabel returns s as OrphanResult quotes it: control characters
// turned into spaces, blank space around it trimmed, at most
// orphanLabelMax bytes (cut on a character boundary).
func orphanLabel(s string) string {
	s = strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s))
	if len(s) > orphanLabelMax {
		n := orphanLabelMax
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	return s
}

// IsInterruptionNotice reports whether s, a user turn's text, is the
// notice an agent writes there when the user interrupted the model ("[Request
// interrupted by user]", "[Request interrupted by user for tool use]" in
// Claude Code) rather than words of the user. A reader marks it as a
// harness note; text that reaches compact unmarked (through the proxy) is
// recognised here, so that no summary takes it for a request.
func IsInterruptionNotice(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "[Request interrupted by user") && strings.HasSuffix(s, "]") && !strings.Contains(s, "\n")
}
