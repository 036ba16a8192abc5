package compact

import (
	"reflect"
	"strings"
	"testing"
)

func TestSplitReminders(t *testing.T) {
	const r = "<system-reminder>\nUse the todo list.\n</system-reminder>"
	text := func(s string) Part { return Part{Type: PartText, Text: s} }
	img := Part{Type: PartImage, Image: &Image{MimeType: "image/png", Data: "AA=="}}
	tests := []struct {
		name  string
		parts []Part
		want  []PartRun
	}{
		{"none", nil, nil},
		{"no reminder", []Part{text("fix it"), img}, []PartRun{{Parts: []Part{text("fix it"), img}}}},
		{"empty text kept", []Part{text("")}, []PartRun{{Parts: []Part{text("")}}}},
		{"reminder first", []Part{text(r + "\n\nfix it")}, []PartRun{{Parts: []Part{text(r)}, Reminder: true}, {Parts: []Part{text("fix it")}}}},
		{"reminder after", []Part{text("fix it\n" + r + "\n")}, []PartRun{{Parts: []Part{text("fix it")}}, {Parts: []Part{text(r)}, Reminder: true}}},
		{"two blocks around", []Part{text(r + "fix it" + r)},
			[]PartRun{{Parts: []Part{text(r)}, Reminder: true}, {Parts: []Part{text("fix it")}}, {Parts: []Part{text(r)}, Reminder: true}}},
		{"adjacent blocks one run", []Part{text(r + "\n" + r)}, []PartRun{{Parts: []Part{text(r), text(r)}, Reminder: true}}},
		{"block part beside the prompt", []Part{text("fix it"), img, text(r)},
			[]PartRun{{Parts: []Part{text("fix it"), img}}, {Parts: []Part{text(r)}, Reminder: true}}},
		{"unclosed tag is text", []Part{text("say <system-reminder> please")}, []PartRun{{Parts: []Part{text("say <system-reminder> please")}}}},
		{"close before open", []Part{text("</system-reminder> x <system-reminder>")}, []PartRun{{Parts: []Part{text("</system-reminder> x <system-reminder>")}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := SplitReminders(tc.parts)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("SplitReminders =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

func TestWithoutReminders(t *testing.T) {
	const r = "<system-reminder>\nUse the todo list.\n</system-reminder>"
	tests := []struct{ in, want string }{
		{"", ""},
		{"fix it", "fix it"},
		{r, ""},
		{r + "\nfix it", "fix it"},
		{"fix it " + r + " and test it", "fix it\n\nand test it"},
		{"fix <system-reminder> it", "fix <system-reminder> it"},
	}
	for _, tc := range tests {
		if got := WithoutReminders(tc.in); got != tc.want {
			t.Errorf("WithoutReminders(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzSplitReminders checks that the runs alternate, that reminder runs
// hold only whole blocks, and that no text outside the blocks is lost but
// blank space.
func FuzzSplitReminders(f *testing.F) {
	for _, s := range []string{"", "a", "<system-reminder>x</system-reminder>", "a<system-reminder>x</system-reminder>b<system-reminder>",
		"</system-reminder><system-reminder>", "<system-reminder><system-reminder>x</system-reminder></system-reminder>"} {
		f.Add(s)
	}
	squeeze := func(s string) string { return strings.Join(strings.Fields(s), "") }
	f.Fuzz(func(t *testing.T, s string) {
		runs := SplitReminders([]Part{{Type: PartText, Text: s}})
		var all strings.Builder
		for i, r := range runs {
			if i > 0 && runs[i-1].Reminder == r.Reminder {
				t.Fatalf("runs %d and %d of the same kind", i-1, i)
			}
			for _, p := range r.Parts {
				if r.Reminder && (!strings.HasPrefix(p.Text, reminderOpen) || !strings.HasSuffix(p.Text, reminderClose)) {
					t.Fatalf("reminder part %q is not one block", p.Text)
				}
				all.WriteString(p.Text)
			}
		}
		if squeeze(all.String()) != squeeze(s) {
			t.Fatalf("runs hold %q, want the text of %q", all.String(), s)
		}
	})
}
