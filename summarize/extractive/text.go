package extractive

import (
	"iter"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/compactkit/compact/internal/jsontext"
	"github.com/compactkit/compact/summarize/facts"
)

// normalizeNewlines turns CRLF and lone CR line ends into LF.
func normalizeNewlines(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}

// tokens estimates the tokens of a text: ceil(UTF-16 length / 4).
func tokens(s string) int { return unitsTokens(jsontext.UTF16Len(s)) }

// unitsTokens is the estimate for a text of n UTF-16 units.
func unitsTokens(n int) int { return (n + 3) / 4 }

// cutRunes returns s cut to at most n characters, with "…" appended when
// something was cut.
func cutRunes(s string, n int) string {
	if len(s) <= n || utf8.RuneCountInString(s) <= n {
		return s
	}
	return strings.TrimRightFunc(s[:jsontext.RuneOffset(s, n)], unicode.IsSpace) + "…"
}

// shorten keeps the first n characters of s and appends a marker saying
// how many of how many characters were left out. Text that fits is
// returned unchanged.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s // no more characters than bytes
	}
	total := utf8.RuneCountInString(s)
	if total <= n {
		return s
	}
	kept := strings.TrimRightFunc(s[:jsontext.RuneOffset(s, n)], unicode.IsSpace)
	left := total - utf8.RuneCountInString(kept)
	return kept + " " + leftOutMarker(left, total)
}

// leftOutMarker is the marker written where text was shortened.
func leftOutMarker(left, total int) string {
	return "[… " + strconv.Itoa(left) + " of " + strconv.Itoa(total) + " chars left out]"
}

// firstLines returns the first n non-empty lines of s joined by " ⏎ ",
// cut to max characters.
func firstLines(s string, n, max int) string {
	var out []string
	for l := range strings.SplitSeq(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
			if len(out) == n {
				break
			}
		}
	}
	return cutRunes(strings.Join(out, " ⏎ "), max)
}

// oneLine renders a command on one line: its first line, cut to 200
// characters, with a note of how many lines followed.
func oneLine(cmd string) string {
	cmd = strings.TrimSpace(normalizeNewlines(cmd))
	if cmd == "" {
		return "(command not recorded)"
	}
	lines := strings.Split(cmd, "\n")
	out := cutRunes(strings.TrimSpace(lines[0]), 200)
	if len(lines) > 1 {
		out += " …(+" + strconv.Itoa(len(lines)-1) + " lines)"
	}
	return out
}

// code renders s as an inline code span.
func code(s string) string {
	if !strings.Contains(s, "`") {
		return "`" + s + "`"
	}
	fence := "``"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence + " " + s + " " + fence
}

// bullet renders a list item whose text may span several lines: the first
// line after "- ", the others indented by two spaces (blank lines stay
// empty), so that no line of the text can be read as a heading.
func bullet(text string) string {
	lines := strings.Split(text, "\n")
	var b strings.Builder
	b.WriteString("- ")
	b.WriteString(strings.TrimRightFunc(lines[0], unicode.IsSpace))
	for _, l := range lines[1:] {
		b.WriteByte('\n')
		l = strings.TrimRightFunc(l, unicode.IsSpace)
		if l != "" {
			b.WriteString("  ")
			b.WriteString(l)
		}
	}
	return b.String()
}

// bulletUnits is jsontext.UTF16Len(bullet(text)), counted without building the
// list item: a summary weighs every user message against its budget,
// and most of a long history's are left out.
func bulletUnits(text string) int {
	n := 2 // "- "
	first := true
	for l := range strings.SplitSeq(text, "\n") {
		l = strings.TrimRightFunc(l, unicode.IsSpace)
		switch {
		case first:
			n += jsontext.UTF16Len(l)
			first = false
		case l != "":
			n += 3 + jsontext.UTF16Len(l) // the newline and two spaces
		default:
			n++ // the newline
		}
	}
	return n
}

// plural returns "1 thing" or "n things".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

