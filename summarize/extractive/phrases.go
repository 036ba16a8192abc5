package extractive

import "strings"

// phrases is a list of lower-case words or word groups to look for. The
// list is indexed by first letter, so that a sentence is read once for
// all of its phrases, at the starts of its words, instead of once per
// phrase; it is built once and never changed.
type phrases struct {
	byFirst [256][]string
}

// newPhrases indexes a list of phrases. Each phrase must start and end
// with a lower-case ASCII letter and hold only ASCII: a match then always
// starts at the start of a word, which is where match looks, and ends at
// the end of one (matchSentences relies on it).
func newPhrases(list ...string) *phrases {
	p := &phrases{}
	for _, ph := range list {
		if ph == "" || !lowerLetter(ph[0]) || !lowerLetter(ph[len(ph)-1]) || !isASCII(ph) || strings.ToLower(ph) != ph {
			panic("extractive: phrase " + ph + " is not lower-case ASCII starting and ending with a letter")
		}
		p.byFirst[ph[0]] = append(p.byFirst[ph[0]], ph)
	}
	return p
}

// match reports whether s contains one of the phrases as whole words,
// ignoring case and typographic apostrophes. ASCII text is compared
// folding case byte by byte, without a lower-cased copy; other text is
// lower-cased first, since Unicode case mapping can turn a non-ASCII
// letter into an ASCII one (the Kelvin sign into "k").
func (p *phrases) match(s string) bool {
	l := s
	if !isASCII(s) {
		l = strings.ToLower(normalizeQuotes(s))
	}
	inWord := false
	for i := 0; i < len(l); i++ {
		c := l[i]
		if inWord {
			inWord = wordChar(c)
			continue // not the start of a word
		}
		inWord = wordChar(c)
		for _, ph := range p.byFirst[lowerASCII(c)] {
			if hasPrefixFold(l[i:], ph) && !wordByte(l, i+len(ph)) {
				return true
			}
		}
	}
	return false
}

func lowerLetter(c byte) bool { return c >= 'a' && c <= 'z' }

// wordChar reports whether c is an ASCII letter, digit or underscore.
func wordChar(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// hasPrefixFold reports whether s starts with the lower-case ASCII
// prefix, ASCII letters of s compared without regard to case.
func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if lowerASCII(s[i]) != prefix[i] {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// wordByte reports whether l[i] exists and is an ASCII letter, digit or
// underscore (what a regexp \b treats as a word character).
func wordByte(l string, i int) bool {
	if i < 0 || i >= len(l) {
		return false
	}
	return wordChar(l[i])
}
