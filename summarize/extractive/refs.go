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

// refState is what a user message can point back at: the assistant's
// texts so far (their numbered lists and statements are read only when a
// message points back, which few do) and the latest file a tool touched.
type refState struct {
	texts []string
	file  string
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
	// Cheap tests first: most messages point at nothing, and the
	// expressions are slow on long text.
	if len(st.texts) > 0 && refOrdinals.match(text) {
		notes = st.ordinal(text, notes)
	}
	if st.file != "" && refFile.match(text) {
		if m := fileRe.FindString(text); m != "" {
			notes = append(notes, m+": "+st.file)
		}
	}
	if refRedo.match(text) {
		notes = st.redo(text, notes)
	}
	if len(notes) == 0 {
		return text
	}
	return text + " [" + strings.Join(notes, "; ") + "]"
}

// Words that must be in a message for a reference of each kind to be
// looked for.
var (
	refOrdinals = newPhrases("option", "one", "approach", "choice", "proposal", "suggestion", "way", "number")
	refFile     = newPhrases("file")
	refRedo     = newPhrases("what you did", "same thing as", "same change as", "same fix as", "like the", "like you did")
)

// ordinal appends what "the second option" of text points at.
func (st *refState) ordinal(text string, notes []string) []string {
	list := st.latestList()
	if m := ordinalRe.FindStringSubmatch(text); m != nil && len(list) > 0 {
		n := ordinalIndex[strings.ToLower(m[1])]
		if m[2] != "" {
			n = int(m[2][0] - '0')
		}
		if strings.EqualFold(m[1], "last") {
			n = len(list)
		}
		if n >= 1 && n <= len(list) {
			notes = append(notes, strings.TrimSpace(m[0])+": "+list[n-1])
		}
	}
	return notes
}

// redo appends what "do what you did for the parser" of text points at.
func (st *refState) redo(text string, notes []string) []string {
	if m := redoRe.FindStringSubmatch(text); m != nil {
		what := strings.ToLower(strings.TrimRight(m[1], ".,;:"))
		word := regexp.MustCompile(`(?i)\b` + regexp.QuoteMeta(what) + `\b`)
		if s := st.latestStatement(word); s != "" && !facts.CommonWord(what) {
			notes = append(notes, "what was done for the "+what+": "+cutRunes(s, 200))
		}
	}
	return notes
}

// note records an assistant text.
func (st *refState) note(text string) { st.texts = append(st.texts, text) }

// latestList returns the items of the assistant's latest numbered list.
func (st *refState) latestList() []string {
	for i := len(st.texts) - 1; i >= 0; i-- {
		var items []string
		for l := range unfencedLines(st.texts[i]) {
			if numbered(l) {
				items = append(items, cutRunes(strings.TrimSpace(stripListMarker(l)), 200))
			}
		}
		if len(items) > 0 {
			return items
		}
	}
	return nil
}

// latestStatement returns the assistant's latest statement in the first
// person ("I replaced …") that word matches, "" if none.
func (st *refState) latestStatement(word *regexp.Regexp) string {
	for i := len(st.texts) - 1; i >= 0; i-- {
		if !word.MatchString(st.texts[i]) {
			continue
		}
		var found string
		for l := range proseLines(st.texts[i]) {
			for s := range sentences(l) {
				if strings.Contains(" "+s, " I ") && word.MatchString(s) {
					found = s
				}
			}
		}
		if found != "" {
			return found
		}
	}
	return ""
}
