package compact

import "testing"

func TestSummaryHeadingKey(t *testing.T) {
	tests := []struct {
		title, want string
	}{
		{"Goal", "goal"},
		{"  Next Steps (WP14-WP20)  ", "next steps"},
		{"Current Task: File Reorganization", "current task"},
		{"**Objective**", "objective"},
		{"Constraints & Preferences", "constraints and preferences"},
		{"`Key   Decisions`:", "key decisions"},
		{"(draft) Plan", "(draft) plan"}, // a leading "(" is not a tail
		{"", ""},
	}
	for _, tt := range tests {
		if got := SummaryHeadingKey(tt.title); got != tt.want {
			t.Errorf("SummaryHeadingKey(%q) = %q, want %q", tt.title, got, tt.want)
		}
	}
}
