package report

import (
	"strings"
	"testing"
)

func TestNiceStep(t *testing.T) {
	tests := []struct {
		span float64
		n    int
		want float64
	}{
		{210000, 6, 50000}, {1000, 6, 200}, {12, 10, 2}, {3, 10, 0.5}, {0, 6, 1}, {100, 10, 10},
	}
	for _, tt := range tests {
		if got := niceStep(tt.span, tt.n); got != tt.want {
			t.Errorf("niceStep(%g, %d) = %g, want %g", tt.span, tt.n, got, tt.want)
		}
	}
}

func TestShortNum(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 500: "500", 25000: "25k", 1500000: "1.5M", 2500: "2.5k"} {
		if got := shortNum(v); got != want {
			t.Errorf("shortNum(%g) = %q, want %q", v, got, want)
		}
	}
}

func TestNum(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 177657: "177,657", -1234567: "-1,234,567"} {
		if got := num(n); got != want {
			t.Errorf("num(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestChartGeometry: points inside the plot, in call order, higher tokens
// higher up; each marker between the calls around it; the window above
// the trigger.
func TestChartGeometry(t *testing.T) {
	r, err := Build(smallInput(t))
	if err != nil {
		t.Fatal(err)
	}
	c := newChart(r)
	if len(c.Points) != len(r.Points) || len(c.Markers) != len(r.Markers) {
		t.Fatalf("%d points, %d markers; want %d, %d", len(c.Points), len(c.Markers), len(r.Points), len(r.Markers))
	}
	in := func(x, y px) bool { return x >= c.Left && x <= c.Right && y >= c.Top && y <= c.Bottom }
	for i, p := range c.Points {
		if !in(p.X, p.Y) {
			t.Errorf("point %d at (%v, %v) is outside the plot", i, p.X, p.Y)
		}
		if i > 0 && p.X <= c.Points[i-1].X {
			t.Errorf("point %d is not right of point %d", i, i-1)
		}
		if p.Estimated != r.Points[i].Estimated || !strings.Contains(p.Title, r.Points[i].EntryID) {
			t.Errorf("point %d: %+v", i, p)
		}
	}
	for i := range c.Points {
		for j := range c.Points {
			if r.Points[i].Tokens > r.Points[j].Tokens && c.Points[i].Y >= c.Points[j].Y {
				t.Errorf("point %d (%d tokens) is not above point %d (%d tokens)", i, r.Points[i].Tokens, j, r.Points[j].Tokens)
			}
		}
	}
	for i, m := range c.Markers {
		k := r.Markers[i].AfterCall
		if k > 0 && m.X <= c.Points[k-1].X || k < len(c.Points) && m.X >= c.Points[k].X {
			t.Errorf("marker %d at x %v is not between calls %d and %d", i, m.X, k, k+1)
		}
		if (m.Href == "") != (m.Kind == KindEdit) {
			t.Errorf("marker %d (%s): href %q", i, m.Kind, m.Href)
		}
	}
	if c.Window == nil || c.Trigger == nil || c.Window.Y >= c.Trigger.Y || c.Window.Y < c.Top {
		t.Errorf("window %+v, trigger %+v", c.Window, c.Trigger)
	}
	if len(c.YTicks) < 3 || c.YTicks[0].Label != "0" || c.XTicks[0].Label != "1" {
		t.Errorf("ticks %+v %+v", c.YTicks, c.XTicks)
	}
}
