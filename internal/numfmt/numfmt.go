// Package numfmt writes numbers for people: the human output of the CLI
// and the HTML report group digits the same way.
package numfmt

import (
	"fmt"
	"strconv"
	"time"
)

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

// Ago says how long before now t was: "45s ago", "3m ago", "2h ago",
// "4d ago"; "just now" for a time after now and "-" for the zero time.
func Ago(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		return "just now"
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + "s ago"
	case d < time.Hour:
		return strconv.Itoa(int(d.Minutes())) + "m ago"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d.Hours())) + "h ago"
	}
	return strconv.Itoa(int(d.Hours()/24)) + "d ago"
}

// Duration writes milliseconds for people: "850 ms", "2.4 s", "3m05s".
func Duration(ms int64) string {
	switch d := time.Duration(ms) * time.Millisecond; {
	case d < time.Second:
		return strconv.FormatInt(ms, 10) + " ms"
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
	default:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
}

// Share writes a share from 0 to 1 as a percentage with one decimal:
// 0.9312 is "93.1%".
func Share(s float64) string {
	return strconv.FormatFloat(100*s, 'f', 1, 64) + "%"
}

// Dollars writes US dollars: four decimals under a dollar ("$0.0412"),
// two from one on ("$12.40").
func Dollars(usd float64) string {
	if usd < 1 {
		return "$" + strconv.FormatFloat(usd, 'f', 4, 64)
	}
	return "$" + strconv.FormatFloat(usd, 'f', 2, 64)
}
