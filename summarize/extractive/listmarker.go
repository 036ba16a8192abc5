package extractive

// List markers are read by hand rather than with regular expressions:
// every line of every message is looked at, and the expressions cost an
// allocation and a backtracking run per line. listmarker_test.go holds
// the expressions these functions stand for.

// listMarkerLen is the length of the list, quote or heading marker that
// starts a line, 0 when none: "- " or "* " or "+ " with an optional
// checkbox ("[ ] ", "[x] ", "[~] "), "1. " or "1) ", ">" and "#"s
// followed by blanks. Blanks are ASCII space, tab, CR, LF and form feed,
// and a marker takes all that follow it.
func listMarkerLen(t string) int {
	if t == "" {
		return 0
	}
	switch c := t[0]; {
	case c == '-' || c == '*' || c == '+':
		n := 1 + blanks(t[1:])
		if n == 1 {
			return 0
		}
		if len(t) >= n+3 && t[n] == '[' && (t[n+1] == ' ' || t[n+1] == 'x' || t[n+1] == 'X' || t[n+1] == '~') && t[n+2] == ']' {
			if m := blanks(t[n+3:]); m > 0 {
				return n + 3 + m
			}
		}
		return n
	case c >= '0' && c <= '9':
		return numberMarkerLen(t)
	case c == '>':
		return 1 + blanks(t[1:])
	case c == '#':
		n := 1
		for n < len(t) && t[n] == '#' {
			n++
		}
		if m := blanks(t[n:]); m > 0 {
			return n + m
		}
	}
	return 0
}

// numberMarkerLen is the length of a "1. " or "1) " marker with the
// blanks after it at the start of t, 0 when none.
func numberMarkerLen(t string) int {
	n := 0
	for n < len(t) && t[n] >= '0' && t[n] <= '9' {
		n++
	}
	if n == 0 || n == len(t) || t[n] != '.' && t[n] != ')' {
		return 0
	}
	if m := blanks(t[n+1:]); m > 0 {
		return n + 1 + m
	}
	return 0
}

// blanks counts the blanks (as a regexp's \s: space, tab, CR, LF, form
// feed) at the start of s.
func blanks(s string) int {
	n := 0
	for n < len(s) {
		switch s[n] {
		case ' ', '\t', '\r', '\n', '\f':
			n++
		default:
			return n
		}
	}
	return n
}

// stripListMarker removes a list, quote or heading marker from the start
// of a line.
func stripListMarker(t string) string { return t[listMarkerLen(t):] }

// numbered reports whether a line is a numbered list item: a "1. " or
// "1) " marker followed by text.
func numbered(t string) bool {
	n := numberMarkerLen(t)
	return n > 0 && n < len(t)
}
