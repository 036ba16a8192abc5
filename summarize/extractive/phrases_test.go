package extractive

import (
	"strings"
	"testing"
)

// referenceMatch is the plain way to match phrases: lower-case the text
// and look for each phrase, as whole words.
func referenceMatch(list []string, s string) bool {
	l := strings.ToLower(strings.ReplaceAll(s, "’", "'"))
	for _, ph := range list {
		for i := 0; i < len(l); {
			j := strings.Index(l[i:], ph)
			if j < 0 {
				break
			}
			j += i
			if !wordByte(l, j-1) && !wordByte(l, j+len(ph)) {
				return true
			}
			i = j + 1
		}
	}
	return false
}

func TestPhrasesMatch(t *testing.T) {
	list := []string{"make sure", "don't", "go with", "only", "i'll use"}
	p := newPhrases(list...)
	for _, tt := range []struct {
		s    string
		want bool
	}{
		{"Make sure it builds.", true},
		{"MAKE SURE", true},
		{"makes sure", false},
		{"remake sure", false},
		{"We DON’T want that", true},
		{"dont", false},
		{"Let's go with B", true},
		{"go without", false},
		{"the only way", true},
		{"only_one", false},
		{"x-only", true},
		{"I’ll use sed", true},
		{"ma\u212Ae sure", true}, // the Kelvin sign lower-cases to "k"
		{"é only", true},
		{"éonly", true},
		{"", false},
		{"o", false},
	} {
		if got := p.match(tt.s); got != tt.want {
			t.Errorf("match(%q) = %v, want %v", tt.s, got, tt.want)
		}
		if ref := referenceMatch(list, tt.s); ref != tt.want {
			t.Errorf("reference match(%q) = %v, want %v", tt.s, ref, tt.want)
		}
	}
}
