package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsontext"
	"github.com/compactkit/compact/internal/numfmt"
)

// writeJSON prints v as indented JSON without HTML escaping.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// groupDigits adds thousands separators to the numbers inside a sentence
// written by the library ("reduced from ~19945 to ~5275 tokens" becomes
// "reduced from ~19,945 to ~5,275 tokens"), so that human output groups
// digits everywhere. Only free-standing runs of digits are changed: a run
// that touches a letter, a digit separator or a path character (an entry
// id such as 1a2b3c4d, a file name, a decimal) is left alone, except a
// count written before "-token".
func groupDigits(s string) string {
	var b strings.Builder
	word := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("_./-:,#", c) >= 0
	}
	for i := 0; i < len(s); {
		if s[i] < '0' || s[i] > '9' || i > 0 && word(s[i-1]) {
			j := i + 1
			for j < len(s) && (s[j] < '0' || s[j] > '9' || word(s[j-1])) {
				j++
			}
			b.WriteString(s[i:j])
			i = j
			continue
		}
		j := i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		run := s[i:j]
		next := byte(' ')
		if j < len(s) {
			next = s[j]
		}
		n, err := strconv.Atoi(run)
		// A trailing '.' or ',' ends a sentence or clause; one followed by a
		// digit is a decimal or an already grouped number.
		endsClause := (next == '.' || next == ',') && (j+1 >= len(s) || s[j+1] < '0' || s[j+1] > '9')
		// "200000-token window" is a count too.
		counted := strings.HasPrefix(s[j:], "-token")
		if err != nil || len(run) < 4 || run[0] == '0' || (word(next) && !endsClause && !counted) {
			b.WriteString(run)
		} else {
			b.WriteString(numfmt.Thousands(n))
		}
		i = j
	}
	return b.String()
}

// plural returns "1 message" or "3 messages".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	if strings.HasSuffix(word, "y") {
		return numfmt.Thousands(n) + " " + strings.TrimSuffix(word, "y") + "ies"
	}
	return numfmt.Thousands(n) + " " + word + "s"
}

// yesNo renders a boolean for people.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// percent returns part as a percentage of whole, rounded to 0.1.
func percent(part, whole int) float64 {
	if whole <= 0 {
		return 0
	}
	return float64(int(float64(part)*1000/float64(whole)+0.5)) / 10
}

// shorten cuts s to about limit characters, on a rune boundary, and says
// how much was left out. limit <= 0 keeps everything.
func shorten(s string, limit int) string {
	if limit <= 0 || utf8.RuneCountInString(s) <= limit {
		return s
	}
	cut := jsontext.RuneOffset(s, limit)
	rest := utf8.RuneCountInString(s[cut:])
	return strings.TrimRight(s[:cut], " \n\t") + fmt.Sprintf("\n[... %s more characters; --full shows everything]", numfmt.Thousands(rest))
}

// preview returns the first line-worth of s, whitespace folded, cut to
// limit runes with an ellipsis.
func preview(s string, limit int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	r := []rune(s)
	return string(r[:limit-1]) + "…"
}

// compactJSON returns raw JSON on one line; invalid JSON is returned as it
// is.
func compactJSON(raw []byte) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// roleLabel is the bracketed label of a message in listings: the role,
// plus the tool name for tool results and a note for failures.
func roleLabel(m *compact.Message) string {
	switch m.Role {
	case compact.RoleToolResult:
		l := "toolResult " + m.ToolName
		if m.IsError {
			l += ", error"
		}
		return l
	case compact.RoleCompactionSummary:
		return "compactionSummary, sent as user"
	case compact.RoleBranchSummary:
		return "branchSummary, sent as user"
	case compact.RoleCustom:
		if ct := m.Metadata().CustomType; ct != "" {
			return "custom " + ct
		}
	case compact.RoleAssistant:
		if m.StopReason == compact.StopError || m.StopReason == compact.StopAborted {
			return "assistant, " + string(m.StopReason)
		}
	}
	return string(m.Role)
}

// messageText renders a message for people: text, thinking, tool calls as
// name(arguments), images as a placeholder, shell commands with their exit
// status.
func messageText(m *compact.Message) string {
	var parts []string
	switch m.Role {
	case compact.RoleBash:
		run := m.Metadata()
		s := "$ " + run.Command
		if run.Output != "" {
			s += "\n" + strings.TrimRight(run.Output, "\n")
		}
		switch {
		case run.Cancelled:
			s += "\n(cancelled)"
		case run.ExitCode != nil:
			s += fmt.Sprintf("\n(exit %d)", *run.ExitCode)
		}
		if run.ExcludeFromContext {
			s += "\n(excluded from the context)"
		}
		return s
	case compact.RoleCompactionSummary:
		return compact.SummaryText(m.Text())
	}
	for _, p := range m.Content {
		switch p.Type {
		case compact.PartText:
			parts = append(parts, p.Text)
		case compact.PartThinking:
			if strings.TrimSpace(p.Thinking) != "" {
				parts = append(parts, "(thinking) "+p.Thinking)
			}
		case compact.PartImage:
			parts = append(parts, fmt.Sprintf("[image %s]", p.Picture().MimeType))
		case compact.PartToolCall:
			if p.ToolCall != nil {
				parts = append(parts, fmt.Sprintf("%s(%s)", p.ToolCall.Name, compactJSON(p.ToolCall.Arguments)))
			}
		default:
			if p.Text != "" {
				parts = append(parts, p.Text)
			}
		}
	}
	if em := m.Metadata().ErrorMessage; em != "" {
		parts = append(parts, "(error) "+em)
	}
	return strings.Join(parts, "\n")
}

// entryPreview is a one-line description of any entry, for the tree.
func entryPreview(e *compact.Entry) string {
	m := e.Metadata()
	switch e.Kind {
	case compact.KindCompaction:
		if e.Compaction != nil {
			return compact.StripFileLists(e.Compaction.Summary)
		}
	case compact.KindModelChange:
		return m.Provider + "/" + m.ModelID
	case compact.KindThinkingLevelChange:
		return m.ThinkingLevel
	case compact.KindLabel:
		if m.Label == "" {
			return "clear label of " + m.TargetID
		}
		return fmt.Sprintf("%q on %s", m.Label, m.TargetID)
	case compact.KindSessionInfo:
		return m.Name
	case compact.KindCustom:
		return m.CustomType
	}
	if e.Message != nil {
		m := e.Message
		if m.Role == compact.RoleAssistant {
			// Prefer what the assistant said; fall back to its tool calls.
			if t := strings.TrimSpace(m.Text()); t != "" {
				return t
			}
		}
		return messageText(m)
	}
	return ""
}
