package extractive

import (
	"regexp"
	"testing"
)

// The expressions that listMarkerLen and numbered stand for.
var (
	listMarkerRe = regexp.MustCompile(`^(?:[-*+]\s+(?:\[[ xX~]\]\s+)?|\d+[.)]\s+|>\s*|#+\s+)`)
	numberedRe   = regexp.MustCompile(`^\d+[.)]\s+\S`)
)

func TestListMarkers(t *testing.T) {
	for _, tt := range []struct {
		in, stripped string
		numbered     bool
	}{
		{"- item", "item", false},
		{"-\titem", "item", false},
		{"* [x] done", "done", false},
		{"+ [~]  dropped", "dropped", false},
		{"- [x]done", "[x]done", false},
		{"- [ ]", "[ ]", false},
		{"- [y] item", "[y] item", false},
		{"12. step", "step", true},
		{"3) step", "step", true},
		{"3)  ", "", false},
		{"3.x", "3.x", false},
		{"2024 was", "2024 was", false},
		{"7.", "7.", false},
		{"> quoted", "quoted", false},
		{">quoted", "quoted", false},
		{">", "", false},
		{"## Heading", "Heading", false},
		{"#hashtag", "#hashtag", false},
		{"###", "###", false},
		{"-notmarker", "-notmarker", false},
		{"-\vx", "-\vx", false},
		{"plain", "plain", false},
		{"1. é", "é", true},
		{"", "", false},
	} {
		if got := stripListMarker(tt.in); got != tt.stripped {
			t.Errorf("stripListMarker(%q) = %q, want %q", tt.in, got, tt.stripped)
		}
		if got := numbered(tt.in); got != tt.numbered {
			t.Errorf("numbered(%q) = %v, want %v", tt.in, got, tt.numbered)
		}
		if ref := listMarkerRe.ReplaceAllString(tt.in, ""); ref != tt.stripped {
			t.Errorf("listMarkerRe on %q gives %q, want %q", tt.in, ref, tt.stripped)
		}
		if ref := numberedRe.MatchString(tt.in); ref != tt.numbered {
			t.Errorf("numberedRe on %q gives %v, want %v", tt.in, ref, tt.numbered)
		}
	}
}
