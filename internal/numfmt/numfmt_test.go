package numfmt

import (
	"math"
	"testing"
	"time"
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

func TestAgo(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		t    time.Time
		want string
	}{
		{time.Time{}, "-"},
		{now.Add(time.Second), "just now"},
		{now.Add(-45 * time.Second), "45s ago"},
		{now.Add(-3 * time.Minute), "3m ago"},
		{now.Add(-2 * time.Hour), "2h ago"},
		{now.Add(-47 * time.Hour), "47h ago"},
		{now.Add(-96 * time.Hour), "4d ago"},
	} {
		if got := Ago(now, tt.t); got != tt.want {
			t.Errorf("Ago(%v) = %q, want %q", now.Sub(tt.t), got, tt.want)
		}
	}
}

func TestDurationShareDollars(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{Duration(850), "850 ms"},
		{Duration(2400), "2.4 s"},
		{Duration(185000), "3m05s"},
		{Share(0.93124), "93.1%"},
		{Share(1), "100.0%"},
		{Dollars(0.04123), "$0.0412"},
		{Dollars(12.4), "$12.40"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}
