package summarize

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/compactkit/compact"
)

func TestTranscript(t *testing.T) {
	exit2 := 2
	failed := result("e-0", "bash", "boom")
	failed.IsError = true
	aborted := assistant("half a thought")
	aborted.StopReason = compact.StopAborted
	errored := &compact.Message{Role: compact.RoleAssistant, StopReason: compact.StopError, Meta: &compact.MessageMeta{ErrorMessage: "overloaded"}}
	thinking := &compact.Message{Role: compact.RoleAssistant, StopReason: compact.StopEnd, Content: []compact.Part{
		{Type: compact.PartThinking, Thinking: "Let me look."}, {Type: compact.PartText, Text: "Looking now."}}}
	img := &compact.Message{Role: compact.RoleUser, Content: []compact.Part{
		{Type: compact.PartText, Text: "see screenshot"}, {Type: compact.PartImage, Image: &compact.Image{MimeType: "image/png", Data: "AAAA"}}}}

	tests := []struct {
		name string
		msgs []*compact.Message
		want string
	}{
		{"user and assistant", []*compact.Message{user("fix it\r\nplease"), assistant("Done.")},
			"[user]\nfix it\nplease\n\n[assistant]\nDone."},
		{"tool call paired with its result", []*compact.Message{
			calls("c", "read", `{ "path": "a.go" }`), result("c-0", "read", "package a")},
			"[tool call: read]\n{\"path\":\"a.go\"}\n[tool result: read]\npackage a"},
		{"parallel calls each followed by its own result", []*compact.Message{
			calls("c", "read", `{"path":"a.go"}`, "bash", `{"command":"go test"}`),
			result("c-1", "bash", "ok"), result("c-0", "read", "package a")},
			"[tool call: read]\n{\"path\":\"a.go\"}\n[tool result: read]\npackage a\n\n" +
				"[tool call: bash]\n{\"command\":\"go test\"}\n[tool result: bash]\nok"},
		{"failed tool result", []*compact.Message{calls("e", "bash", `{"command":"x"}`), failed},
			"[tool call: bash]\n{\"command\":\"x\"}\n[tool result: bash, error]\nboom"},
		{"orphan result stays in place", []*compact.Message{result("zz", "read", "text")},
			"[tool result: read]\ntext"},
		{"empty result", []*compact.Message{calls("c", "ls", `{}`), result("c-0", "ls", "")},
			"[tool call: ls]\n{}\n[tool result: ls]\n(no output)"},
		{"reasoning, aborted and failed calls", []*compact.Message{thinking, aborted, errored},
			"[assistant reasoning]\nLet me look.\n\n[assistant]\nLooking now.\n\n" +
				"[assistant]\nhalf a thought\n(stopped by the user)\n\n[assistant]\n(the model call failed: overloaded)"},
		{"shell command, note, summaries, image", []*compact.Message{
			{Role: compact.RoleBash, Meta: &compact.MessageMeta{Command: "make", Output: "error 2\n", ExitCode: &exit2}},
			{Role: compact.RoleBash, Meta: &compact.MessageMeta{Command: "secret", ExcludeFromContext: true}},
			{Role: compact.RoleCustom, Content: []compact.Part{{Type: compact.PartText, Text: "injected"}}, Meta: &compact.MessageMeta{CustomType: "hook"}},
			compact.TextMessage(compact.RoleBranchSummary, "other branch"),
			compact.TextMessage(compact.RoleCompactionSummary, "older work"),
			img},
			"[user shell command]\n$ make\nerror 2\n(exit status 2)\n\n[note: hook]\ninjected\n\n" +
				"[branch summary]\nother branch\n\n[earlier summary]\nolder work\n\n[user]\nsee screenshot\n[image]"},
		{"closing tag in text is defused", []*compact.Message{user("a </transcript> b")},
			"[user]\na <\\/transcript> b"},
	}
	s, _ := newTest(t, &fake{}, model200k, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.Transcript(tt.msgs); got != tt.want {
				t.Errorf("transcript:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestToolResultCap(t *testing.T) {
	head := strings.Repeat("h", 1000)
	tail := strings.Repeat("t", 1000)
	long := head + strings.Repeat("m", 3000) + tail // 5000 characters
	userText := strings.Repeat("the user's own words ", 1000)

	tests := []struct {
		name     string
		capChars int
		msgs     []*compact.Message
		want     []string // substrings that must appear
		absent   []string
	}{
		{"result cut to head and tail", 0, []*compact.Message{calls("c", "read", `{"path":"big.txt"}`), result("c-0", "read", long)},
			[]string{head + "\n[... 3000 characters cut ...]\n" + tail}, []string{"m"}},
		{"custom cap", 100, []*compact.Message{calls("c", "read", `{}`), result("c-0", "read", long)},
			[]string{strings.Repeat("h", 50) + "\n[... 4900 characters cut ...]\n" + strings.Repeat("t", 50)}, nil},
		{"characters, not bytes", 10, []*compact.Message{calls("c", "read", `{}`), result("c-0", "read", strings.Repeat("é", 30))},
			[]string{"ééééé\n[... 20 characters cut ...]\nééééé"}, nil},
		{"no cap", -1, []*compact.Message{calls("c", "read", `{}`), result("c-0", "read", long)},
			[]string{long}, []string{"characters cut"}},
		{"user text intact", 0, []*compact.Message{user(userText)}, []string{"[user]\n" + strings.TrimSpace(userText)}, []string{"characters cut"}},
		{"long arguments keep the path", 50, []*compact.Message{calls("c", "write", `{"content":"`+strings.Repeat("x", 500)+`","path":"deep/file.go","mode":"`+strings.Repeat("y", 500)+`"}`)},
			[]string{"[tool call: write]\npath: deep/file.go\n{\"content\":", "characters cut"}, nil},
		{"reasoning capped", 20, []*compact.Message{{Role: compact.RoleAssistant, Content: []compact.Part{{Type: compact.PartThinking, Thinking: long}}}},
			[]string{"[assistant reasoning]\n" + strings.Repeat("h", 10) + "\n[... 4980 characters cut ...]\n"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := newTest(t, &fake{}, model200k, func(o *Options) { o.ToolResultChars = tt.capChars })
			got := s.Transcript(tt.msgs)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %.80q in\n%.400s", w, got)
				}
			}
			for _, a := range tt.absent {
				if strings.Contains(got, a) {
					t.Errorf("unexpected %q", a)
				}
			}
		})
	}
}

func TestCutBytes(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
	}{
		{"ascii", strings.Repeat("abcdefghij", 100), 200},
		{"multibyte", strings.Repeat("日本語のテキスト", 100), 301},
		{"fits", "short", 10},
		{"tiny", strings.Repeat("x", 100), 60},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cutBytes(tt.in, tt.max)
			if len(got) > tt.max {
				t.Errorf("len %d > %d", len(got), tt.max)
			}
			if !utf8.ValidString(got) {
				t.Errorf("invalid UTF-8: %q", got)
			}
			if len(tt.in) <= tt.max {
				if got != tt.in {
					t.Errorf("changed text that fits: %q", got)
				}
				return
			}
			if !strings.Contains(got, "characters cut") {
				t.Errorf("no marker: %q", got)
			}
		})
	}
}

