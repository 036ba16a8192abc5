package compact

import (
	"encoding/json"
	"fmt"
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

func TestOrphanResult(t *testing.T) {
	img := Part{Type: PartImage, Image: &Image{MimeType: "image/png", Data: "AA=="}}
	extra := map[string]json.RawMessage{"uuid": json.RawMessage(`"u1"`)}
	tests := []struct {
		name      string
		in        Message
		wantParts []Part
	}{
		{"name and id",
			Message{Role: RoleToolResult, ToolCallID: "toolu_01", ToolName: "read_file", Content: []Part{{Type: PartText, Text: "package main"}}},
			[]Part{{Type: PartText, Text: "[tool result without its call: read_file (toolu_01)]\npackage main"}}},
		{"id only, an error",
			Message{Role: RoleToolResult, ToolCallID: "toolu_gone", IsError: true, Content: []Part{{Type: PartText, Text: "ERROR: the call was lost"}}},
			[]Part{{Type: PartText, Text: "[tool result without its call: toolu_gone; it reports an error]\nERROR: the call was lost"}}},
		{"neither name nor id",
			Message{Role: RoleToolResult, Content: []Part{{Type: PartText, Text: "out"}}},
			[]Part{{Type: PartText, Text: "[tool result without its call]\nout"}}},
		{"image first gets a text part before it",
			Message{Role: RoleToolResult, ToolName: "screenshot", Content: []Part{img, {Type: PartText, Text: "done"}}},
			[]Part{{Type: PartText, Text: "[tool result without its call: screenshot]"}, img, {Type: PartText, Text: "done"}}},
		{"no content",
			Message{Role: RoleToolResult, ToolCallID: "c1"},
			[]Part{{Type: PartText, Text: "[tool result without its call: c1]"}}},
		{"empty text",
			Message{Role: RoleToolResult, ToolCallID: "c1", Content: []Part{{Type: PartText}}},
			[]Part{{Type: PartText, Text: "[tool result without its call: c1]"}}},
		{"hostile id on one line",
			Message{Role: RoleToolResult, ToolCallID: "a\nb\x00c\t", Content: []Part{{Type: PartText, Text: "x"}}},
			[]Part{{Type: PartText, Text: "[tool result without its call: a b c]\nx"}}},
		{"long id cut",
			Message{Role: RoleToolResult, ToolCallID: strings.Repeat("é", 150), Content: []Part{{Type: PartText, Text: "x"}}},
			[]Part{{Type: PartText, Text: "[tool result without its call: " + strings.Repeat("é", 100) + "…]\nx"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			in.Timestamp, in.Extra = 42, extra
			before := fmt.Sprintf("%+v", in.Content)
			got := OrphanResult("claude-code", &in)
			if got.Role != RoleCustom || !IsHarnessNote(got) {
				t.Fatalf("role %q, harness note %v: want a harness note", got.Role, IsHarnessNote(got))
			}
			if ct := got.Metadata().CustomType; ct != "harness:claude-code:orphan_result" {
				t.Errorf("CustomType = %q", ct)
			}
			if !reflect.DeepEqual(got.Content, tc.wantParts) {
				t.Errorf("Content =\n%+v\nwant\n%+v", got.Content, tc.wantParts)
			}
			if got.Timestamp != 42 || got.Extra["uuid"] == nil || got.ToolCallID != "" || got.IsError {
				t.Errorf("timestamp %d, extra %v, call id %q, error %v: want 42, the input's extra, no call id, no error flag",
					got.Timestamp, got.Extra, got.ToolCallID, got.IsError)
			}
			if after := fmt.Sprintf("%+v", in.Content); after != before {
				t.Errorf("input changed: %s, was %s", after, before)
			}
			for _, u := range ForModel([]*Message{got}) {
				if u.Role != RoleUser || !strings.HasPrefix(u.Text(), "[tool result without its call") {
					t.Errorf("ForModel gives %q %q: want user text that says what it is", u.Role, u.Text())
				}
			}
		})
	}
}
