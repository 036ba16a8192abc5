package report

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/compactkit/compact/internal/numfmt"
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

// TestChartLargeWindow checks that the chart stays readable whatever the
// window: with usage a small share of a 1M-token window the axis is
// scaled to the data (the line fills the plot instead of lying flat at
// the bottom) and the window and trigger are named at the top as off the
// scale, not drawn at a wrong height; near the window the axis takes it
// in. In every case the tick labels are distinct, apart and cover the
// data, and every point lies inside the plot.
func TestChartLargeWindow(t *testing.T) {
	rising := func(from, to, calls int) []Point {
		var ps []Point
		for i := range calls {
			ps = append(ps, Point{Call: i + 1, EntryID: "e" + strconv.Itoa(i+1), Tokens: from + (to-from)*i/max(calls-1, 1)})
		}
		return ps
	}
	for _, tc := range []struct {
		name            string
		window, trigger int
		points          []Point
		// off: the window and trigger are off the scale.
		off bool
	}{
		{"1M window, small usage", 1_000_000, 983_616, rising(20_000, 150_000, 40), true},
		{"1M window, tiny usage", 1_000_000, 900_000, rising(3_000, 9_000, 5), true},
		{"1M window, near full", 1_000_000, 983_616, rising(100_000, 960_000, 60), false},
		{"200k window, near full", 200_000, 183_616, rising(20_000, 180_000, 30), false},
		{"200k window, half used", 200_000, 183_616, rising(20_000, 100_000, 30), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Report{Window: tc.window, Trigger: tc.trigger, Policy: "reserve", Points: tc.points}
			c := newChart(r)
			height := c.Bottom - c.Top
			highest := c.Bottom
			for i, p := range c.Points {
				if p.X < c.Left || p.X > c.Right || p.Y < c.Top || p.Y > c.Bottom {
					t.Errorf("point %d at (%v, %v) is outside the plot", i, p.X, p.Y)
				}
				highest = min(highest, p.Y)
			}
			// The line reaches the upper half of the plot when the axis
			// is scaled to the data or the data nearly fills the window.
			if full := tc.points[len(tc.points)-1].Tokens*5 >= tc.window*4; (tc.off || full) && highest > c.Top+height/2 {
				t.Errorf("the highest point is at %v, in the lower half of the plot (%v to %v): the line is squashed", highest, c.Top, c.Bottom)
			}
			for _, l := range []struct {
				name string
				h    *hline
				v    int
			}{{"window", c.Window, tc.window}, {"trigger", c.Trigger, tc.trigger}} {
				if l.h == nil || !strings.Contains(l.h.Label, numfmt.Thousands(l.v)) {
					t.Fatalf("%s line %+v does not name %s", l.name, l.h, numfmt.Thousands(l.v))
				}
				if l.h.Off != tc.off {
					t.Errorf("%s off the scale: %v, want %v", l.name, l.h.Off, tc.off)
				}
				if want := map[bool]px{true: c.Left, false: c.Right}[tc.off]; l.h.X != want {
					t.Errorf("%s label anchored at x %v, want %v", l.name, l.h.X, want)
				}
				if tc.off && (l.h.Y != c.Top || !strings.Contains(l.h.Label, "off the scale")) {
					t.Errorf("%s off the scale at y %v (top %v), label %q", l.name, l.h.Y, c.Top, l.h.Label)
				}
				if !tc.off && (l.h.Y < c.Top || l.h.Y > c.Bottom) {
					t.Errorf("%s at y %v is outside the plot (%v to %v)", l.name, l.h.Y, c.Top, c.Bottom)
				}
			}
			seen := map[string]bool{}
			for i, tk := range c.YTicks {
				if seen[tk.Label] {
					t.Errorf("tick label %q twice in %+v", tk.Label, c.YTicks)
				}
				seen[tk.Label] = true
				if i > 0 && c.YTicks[i-1].At-tk.At < 18 {
					t.Errorf("ticks %q and %q are %v apart: the labels overlap", c.YTicks[i-1].Label, tk.Label, c.YTicks[i-1].At-tk.At)
				}
			}
			if n := len(c.YTicks); n < 3 || c.YTicks[n-1].At > highest {
				t.Errorf("ticks %+v do not reach the highest point at %v", c.YTicks, highest)
			}
		})
	}
}

// TestPageOffScale checks the page of a 1M-token window used lightly:
// the window and trigger are written at the top, marked off the scale,
// without a line across the plot.
func TestPageOffScale(t *testing.T) {
	in := smallInput(t)
	in.Model.ContextWindow = 1_000_000
	r, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Render(&b, r); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, class := range []string{"window", "trigger"} {
		i := strings.Index(page, `<g class="hline `+class)
		if i < 0 {
			t.Fatalf("no %s label on the page", class)
		}
		g := page[i : i+strings.Index(page[i:], "</g>")]
		if !strings.Contains(g, `class="hline `+class+` off"`) || strings.Contains(g, "<line") || !strings.Contains(g, "off the scale") {
			t.Errorf("%s: %s", class, g)
		}
	}
}
