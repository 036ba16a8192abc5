package deepdiff

import (
	"math"
	"strings"
	"testing"
)

type inner struct {
	Text string
	n    int
}

type outer struct {
	Items []inner
	Meta  map[string]*inner
	Raw   []byte
	F     float64
}

func TestOf(t *testing.T) {
	base := func() outer {
		return outer{Items: []inner{{"a", 1}, {"b", 2}}, Meta: map[string]*inner{"k": {"m", 3}}, Raw: []byte("xy"), F: 1}
	}
	tests := []struct {
		name   string
		change func(*outer)
		want   string // "" for equal, else a prefix of the report
	}{
		{"equal", func(*outer) {}, ""},
		{"NaN equals NaN", nil, ""},
		{"string in a slice", func(o *outer) { o.Items[1].Text = "c" }, `v.Items[1].Text: "b" vs "c"`},
		{"unexported field", func(o *outer) { o.Items[0].n = 9 }, "v.Items[0].n: 1 vs 9"},
		{"slice length", func(o *outer) { o.Items = o.Items[:1] }, "v.Items: length 2 vs 1"},
		{"map value", func(o *outer) { o.Meta["k"].Text = "z" }, `v.Meta[k].Text: "m" vs "z"`},
		{"map key", func(o *outer) { o.Meta = map[string]*inner{"j": {"m", 3}} }, "v.Meta: key k only on one side"},
		{"nil pointer", func(o *outer) { o.Meta["k"] = nil }, "v.Meta[k]: nil false vs nil true"},
		{"bytes", func(o *outer) { o.Raw = []byte("xz") }, `v.Raw: "xy" vs "xz"`},
		{"float", func(o *outer) { o.F = 2 }, "v.F: 1 vs 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := base(), base()
			if tt.change == nil {
				a.F, b.F = math.NaN(), math.NaN()
			} else {
				tt.change(&b)
			}
			got := Of("v", a, b)
			if (tt.want == "") != (got == "") || !strings.HasPrefix(got, tt.want) {
				t.Errorf("Of = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestStrings(t *testing.T) {
	long := strings.Repeat("x", 300)
	got := Strings(long+"a"+long, long+"b"+long)
	if !strings.HasPrefix(got, "lengths 601 and 601, first difference at byte 300:") {
		t.Errorf("Strings = %q", got)
	}
}