var (
	// constraintWords find user sentences that state a rule or a wish.
	constraintWords = newPhrases("must", "mustn't", "never", "always", "don't", "dont", "do not", "doesn't",
		"does not", "prefer", "preferably", "should", "shouldn't", "make sure", "avoid", "only", "ensure",
		"required", "not allowed", "no need", "let's not", "lets not", "let us not", "stay away", "steer clear",
		"hands off", "not again", "no more", "leave it alone", "off limits", "whatever happens",
		"at all costs", "under no circumstances", "i'd rather", "i would rather")
	// decisionWords find assistant sentences that announce a choice.
	decisionWords = newPhrases("i'll use", "i will use", "we'll use", "we will use", "let's use", "let's go with",
		"instead", "decided", "decide to", "decision", "going with", "go with", "chose", "chosen", "switch to",
		"switched to", "switching to", "rather than", "opted", "opt for", "settled on", "the approach",
		"better approach")
	// planWords find assistant sentences that state what comes next.
	planWords = newPhrases("next", "then", "i will", "i'll", "we'll", "we will", "let me", "need to", "needs to",
		"todo", "remaining", "still need", "after that", "afterwards", "finally")
)

var abbreviations = map[string]bool{"e.g": true, "i.e": true, "etc": true, "vs": true, "cf": true, "approx": true}

// unfencedLines yields the non-empty lines of text outside fenced code
// blocks, trimmed. A line starting with ``` or ~~~ opens or closes a
// fence and is not yielded.
func unfencedLines(text string) iter.Seq[string] {
	return func(yield func(string) bool) {
		fence := false
		for l := range strings.SplitSeq(text, "\n") {
			t := strings.TrimSpace(l)
			if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
				fence = !fence
				continue
			}
			if fence || t == "" {
				continue
			}
			if !yield(t) {
				return
			}
		}
	}
}

// proseLines yields the lines of text outside fenced code blocks,
// trimmed, without list markers, skipping empty lines and very long ones
// (pasted logs rather than prose).
func proseLines(text string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for t := range unfencedLines(text) {
			if len(t) > 600 && utf8.RuneCountInString(t) > 600 {
				continue
			}
			t = strings.TrimSpace(stripListMarker(t))
			if t != "" && !yield(t) {
				return
			}
		}
	}
}

// sentences yields the sentences of a line, cut after '.', '!' or '?'
// followed by a space, except after common abbreviations, trimmed.
func sentences(line string) iter.Seq[string] {
	return func(yield func(string) bool) {
		start := 0
		for i := 0; i < len(line); i++ {
			c := line[i]
			if c != '.' && c != '!' && c != '?' {
				continue
			}
			if i+1 < len(line) && line[i+1] != ' ' {
				continue
			}
			if c == '.' {
				w := line[start:i]
				if j := strings.LastIndexByte(w, ' '); j >= 0 {
					w = w[j+1:]
				}
				if abbreviations[strings.ToLower(w)] {
					continue
				}
			}
			if s := strings.TrimSpace(line[start : i+1]); s != "" && !yield(s) {
				return
			}
			start = i + 1
		}
		if s := strings.TrimSpace(line[start:]); s != "" {
			yield(s)
		}
	}
}

// normalizeQuotes makes typographic apostrophes plain for matching.
func normalizeQuotes(s string) string {
	if !strings.Contains(s, "’") {
		return s
	}
	return strings.ReplaceAll(s, "’", "'")
}

// matchSentences returns the sentences of text's prose that contain one
// of the phrases, each cut to 300 characters.
//
// A line is matched as a whole first: a phrase found in one of its
// sentences is found in it too (a sentence starts and ends at a blank or
// its line's ends, and a phrase does not end with punctuation), so the
// sentences of the many lines without any are not looked at.
func matchSentences(text string, p *phrases) []string {
	var out []string
	for l := range proseLines(text) {
		if !p.match(l) {
			continue
		}
		for s := range sentences(l) {
			if p.match(s) {
				out = append(out, cutRunes(s, 300))
			}
		}
	}
	return out
}

// newestUnique keeps the last max distinct items (compared without case),
// in their original order.
func newestUnique(items []string, max int) []string {
	seen := make(map[string]bool)
	var rev []string
	for i := len(items) - 1; i >= 0 && len(rev) < max; i-- {
		k := strings.ToLower(items[i])
		if seen[k] {
			continue
		}
		seen[k] = true
		rev = append(rev, items[i])
	}
	out := make([]string, len(rev))
	for i, s := range rev {
		out[len(rev)-1-i] = s
	}
	return out
}

// focusWords returns the distinct words of the instructions worth matching
// against messages (facts.ContentWords, without the words that only ask
// for a summary: "focus", "keep", "summary", "summarize"), sorted.
func focusWords(instructions string) []string {
	var out []string
	for _, w := range facts.ContentWords(instructions, -1) {
		switch w {
		case "focus", "keep", "summary", "summarize":
			continue
		}
		out = append(out, w)
	}
	sort.Strings(out)
	return out
}