func TestTranscriptDeterministic(t *testing.T) {
	var msgs []*compact.Message
	for i := 0; i < 50; i++ {
		msgs = append(msgs, user("step "+strings.Repeat("u", i)),
			calls("c"+string(rune('a'+i%26)), "read", `{"path":"f.go","offset":1}`, "bash", `{"command":"ls"}`),
			result("c"+string(rune('a'+i%26))+"-1", "bash", strings.Repeat("o", 3000)),
			result("c"+string(rune('a'+i%26))+"-0", "read", "x"))
	}
	s, _ := newTest(t, &fake{}, model16k, nil)
	first := s.Transcript(msgs)
	for i := 0; i < 5; i++ {
		if got := s.Transcript(msgs); got != first {
			t.Fatal("transcript differs between runs")
		}
	}
	// Whole runs, chunking included, send the same bytes.
	var runs [2][]Request
	for i := range runs {
		f := &fake{}
		s, _ := newTest(t, f, model16k, nil)
		if _, err := s.Summarize(context.Background(), &compact.SummaryRequest{Messages: msgs, PreviousSummary: "before"}); err != nil {
			t.Fatal(err)
		}
		runs[i] = f.requests()
	}
	if len(runs[0]) < 2 || len(runs[0]) != len(runs[1]) {
		t.Fatalf("requests: %d and %d, want the same number, at least 2", len(runs[0]), len(runs[1]))
	}
	for i := range runs[0] {
		if runs[0][i] != runs[1][i] {
			t.Errorf("request %d differs", i+1)
		}
	}
}
