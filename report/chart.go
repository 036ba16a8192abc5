package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/compactkit/compact/internal/numfmt"
)

// The chart's drawing area, in SVG user units. The page scales the SVG to
// its column's width.
const (
	chartWidth  = 1160
	chartHeight = 380
	padLeft     = 64
	padRight    = 20
	padTop      = 28
	padBottom   = 44
)

// px is an SVG coordinate, printed with one decimal.
type px float64

// String formats the coordinate for an attribute.
func (p px) String() string { return strconv.FormatFloat(float64(p), 'f', 1, 64) }

// chart is the geometry of the context chart, ready for the template.
type chart struct {
	Width, Height            int
	Left, Right, Top, Bottom px
	// Line joins the points in call order ("x,y x,y ...").
	Line    string
	Points  []chartPoint
	Markers []chartMarker
	// Window and Trigger are the horizontal lines; nil when unknown.
	Window, Trigger *hline
	YTicks, XTicks  []tick
}

type chartPoint struct {
	X, Y      px
	Call      int
	EntryID   string
	Estimated bool
	Title     string
}

type chartMarker struct {
	X       px
	Kind    MarkerKind
	EntryID string
	// Shape is the polygon of the symbol above the plot.
	Shape string
	Title string
	// Href links a compaction's marker to its card; "" for an edit.
	Href string
}

type hline struct {
	// X is where the label is anchored: its end at the plot's right
	// edge, or, off the scale, its start at the left edge.
	X, Y  px
	Label string
	// Off is set when the value lies above the axis, scaled to the data:
	// the label stands at the top left of the plot, where a rising
	// session's line is lowest, and no line is drawn.
	Off bool
}

type tick struct {
	At    px
	Label string
}

// zoomShare is the share of the window (or trigger) below which the data
// must stay for the chart's axis to be scaled to the data instead: a
// session using 150k tokens of a 1M-token window would otherwise lie flat
// along the bottom.
const zoomShare = 0.5

