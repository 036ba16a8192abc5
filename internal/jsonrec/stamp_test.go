package jsonrec

import (
	"testing"
	"time"
)

func TestStamp(t *testing.T) {
	tests := []struct {
		in   time.Time
		want string
	}{
		{time.Date(2026, 1, 2, 3, 4, 5, 678_900_000, time.UTC), "2026-01-02T03:04:05.678Z"},
		{time.Date(2026, 1, 2, 4, 4, 5, 0, time.FixedZone("", 3600)), "2026-01-02T03:04:05.000Z"},
	}
	for _, tc := range tests {
		got := Stamp(tc.in)
		if got != tc.want {
			t.Errorf("Stamp(%v) = %q, want %q", tc.in, got, tc.want)
		}
		if ms := Millis(got); ms != tc.in.Truncate(time.Millisecond).UnixMilli() {
			t.Errorf("Millis(Stamp(%v)) = %d", tc.in, ms)
		}
	}
}
