package compact

import "testing"

func TestSummaryHeadingKey(t *testing.T) {
	for title, want := range map[string]string{
		"Goal":                              "goal",
		"  Next Steps (WP14-WP20)  ":        "next steps",
		"Current Task: File Reorganization": "current task",
		"**Objective**":                     "objective",
		"Constraints & Preferences":         "constraints and preferences",
		"`Key   Decisions`:":                "key decisions",
		"(draft) Plan":                      "(draft) plan", // a leading "(" is not a tail
		"":                                  "",
	} {
		if got := SummaryHeadingKey(title); got != want {
			t.Errorf("SummaryHeadingKey(%q) = %q, want %q", title, got, want)
		}
	}
}