// newChart lays out the points and markers of r.
func newChart(r *Report) chart {
	c := chart{Width: chartWidth, Height: chartHeight,
		Left: padLeft, Right: chartWidth - padRight, Top: padTop, Bottom: chartHeight - padBottom}
	data := 0.0
	for _, p := range r.Points {
		data = max(data, float64(p.Tokens))
	}
	for _, m := range r.Markers {
		data = max(data, float64(m.TokensBefore))
	}
	// The axis takes in the window and the trigger, unless the data stays
	// below zoomShare of the larger: then it is scaled to the data, and
	// the lines it leaves out are named at the top (see hline.Off).
	top, limit := data, float64(max(r.Window, r.Trigger))
	if data <= 0 || data >= zoomShare*limit {
		top = max(top, limit)
	}
	if top <= 0 {
		top = 1000
	}
	step := niceStep(top*1.05, 6)
	top = math.Ceil(top*1.05/step) * step
	y := func(tokens int) px {
		return c.Bottom - px(float64(tokens)/top)*(c.Bottom-c.Top)
	}
	calls := max(len(r.Points), 1)
	// Call k sits at the middle of the k-th of calls equal slots; a marker
	// after call k on the border between slots k and k+1.
	slot := float64(c.Right-c.Left) / float64(calls)
	x := func(call float64) px { return c.Left + px(call*slot) }

	for v := 0.0; v <= top+step/2; v += step {
		c.YTicks = append(c.YTicks, tick{At: y(int(v)), Label: shortNum(v)})
	}
	xstep := max(niceStep(float64(calls), 10), 1)
	for v := xstep; v <= float64(calls); v += xstep {
		c.XTicks = append(c.XTicks, tick{At: x(v - 0.5), Label: strconv.Itoa(int(v))})
	}
	if len(r.Points) > 0 && (c.XTicks == nil || c.XTicks[0].Label != "1") {
		c.XTicks = append([]tick{{At: x(0.5), Label: "1"}}, c.XTicks...)
	}
	line := func(tokens int, label string) *hline {
		if tokens <= 0 {
			return nil
		}
		if float64(tokens) > top {
			return &hline{X: c.Left, Y: c.Top, Label: "↑ " + label + " tokens, off the scale", Off: true}
		}
		return &hline{X: c.Right, Y: y(tokens), Label: label}
	}
	c.Window = line(r.Window, "window "+numfmt.Thousands(r.Window))
	c.Trigger = line(r.Trigger, r.Policy+" trigger "+numfmt.Thousands(r.Trigger))

	var series strings.Builder
	for i, p := range r.Points {
		cp := chartPoint{X: x(float64(p.Call) - 0.5), Y: y(p.Tokens), Call: p.Call, EntryID: p.EntryID, Estimated: p.Estimated}
		how := "reported by the provider"
		if p.Estimated {
			how = "estimated (no usage reported)"
		}
		if p.EntryID != "" {
			cp.Title = fmt.Sprintf("call %d (entry %s): %s tokens, %s", p.Call, p.EntryID, numfmt.Thousands(p.Tokens), how)
		} else {
			cp.Title = fmt.Sprintf("call %d: %s tokens, %s", p.Call, numfmt.Thousands(p.Tokens), how)
		}
		c.Points = append(c.Points, cp)
		if i > 0 {
			series.WriteByte(' ')
		}
		series.WriteString(cp.X.String() + "," + cp.Y.String())
	}
	c.Line = series.String()

	// Events between the same two calls stand side by side, 9 units
	// apart, in path order.
	seen := map[int]int{}
	for _, m := range r.Markers {
		cm := chartMarker{X: x(float64(m.AfterCall)) + px(9*seen[m.AfterCall]), Kind: m.Kind, EntryID: m.EntryID}
		seen[m.AfterCall]++
		cm.Shape = symbol(m.Kind, cm.X, c.Top-10)
		switch m.Kind {
		case KindEdit:
			cm.Title = fmt.Sprintf("context edit %s (entry %s) after call %d: %s → %s tokens",
				m.Label, m.EntryID, m.AfterCall, numfmt.Thousands(m.TokensBefore), numfmt.Thousands(m.TokensAfter))
		default:
			entry := ""
			if m.EntryID != "" {
				entry = " (entry " + m.EntryID + ")"
			}
			cm.Title = fmt.Sprintf("compaction %d, %s%s after call %d: %s → %s tokens",
				m.Card, m.Kind, entry, m.AfterCall, numfmt.Thousands(m.TokensBefore), numfmt.Thousands(m.TokensAfter))
			cm.Href = "#card-" + strconv.Itoa(m.Card)
		}
		c.Markers = append(c.Markers, cm)
	}
	return c
}

// symbol returns the polygon drawn above a marker line: a triangle
// pointing down for automatic compactions, a square for forced ones, a
// diamond for manual ones and a small triangle pointing up for edits.
func symbol(k MarkerKind, x, y px) string {
	var pts [][2]float64
	switch k {
	case KindAutomatic:
		pts = [][2]float64{{-7, -6}, {7, -6}, {0, 7}}
	case KindOverflow:
		pts = [][2]float64{{-6, -6}, {6, -6}, {6, 6}, {-6, 6}}
	case KindManual:
		pts = [][2]float64{{0, -8}, {7, 0}, {0, 8}, {-7, 0}}
	case KindIdle:
		pts = [][2]float64{{-7, 0}, {-3.5, -6}, {3.5, -6}, {7, 0}, {3.5, 6}, {-3.5, 6}}
	default:
		pts = [][2]float64{{-5, 5}, {5, 5}, {0, -5}}
	}
	var b strings.Builder
	for i, p := range pts {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString((x + px(p[0])).String() + "," + (y + px(p[1])).String())
	}
	return b.String()
}

// niceStep returns a step of 1, 2 or 5 times a power of ten that cuts
// span into about n parts.
func niceStep(span float64, n int) float64 {
	if span <= 0 {
		return 1
	}
	raw := span / float64(n)
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*pow {
			return m * pow
		}
	}
	return 10 * pow
}

// shortNum writes a token count for an axis: 0, 500, 25k, 1.5M.
func shortNum(v float64) string {
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}
