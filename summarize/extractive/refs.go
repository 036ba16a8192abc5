package extractive

import (
	"regexp"
	"strings"

	"github.com/compactkit/compact/summarize/facts"
)

// A user message that points back ("the second option", "that file",
// "do what you did for the parser to the lexer") is quoted with what it
// points at, in brackets after the user's words: once the messages it
// points into are summarized away, "the second option" names nothing.

// refState is what a user message can point back at: the items of the
// assistant's latest numbered list, the latest file a tool touched, and
// the assistant's statements so far.
type refState struct {
	list       []string
	file       string
	statements []string
}

var (
	// ordinalRe finds "the second option", "the 2nd one", "option 2".
	ordinalRe = regexp.MustCompile(`(?i)\b(?:the\s+)?(first|second|third|fourth|fifth|last|1st|2nd|3rd|4th|5th)\s+(?:option|one|approach|choice|proposal|suggestion|way)\b|\b(?:option|approach|choice|number|#)\s*([1-9])\b`)
	// fileRe finds "that file", "this file".
	fileRe = regexp.MustCompile(`(?i)\b(?:that|this|the same)\s+file\b`)
	// redoRe finds the source of a redo: "what you did for the parser",
	// "like the parser", "same change as the parser".
	redoRe = regexp.MustCompile(`(?i)\b(?:what you did (?:for|to|with|in)\s+(?:the\s+)?|same (?:thing|change|fix) as\s+(?:the\s+)?|like (?:you did (?:for|with|to)\s+)?the\s+)([\w./-]{3,}(?:\s+layer)?)`)
)

var ordinalIndex = map[string]int{"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "fifth": 5, "5th": 5}

// resolve returns text with what its references point at appended in
// brackets ("[the second option: a token bucket per client]"), text
// itself when it points at nothing it can resolve.
func (st *refState) resolve(text string) string {
	var notes []string
	if m := ordinalRe.FindStringSubmatch(text); m != nil && len(st.list) > 0 {
		n := ordinalIndex[strings.ToLower(m[1])]
		if m[2] != "" {
			n = int(m[2][0] - '0')
		}
		if strings.EqualFold(m[1], "last") {
			n = len(st.list)
		}
		if n >= 1 && n <= len(st.list) {
			notes = append(notes, strings.TrimSpace(m[0])+": "+st.list[n-1])
		}
	}
	if m := fileRe.FindString(text); m != "" && st.file != "" {
		notes = append(notes, m+": "+st.file)
	}
	if m := redoRe.FindStringSubmatch(text); m != nil {
		what := strings.ToLower(strings.TrimRight(m[1], ".,;:"))
		word := regexp.MustCompile(`(?i)\b` + regexp.QuoteMeta(what) + `\b`)
		for i := len(st.statements) - 1; i >= 0 && !facts.CommonWord(what); i-- {
			if s := st.statements[i]; word.MatchString(s) {
				notes = append(notes, "what was done for the "+what+": "+cutRunes(s, 200))
				break
			}
		}
	}
	if len(notes) == 0 {
		return text
	}
	return text + " [" + strings.Join(notes, "; ") + "]"
}

// note records an assistant text: its numbered list, if it has one, and
// its statements in the first person ("I replaced …").
func (st *refState) note(text string) {
	var items []string
	for l := range unfencedLines(text) {
		if numbered(l) {
			items = append(items, cutRunes(strings.TrimSpace(stripListMarker(l)), 200))
		}
	}
	if len(items) > 0 {
		st.list = items
	}
	for l := range proseLines(text) {
		for s := range sentences(l) {
			if strings.Contains(" "+s, " I ") && len(st.statements) < 10000 {
				st.statements = append(st.statements, s)
			}
		}
	}
}
