package facts

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// ContentWords returns the distinct words of s that carry its content,
// lower-cased, in the order they first appear, at most limit of them (all
// when limit is negative). A word is a run of letters, digits, '_', '-'
// and '.' ("lru.go", "dry-run") with the '-' and '.' at its ends trimmed;
// it counts when it has three characters or more ("csv", "api", "jwt"
// tell requests apart) and is not one of the commonest English words
// (CommonWord).
//
// Two texts sharing content words are about the same thing: the
// summarizer's review asks a summary to share them with the user's
// request, and the extractive summarizer matches the user's focus and a
// later message that overrides an earlier one with them.
func ContentWords(s string, limit int) []string {
	seen := make(map[string]bool)
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '-' && r != '.'
	}) {
		if limit >= 0 && len(out) == limit {
			break
		}
		w = strings.Trim(w, "-.")
		if utf8.RuneCountInString(w) < 3 || CommonWord(w) || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// CommonWord reports whether w, in lower case, is too common a word of
// English (or of requests: "please", "thanks") to tell two texts apart.
func CommonWord(w string) bool {
	switch w {
	case "the", "and", "for", "are", "but", "not", "you", "all", "any", "can", "had", "has", "her", "was",
		"one", "our", "out", "get", "got", "him", "his", "how", "now", "see", "way", "who", "did", "its",
		"let", "put", "say", "she", "too", "yes", "yet", "why", "off", "use", "it's", "i'm",
		"i'll", "that's", "don't", "we'll", "lets", "may", "might", "able":
		return true
	case "about", "above", "after", "again", "also", "been", "before", "being", "both", "could", "does",
		"doing", "done", "each", "from", "have", "having", "here", "into", "just", "like", "make", "more",
		"most", "much", "need", "only", "other", "over", "please", "same", "should", "some", "such", "sure",
		"than", "thank", "thanks", "that", "their", "them", "then", "there", "these", "they", "this",
		"those", "under", "very", "want", "what", "when", "where", "which", "while", "will", "with",
		"would", "your", "okay", "yeah", "still", "using", "let's":
		return true
	}
	return false
}
