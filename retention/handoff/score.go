package handoff

import (
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/retention"
)

// SupersededMarks are the words that mark a line as speaking of a
// withdrawn decision: a superseded decision on a line holding one of them
// is shown as history, not as current. The first seven are the words a
// summary is expected to use; the others are the user's own words of
// withdrawal, so that a verbatim quote of the override counts as marked.
var SupersededMarks = []string{
	"superseded", "withdrawn", "replaced", "instead of", "no longer", "dropped", "rejected",
	"scratch that", "let's not", "on second thought", "rather than", "don't want", "picks up", "is out",
}

// tally counts one item into r: found, or missing under the name what.
func tally(r *retention.Recall, found bool, what string) {
	r.Total++
	if found {
		r.Found++
	} else {
		r.Missing = append(r.Missing, what)
	}
}

// Score is how well one context carries a case's truth.
type Score struct {
	// Items are the goal, the open items, the forbidden actions, the
	// facts, the final decision and the referents (Truth.Items).
	Items retention.Recall `json:"items"`
	// Final is the decision in force (a total of 0 or 1).
	Final retention.Recall `json:"final"`
	// Superseded counts the withdrawn decisions handled (absent, or
	// marked wherever they appear); Shown names those shown as current:
	// unmarked under a Goal or Key Decisions heading.
	Superseded retention.Recall `json:"superseded"`
	Shown      []string         `json:"shownAsCurrent,omitempty"`
	// Roles are the owners kept on one line with their task.
	Roles retention.Recall `json:"roles"`
	// TokensBefore and TokensAfter are the context before and after the
	// compaction (compact.Measure).
	TokensBefore int `json:"tokensBefore"`
	TokensAfter  int `json:"tokensAfter"`
	// Compacted is false when no compaction was written (nothing to
	// compact, or the engine declined); Grew is set when one was written
	// and the context is not smaller than before.
	Compacted bool `json:"compacted"`
	Grew      bool `json:"grew,omitempty"`
	// CriticalKept is set when a turn stating the truth was kept
	// verbatim rather than summarized: the case did not test the
	// summary. Only the first cycle can set it.
	CriticalKept bool `json:"criticalKept,omitempty"`
}

// Ratio is TokensAfter as a share of TokensBefore, in percent.
func (s *Score) Ratio() float64 {
	if s.TokensBefore == 0 {
		return 0
	}
	return 100 * float64(s.TokensAfter) / float64(s.TokensBefore)
}

// line is one line of a context, folded, with the summary headings it
// stands under ("" outside a summary) and the role of its message.
type line struct {
	text    string
	section string // the "## " heading
	sub     string // the "### " heading under it, if any
	role    compact.Role
}

// Text is the text of a context as ScoreContext reads it: the whole of it
// folded (retention.ContextText, lowercased) and its lines.
type Text struct {
	whole string
	lines []line
}

// ReadContext returns the text of c: every message's text, line by line,
// each line of a summary under the "## " and "### " headings it follows
// and a list item of a summary with its indented continuation lines as
// one line, and each tool call's name and arguments (raw JSON) as a line
// of its own.
func ReadContext(c *compact.Context) *Text {
	t := &Text{whole: strings.ToLower(retention.ContextText(c))}
	for _, m := range c.Messages {
		summary := m.Role == compact.RoleCompactionSummary || m.Role == compact.RoleBranchSummary
		section, sub := "", ""
		bullet := false // the last line began a list item
		for _, l := range strings.Split(m.Text(), "\n") {
			switch {
			case summary && strings.HasPrefix(l, "## "):
				section, sub = fold(strings.TrimPrefix(l, "## ")), ""
			case summary && strings.HasPrefix(l, "### "):
				sub = fold(strings.TrimPrefix(l, "### "))
			}
			f := fold(l)
			if f == "" {
				bullet = false
				continue
			}
			if summary && bullet && (l[0] == ' ' || l[0] == '\t') {
				// An indented line continues the list item above it.
				t.lines[len(t.lines)-1].text += " " + f
				continue
			}
			bullet = summary && (strings.HasPrefix(f, "- ") || strings.HasPrefix(f, "* "))
			t.lines = append(t.lines, line{text: f, section: section, sub: sub, role: m.Role})
		}
		for _, call := range m.ToolCalls() {
			t.lines = append(t.lines, line{text: fold(call.Name + " " + string(call.Arguments)), role: m.Role})
		}
	}
	return t
}

