package numfmt

import (
	"math"
	"testing"
)

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{
		0: "0", 7: "7", 999: "999", 1000: "1,000", 12345: "12,345", 177657: "177,657",
		-5: "-5", -1000: "-1,000", -1234567: "-1,234,567",
		math.MinInt64: "-9,223,372,036,854,775,808",
	} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
