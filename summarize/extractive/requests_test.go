package extractive

import (
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

func TestIsAcknowledgement(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"ok", true},
		{"Thanks!", true},
		{"nice 👍", true},
		{"👍", true},
		{"got it, thank you", true},
		{"yes", false},
		{"sure", false},
		{"ok, now add a test", false},
		{"ok go ahead and ship it", false},
		{"what did i just execute?", false},
	} {
		if got := isAcknowledgement(tc.text); got != tc.want {
			t.Errorf("isAcknowledgement(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

func TestReplyContext(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       string
		notWant    []string
	}{
		{
			name: "proposal before the question",
			text: "Ready to release. The steps are:\n\n```bash\ngit tag v0.8.0\nnpm run publish\n```\n\nShould I proceed?",
			want: "Ready to release. The steps are: ```bash git tag v0.8.0 npm run publish ``` Should I proceed?",
		},
		{
			name:    "a done report is not the proposal",
			text:    "Done:\n1. Added the retry setting\n2. Fixed the config test\n\nShould I also update the docs?",
			want:    "Should I also update the docs?",
			notWant: []string{"Added the retry setting"},
		},
		{
			name:    "text after the question is left out",
			text:    "Want me to fix it? I would start with parse.go.",
			want:    "Want me to fix it?",
			notWant: []string{"parse.go"},
		},
		{
			name: "a long paragraph keeps its end",
			text: strings.Repeat("word ", 100) + "Shall I go on?",
			want: "…word word Shall I go on?",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := replyContext(tc.text)
			ok := got == tc.want
			if strings.HasPrefix(tc.want, "…") {
				// Only the end is known: the start was cut at a word.
				ok = strings.HasPrefix(got, "…word ") && strings.HasSuffix(got, tc.want[len("…"):])
			}
			if !ok {
				t.Errorf("replyContext = %q, want %q", got, tc.want)
			}
			for _, bad := range tc.notWant {
				if strings.Contains(got, bad) {
					t.Errorf("replyContext = %q, holds %q", got, bad)
				}
			}
			if n := len([]rune(got)); n > replyContextChars+1 {
				t.Errorf("replyContext is %d characters, more than %d", n, replyContextChars+1)
			}
		})
	}
}

// TestGoalNamesTheTaskInForce: the Goal's latest request is not a bare
// "ok", a short reply carries the question it answers, and a side
// question does not hide the task the assistant was working on.
func TestGoalNamesTheTaskInForce(t *testing.T) {
	text := run(t, New(Options{}), history(
		user("Add a cache to the resolver."),
		assistant("", call("c1", "edit", map[string]string{"path": "resolver.go", "oldText": "a", "newText": "b"})),
		result("c1", "edit", "ok", false),
		assistant("The steps left are:\n\n1. Bump the version to v2.1.0\n2. Tag and publish\n\nShall I release it?"),
		user("yeah, do it all"),
		assistant("", call("c2", "bash", map[string]string{"command": "git tag v2.1.0"})),
		result("c2", "bash", "", false),
		user("what does the tag command print?"),
		assistant("Nothing when it succeeds."),
		user("ok"),
		assistant("👍"),
	))
	goal := sectionBody(t, text, "## Goal")
	mustContain(t, goal,
		"- "+latestTaskLabel+"yeah, do it all (in reply to the assistant: «The steps left are: 1. Bump the version to v2.1.0 2. Tag and publish Shall I release it?»)",
		"- Most recently: what does the tag command print?")
	mustNotContain(t, goal, "Most recently: ok")
	mustNotContain(t, sectionBody(t, text, "## Next Steps"), "request: ok")
}

// TestTurnRequestWithItsQuestion: a split turn whose request is a short
// reply shows the question before the turn (SummaryRequest.Asked).
func TestTurnRequestWithItsQuestion(t *testing.T) {
	req := &compact.SummaryRequest{
		Kind:     compact.SummaryTurnPrefix,
		Messages: []*compact.Message{user("yes, go ahead"), assistant("Tagging now.")},
		Asked:    "The release is v0.8.0: bump, tag, publish. Should I proceed?",
	}
	body := sectionBody(t, run(t, New(Options{}), req), "## Turn Request")
	mustContain(t, body, "- yes, go ahead", "- In reply to the assistant: «The release is v0.8.0: bump, tag, publish. Should I proceed?»")

	req.Asked = "Tagged v0.8.0."
	mustNotContain(t, sectionBody(t, run(t, New(Options{}), req), "## Turn Request"), "In reply")
}
