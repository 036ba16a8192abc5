package extractive

import (
	"testing"

	"github.com/compactkit/compact/internal/jsontext"
)

// bulletUnits counts what bullet renders, without rendering it.
func FuzzBulletUnits(f *testing.F) {
	for _, s := range []string{"", "one line", "two\nlines", "trailing  \n  \n\tindented\n", "é😀\n\u00a0\u2003\nx", "\n\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if got, want := bulletUnits(text), jsontext.UTF16Len(bullet(text)); got != want {
			t.Fatalf("%q: bulletUnits %d, bullet is %d units", text, got, want)
		}
	})
}
