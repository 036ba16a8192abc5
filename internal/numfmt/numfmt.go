// Package numfmt writes numbers for people: the human output of the CLI
// and the HTML report group digits the same way.
package numfmt

import "strconv"

// Thousands writes n in decimal with a comma between groups of three
// digits: 177657 is "177,657", -1234567 is "-1,234,567".
func Thousands(n int) string {
	s := strconv.Itoa(n)
	digits := s
	if n < 0 {
		digits = s[1:]
	}
	b := make([]byte, 0, len(s)+len(digits)/3)
	if n < 0 {
		b = append(b, '-')
	}
	for i := 0; i < len(digits); i++ {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, digits[i])
	}
	return string(b)
}
