package facts

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Normalize collapses every run of blanks (spaces, tabs, line breaks) to
// one space and trims the ends. Facts are looked up in normalized text,
// so that a fact quoted with another line layout (a list item's indent, a
// line joined with the next) still counts as present.
func Normalize(s string) string {
	if normalized(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Contains reports whether needle occurs in text (both normalized by the
// caller) as a whole token: when needle begins with a letter, digit or
// underscore, the character before the occurrence must not be one, and
// likewise at its end, where a '-' or '.' followed by such a character
// continues the token too. So "100" is not found in "1000", nor "v1" in
// "v12" or "v1.2", nor "--dry-run" in "--dry-run-x".
func Contains(text, needle string) bool {
	if needle == "" {
		return true
	}
	first, _ := utf8.DecodeRuneInString(needle)
	last, _ := utf8.DecodeLastRuneInString(needle)
	checkStart, checkEnd := wordRune(first), wordRune(last)
	for from := 0; from <= len(text)-len(needle); {
		i := strings.Index(text[from:], needle)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(needle)
		ok := true
		if checkStart && i > 0 {
			r, _ := utf8.DecodeLastRuneInString(text[:i])
			ok = !wordRune(r)
		}
		if ok && checkEnd && end < len(text) {
			r, size := utf8.DecodeRuneInString(text[end:])
			ok = !wordRune(r)
			if ok && (r == '-' || r == '.') && end+size < len(text) {
				// "--dry-run-x" and "v1.2" continue the token.
				next, _ := utf8.DecodeRuneInString(text[end+size:])
				ok = !wordRune(next)
			}
		}
		if ok {
			return true
		}
		_, size := utf8.DecodeRuneInString(text[i:])
		from = i + size
	}
	return false
}

// normalized reports whether Normalize would return s unchanged, for
// ASCII text: no blank at either end, no blank but single spaces. Most
// lines of tool output are so, and need no copy. Text with other bytes is
// left to Normalize, which also replaces invalid UTF-8.
func normalized(s string) bool {
	if s == "" {
		return true
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 0x80, c == '\t', c == '\n', c == '\v', c == '\f', c == '\r':
			return false
		case c == ' ' && s[i+1] == ' ': // s does not end with a space
			return false
		}
	}
	return true
}

func wordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}