func hasAll(l string, keys []string) bool {
	for _, k := range keys {
		if !strings.Contains(l, strings.ToLower(k)) {
			return false
		}
	}
	return len(keys) > 0
}

// Has reports whether the text holds the item: its text anywhere (case and
// blanks aside), or all its key words on one line.
func (t *Text) Has(it Item) bool {
	if f := fold(it.Text); f != "" && strings.Contains(t.whole, f) {
		return true
	}
	for _, l := range t.lines {
		if hasAll(l.text, it.Keys) {
			return true
		}
	}
	return false
}

// hasWhere reports whether a line that where accepts holds all the
// item's key words, or its text.
func (t *Text) hasWhere(it Item, where func(line) bool) bool {
	f := fold(it.Text)
	for _, l := range t.lines {
		if where(l) && (hasAll(l.text, it.Keys) || f != "" && strings.Contains(l.text, f)) {
			return true
		}
	}
	return false
}

// summaryLine reports whether l stands in a summary under a "## " or
// "### " heading that starts with one of the prefixes (folded).
func summaryLine(l line, prefixes ...string) bool {
	if !l.inSummary() {
		return false
	}
	for _, p := range prefixes {
		if strings.HasPrefix(l.section, p) || strings.HasPrefix(l.sub, p) {
			return true
		}
	}
	return false
}

func (l line) inSummary() bool {
	return l.role == compact.RoleCompactionSummary || l.role == compact.RoleBranchSummary
}

// HasRole reports whether one line holds the owner and every task key.
func (t *Text) HasRole(r Role) bool {
	keys := append([]string{r.Owner}, r.TaskKeys...)
	for _, l := range t.lines {
		if hasAll(l.text, keys) {
			return true
		}
	}
	return false
}

// Superseded reports how the text holds a withdrawn item: handled when
// every line holding its key words also holds a mark (or none does),
// shown when such a line without a mark stands under a Goal or Key
// Decisions heading.
func (t *Text) Superseded(it Item) (handled, shown bool) {
	handled = true
	for _, l := range t.lines {
		if !hasAll(l.text, it.Keys) || marked(l.text) {
			continue
		}
		handled = false
		if strings.HasPrefix(l.section, "goal") || strings.HasPrefix(l.section, "key decisions") {
			shown = true
		}
	}
	return handled, shown
}

func marked(l string) bool {
	for _, m := range SupersededMarks {
		if strings.Contains(l, m) {
			return true
		}
	}
	return false
}

// ScoreContext scores the context after a compaction against c's truth;
// before is the context the compaction started from (for the
// compression), nil when unknown.
func ScoreContext(c *Case, before, after *compact.Context) Score {
	s := ScoreTruth(&c.Truth, ReadContext(after))
	if before != nil {
		s.TokensBefore = compact.Measure(before).Tokens
	}
	s.TokensAfter = compact.Measure(after).Tokens
	return s
}

// ScoreTruth scores a text against a truth; the token counts are left
// zero.
func ScoreTruth(truth *Truth, t *Text) Score {
	var s Score
	for _, it := range truth.Items() {
		tally(&s.Items, t.Has(it), it.Text)
	}
	if truth.Final != nil {
		tally(&s.Final, t.Has(*truth.Final), truth.Final.Text)
	}
	for _, it := range truth.Superseded {
		handled, shown := t.Superseded(it)
		tally(&s.Superseded, handled, it.Text)
		if shown {
			s.Shown = append(s.Shown, it.Text)
		}
	}
	for _, r := range truth.Roles {
		tally(&s.Roles, t.HasRole(r), r.Owner+": "+r.Task)
	}
	return s
}
