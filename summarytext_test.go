package compact

import (
	"strings"
	"testing"

	"github.com/compactkit/compact/internal/jsontext"
)

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

func TestShortenSummary(t *testing.T) {
	var b strings.Builder
	b.WriteString("## Goal\n")
	for i := 0; i < 50; i++ {
		b.WriteString("- goal detail number " + strings.Repeat("g", 60) + "\n")
	}
	b.WriteString("\n## Progress\n### Done\n")
	for i := 0; i < 100; i++ {
		b.WriteString("- [x] finished step " + strings.Repeat("d", 60) + "\n")
	}
	b.WriteString("\n## Next Steps\n1. ship it\n")
	long := b.String()
	if got := ShortenSummary(long, 1_000_000); got != long {
		t.Fatal("a summary that fits was changed")
	}
	for _, max := range []int{2000, 500, 100} {
		short := ShortenSummary(long, max)
		for _, h := range []string{"## Goal", "## Progress", "### Done", "## Next Steps"} {
			if !strings.Contains(short, h+"\n") {
				t.Errorf("max %d: heading %q lost", max, h)
			}
		}
		if got := (jsontext.UTF16Len(short) + 3) / 4; max >= 500 && got > max {
			t.Errorf("max %d: %d tokens", max, got)
		}
		if !strings.Contains(short, "left out to fit the context]") {
			t.Errorf("max %d: no marker", max)
		}
	}
}
