package extractive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/summarize/facts"
)

// ---- message builders ----

func user(text string) *compact.Message { return compact.TextMessage(compact.RoleUser, text) }

func assistant(text string, calls ...*compact.ToolCall) *compact.Message {
	m := &compact.Message{Role: compact.RoleAssistant, StopReason: compact.StopEnd}
	if text != "" {
		m.Content = append(m.Content, compact.Part{Type: compact.PartText, Text: text})
	}
	for _, c := range calls {
		m.Content = append(m.Content, compact.Part{Type: compact.PartToolCall, ToolCall: c})
		m.StopReason = compact.StopToolUse
	}
	return m
}

func call(id, name string, args any) *compact.ToolCall {
	raw, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return &compact.ToolCall{ID: id, Name: name, Arguments: raw}
}

func result(id, name, text string, isError bool) *compact.Message {
	m := compact.TextMessage(compact.RoleToolResult, text)
	m.ToolCallID, m.ToolName, m.IsError = id, name, isError
	return m
}

func userBash(cmd, out string, code *int, cancelled bool) *compact.Message {
	return &compact.Message{Role: compact.RoleBash, Meta: &compact.MessageMeta{Command: cmd, Output: out, ExitCode: code, Cancelled: cancelled}}
}

func intp(i int) *int { return &i }

func run(t testing.TB, s *Summarizer, req *compact.SummaryRequest) string {
	t.Helper()
	sum, err := s.Summarize(context.Background(), req)
	if err != nil {
		t.Fatalf("Summarize: %v", err)
	}
	if sum.Summarizer != Name {
		t.Fatalf("Summarizer = %q, want %q", sum.Summarizer, Name)
	}
	if sum.Usage != nil {
		t.Fatalf("Usage = %+v, want nil", sum.Usage)
	}
	return sum.Text
}

func history(msgs ...*compact.Message) *compact.SummaryRequest {
	return &compact.SummaryRequest{Kind: compact.SummaryHistory, Messages: msgs}
}

// sectionBody returns the body of the section with the given heading line,
// up to the next heading of the same or a higher level.
func sectionBody(t testing.TB, text, heading string) string {
	t.Helper()
	level := strings.IndexByte(heading, ' ')
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if l != heading {
			continue
		}
		var body []string
		for _, b := range lines[i+1:] {
			if n := headingLevel(b); n > 0 && n <= level {
				break
			}
			body = append(body, b)
		}
		return strings.TrimSpace(strings.Join(body, "\n"))
	}
	t.Fatalf("heading %q not found in:\n%s", heading, text)
	return ""
}

func headingLevel(line string) int {
	n := len(line) - len(strings.TrimLeft(line, "#"))
	if n > 0 && len(line) > n && line[n] == ' ' {
		return n
	}
	return 0
}

func mustContain(t testing.TB, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("missing %q in:\n%s", w, text)
		}
	}
}

func mustNotContain(t testing.TB, text string, bad ...string) {
	t.Helper()
	for _, w := range bad {
		if strings.Contains(text, w) {
			t.Errorf("unexpected %q in:\n%s", w, text)
		}
	}
}

// mustOrder checks that the strings appear in text in the given order.
func mustOrder(t testing.TB, text string, parts ...string) {
	t.Helper()
	pos := -1
	for _, p := range parts {
		i := strings.Index(text, p)
		if i < 0 {
			t.Errorf("missing %q in:\n%s", p, text)
			return
		}
		if i <= pos {
			t.Errorf("%q is out of order in:\n%s", p, text)
			return
		}
		pos = i
	}
}

var historyHeadings = []string{
	"## Goal", "## Constraints & Preferences", "## Progress", "### Done", "### In Progress", "### Blocked",
	"## Key Decisions", "## Next Steps", "## Critical Context",
}

var turnHeadings = []string{"## Turn Request", "## Work So Far in This Turn", "## Context for the Kept Messages"}

func headingsOf(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if headingLevel(l) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// ---- tests ----

func TestHeadingsAndEmptySections(t *testing.T) {
	out := run(t, New(Options{}), history(user("hi")))
	got := headingsOf(out)
	want := append(append([]string(nil), historyHeadings...), "### User messages (newest first)")
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("headings = %q, want %q", got, want)
	}
	for _, h := range []string{"## Constraints & Preferences", "### Done", "### In Progress", "### Blocked", "## Key Decisions"} {
		if body := sectionBody(t, out, h); body != "- (none)" {
			t.Errorf("%s = %q, want - (none)", h, body)
		}
	}
	if got := sectionBody(t, out, "## Next Steps"); got != "- Continue with the latest user request: hi" {
		t.Errorf("next steps = %q", got)
	}
	if sectionBody(t, out, "## Goal") != "- Initially: hi" {
		t.Errorf("goal = %q", sectionBody(t, out, "## Goal"))
	}
	mustNotContain(t, out, "<read-files>", "<modified-files>")
}

func TestZeroValueSummarizer(t *testing.T) {
	var s Summarizer
	out := run(t, &s, history(user("fix the build"), assistant("Done.")))
	want := run(t, New(Options{
		UserBudgetTokens: DefaultUserBudgetTokens, ShortenedChars: DefaultShortenedChars, MaxCommands: DefaultMaxCommands,
		MaxErrors: DefaultMaxErrors, MaxTextChars: DefaultMaxTextChars, MaxItems: DefaultMaxItems,
	}), history(user("fix the build"), assistant("Done.")))
	if out != want {
		t.Fatalf("zero value differs from explicit defaults:\n%s\n---\n%s", out, want)
	}
}

func TestEmptyAndCancelled(t *testing.T) {
	s := New(Options{})
	if _, err := s.Summarize(context.Background(), history()); !errors.Is(err, ErrNoMessages) {
		t.Errorf("empty messages: err = %v, want ErrNoMessages", err)
	}
	if _, err := s.Summarize(context.Background(), nil); !errors.Is(err, ErrNoMessages) {
		t.Errorf("nil request: err = %v, want ErrNoMessages", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sum, err := s.Summarize(ctx, history(user("hello")))
	if !errors.Is(err, context.Canceled) || sum != nil {
		t.Errorf("cancelled: sum = %v, err = %v, want context.Canceled", sum, err)
	}
	_, err = s.Summarize(ctx, &compact.SummaryRequest{Kind: compact.SummaryHistory, Messages: bigConversation(), MaxTokens: 200})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled with budget: err = %v", err)
	}
}

func TestUserMessagesVerbatimNewestFirst(t *testing.T) {
	out := run(t, New(Options{}), history(
		user("first: set up the project"),
		assistant("ok"),
		user("second line one\n\nsecond line three\n## not a heading"),
		assistant("ok"),
		user("third"),
	))
	body := sectionBody(t, out, "### User messages (newest first)")
	want := "- third\n- second line one\n\n  second line three\n  ## not a heading\n- first: set up the project"
	if body != want {
		t.Fatalf("user messages =\n%s\nwant\n%s", body, want)
	}
	goal := sectionBody(t, out, "## Goal")
	if goal != "- Initially: first: set up the project\n- Most recently: third" {
		t.Errorf("goal = %q", goal)
	}
}

func TestUserBudgetMarkers(t *testing.T) {
	// Budget 100 tokens: the newest message (202 chars as a list item, 51
	// tokens) fits verbatim; the next two only shortened to 50 chars (21
	// tokens each); the oldest not at all.
	s := New(Options{UserBudgetTokens: 100, ShortenedChars: 50})
	out := run(t, s, history(
		user(strings.Repeat("a", 400)),
		user(strings.Repeat("b", 400)),
		user(strings.Repeat("c", 1000)),
		user(strings.Repeat("d", 200)),
	))
	body := sectionBody(t, out, "### User messages (newest first)")
	want := strings.Join([]string{
		"- " + strings.Repeat("d", 200),
		"- " + strings.Repeat("c", 50) + " [… 950 of 1000 chars left out]",
		"- " + strings.Repeat("b", 50) + " [… 350 of 400 chars left out]",
		"- [… 1 older user message left out entirely]",
	}, "\n")
	if body != want {
		t.Fatalf("user messages =\n%s\nwant\n%s", body, want)
	}
}

func TestUserBudgetNeverCutsWhatFits(t *testing.T) {
	// A short old message still fits after a long newer one was
	// shortened: it stays verbatim, and the count line says exactly
	// which ones are missing.
	s := New(Options{UserBudgetTokens: 40, ShortenedChars: 50})
	out := run(t, s, history(
		user("tiny"),
		user(strings.Repeat("x", 600)),
		user(strings.Repeat("y", 600)),
	))
	body := sectionBody(t, out, "### User messages (newest first)")
	want := strings.Join([]string{
		"- " + strings.Repeat("y", 50) + " [… 550 of 600 chars left out]",
		"- [… 1 user message left out entirely]",
		"- tiny",
	}, "\n")
	if body != want {
		t.Fatalf("user messages =\n%s\nwant\n%s", body, want)
	}
}

func TestFailuresAndCommands(t *testing.T) {
	msgs := []*compact.Message{
		user("make the tests pass"),
		assistant("", call("c1", "bash", map[string]any{"command": "go test ./..."})),
		result("c1", "bash", "--- FAIL: TestParse (0.00s)\n    parse_test.go:12: got 1, want 2\nFAIL\n\n\nCommand exited with code 1", true),
		assistant("", call("c2", "edit", map[string]any{"path": "parse.go", "oldText": "x", "newText": "y"})),
		result("c2", "edit", "Could not find the exact text in parse.go.", true),
		assistant("", call("c3", "edit", map[string]any{"path": "parse.go", "oldText": "a", "newText": "b"})),
		result("c3", "edit", "Successfully replaced text in parse.go.", false),
		assistant("", call("c4", "bash", map[string]any{"command": "go vet ./...\ngo build ./..."})),
		result("c4", "bash", "(no output)", false),
		assistant("", call("c5", "bash", map[string]any{"command": "npm run dev"})),
		result("c5", "bash", "Command aborted", true),
		assistant("", call("c6", "bash", map[string]any{"command": "grep -n missing parse.go"})),
		result("c6", "bash", "(no output)\n\nCommand exited with code 1", true),
		userBash("git status", "clean", intp(0), false),
		userBash("make lint", "lint.go:3: unused variable", intp(2), false),
		userBash("sleep 100", "", nil, true),
		{Role: compact.RoleAssistant, StopReason: compact.StopError, Meta: &compact.MessageMeta{ErrorMessage: "overloaded_error: try again\nmore detail"}},
	}
	out := run(t, New(Options{}), history(msgs...))

	cmds := sectionBody(t, out, "### Commands run")
	wantCmds := strings.Join([]string{
		"- `go test ./...` (exit 1)",
		"- `go vet ./... …(+1 lines)` (exit 0)",
		"- `npm run dev` (aborted)",
		"- `grep -n missing parse.go` (exit 1)",
		"- `git status` (exit 0, run by the user)",
		"- `make lint` (exit 2, run by the user)",
		"- `sleep 100` (cancelled, run by the user)",
	}, "\n")
	if cmds != wantCmds {
		t.Errorf("commands =\n%s\nwant\n%s", cmds, wantCmds)
	}

	blocked := sectionBody(t, out, "### Blocked")
	wantBlocked := strings.Join([]string{
		"- `go test ./...` (exit 1): --- FAIL: TestParse (0.00s) ⏎ parse_test.go:12: got 1, want 2 ⏎ FAIL",
		"- `make lint` (exit 2, run by the user): lint.go:3: unused variable",
		"- Model call failed: overloaded_error: try again",
	}, "\n")
	if blocked != wantBlocked {
		t.Errorf("blocked =\n%s\nwant\n%s", blocked, wantBlocked)
	}
	resolved := sectionBody(t, out, "### Errors since resolved")
	if resolved != "- `edit` on `parse.go` failed: Could not find the exact text in parse.go. (later succeeded)" {
		t.Errorf("resolved = %q", resolved)
	}
	done := sectionBody(t, out, "### Done")
	mustContain(t, done, "- Modified 1 file: `parse.go` (1 edit)", "- Ran `go vet ./... …(+1 lines)` (exit 0)")
	mustNotContain(t, done, "git status", "grep")
}

func TestFailureClearedByLaterSuccess(t *testing.T) {
	tests := []struct {
		name    string
		later   *compact.Message
		cleared bool
	}{
		{"same command succeeds", result("c2", "bash", "ok", false), true},
		{"same command fails again", result("c2", "bash", "boom\nCommand exited with code 1", true), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := run(t, New(Options{}), history(
				user("build it"),
				assistant("", call("c1", "bash", map[string]any{"command": "make"})),
				result("c1", "bash", "error: boom\nCommand exited with code 2", true),
				assistant("", call("c2", "bash", map[string]any{"command": "make 2>&1 | tail -5"})),
				tt.later,
			))
			blocked := sectionBody(t, out, "### Blocked")
			if got := strings.Contains(blocked, "error: boom"); got == tt.cleared {
				t.Errorf("blocked =\n%s\ncleared = %v", blocked, tt.cleared)
			}
		})
	}
}

func TestBashStatusFromDetails(t *testing.T) {
	res := result("c1", "bash", "all good", false)
	res.Extra = map[string]json.RawMessage{"details": json.RawMessage(`{"exitCode":3}`)}
	out := run(t, New(Options{}), history(
		user("run it"),
		assistant("", call("c1", "bash", map[string]any{"command": "./check.sh"})),
		res,
	))
	mustContain(t, sectionBody(t, out, "### Commands run"), "- `./check.sh` (exit 3)")
}

func TestTodoLatestListWins(t *testing.T) {
	first := call("t1", "todo_write", map[string]any{"todos": []map[string]any{
		{"content": "Old item", "status": "pending"},
	}})
	second := call("t2", "TodoWrite", map[string]any{"todos": []map[string]any{
		{"content": "Write the parser", "status": "completed"},
		{"content": "Add tests", "status": "in_progress"},
		{"content": "Update docs", "status": "pending"},
		{"content": "Dropped idea", "status": "cancelled"},
	}})
	failed := call("t3", "todo_write", map[string]any{"todos": []map[string]any{
		{"content": "Never applied", "status": "pending"},
	}})
	out := run(t, New(Options{}), history(
		user("build a parser"),
		assistant("", first), result("t1", "todo_write", "ok", false),
		assistant("Plan updated.", second), result("t2", "TodoWrite", "ok", false),
		assistant("", failed), result("t3", "todo_write", "invalid arguments", true),
		assistant("Next I will write docs."),
	))
	if got := sectionBody(t, out, "## Next Steps"); got != "- [ ] Add tests (in progress)\n- [ ] Update docs" {
		t.Errorf("next steps = %q", got)
	}
	mustContain(t, sectionBody(t, out, "### Done"), "- [x] Write the parser")
	mustContain(t, sectionBody(t, out, "### In Progress"), "- In progress: Add tests")
	mustNotContain(t, out, "Old item", "Never applied", "Dropped idea")
}

func TestParseTodosShapes(t *testing.T) {
	tests := []struct {
		name string
		args string
		want []todoItem
		ok   bool
	}{
		{"todos with status", `{"todos":[{"content":"a","status":"completed"},{"content":"b","status":"in-progress"}]}`,
			[]todoItem{{"a", todoDone}, {"b", todoActive}}, true},
		{"bare array of strings", `["[x] a","[ ] b","c"]`, []todoItem{{"a", todoDone}, {"b", todoPending}, {"c", todoPending}}, true},
		{"items with done flag", `{"items":[{"title":"a","done":true},{"text":"b"}]}`, []todoItem{{"a", todoDone}, {"b", todoPending}}, true},
		{"codex plan", `{"plan":[{"step":"a","status":"in_progress"}]}`, []todoItem{{"a", todoActive}}, true},
		{"empty list clears", `{"todos":[]}`, []todoItem{}, true},
		{"no list", `{"foo":1}`, nil, false},
		{"not json", `nope`, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseTodos(json.RawMessage(tt.args))
			if ok != tt.ok || len(got) != len(tt.want) {
				t.Fatalf("parseTodos = %v, %v; want %v, %v", got, ok, tt.want, tt.ok)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("item %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
	for name, want := range map[string]bool{
		"todo_write": true, "TodoWrite": true, "todowrite": true, "todo": true, "update_plan": true,
		"todo_read": false, "TodoRead": false, "bash": false, "get_todos": false,
	} {
		if isTodoTool(name) != want {
			t.Errorf("isTodoTool(%q) = %v", name, !want)
		}
	}
}

func TestConstraintsDecisionsPlan(t *testing.T) {
	out := run(t, New(Options{}), history(
		user("Add caching to the API. Never touch the vendor directory! Do we have tests? I prefer small commits."),
		assistant("I'll use an LRU cache rather than a plain map. Let me look at the code."),
		user("ok. You must keep the public API unchanged."),
		assistant("The cache is in place.\n\nNext steps:\n1. Add eviction tests\n2. Benchmark the hot path\n\nThen I will update the README."),
	))
	if got := sectionBody(t, out, "## Constraints & Preferences"); got != "- Never touch the vendor directory!\n- I prefer small commits.\n- You must keep the public API unchanged." {
		t.Errorf("constraints = %q", got)
	}
	if got := sectionBody(t, out, "## Key Decisions"); got != "- I'll use an LRU cache rather than a plain map." {
		t.Errorf("decisions = %q", got)
	}
	if got := sectionBody(t, out, "## Next Steps"); got != "- Next steps:\n- Add eviction tests\n- Benchmark the hot path\n- Then I will update the README." {
		t.Errorf("next steps = %q", got)
	}
	inProgress := sectionBody(t, out, "### In Progress")
	mustContain(t, inProgress, "Last assistant statement", "Then I will update the README.")
}

func TestNextStepsAfterNewUserRequest(t *testing.T) {
	out := run(t, New(Options{}), history(
		user("fix it"),
		assistant("Fixed. Next I will clean up."),
		user("now add logging please"),
		assistant("", call("c1", "read", map[string]any{"path": "main.go"})),
		result("c1", "read", "package main", false),
	))
	if got := sectionBody(t, out, "## Next Steps"); got != "- Continue with the latest user request: now add logging please" {
		t.Errorf("next steps = %q", got)
	}
	mustContain(t, sectionBody(t, out, "### In Progress"), "- Last action: `read` on `main.go` (ok)")
}

func TestInstructions(t *testing.T) {
	s := New(Options{UserBudgetTokens: 60, ShortenedChars: 40})
	req := history(
		user("Please keep the database migrations reversible, each one needs a down step "+strings.Repeat(".", 80)),
		user("Unrelated: rename the logger package and update every import site "+strings.Repeat(".", 120)),
	)
	req.Instructions = "Focus on the database migrations"
	out := run(t, s, req)
	crit := sectionBody(t, out, "## Critical Context")
	mustContain(t, crit, "- Requested focus: Focus on the database migrations")
	users := sectionBody(t, out, "### User messages (newest first)")
	// The focus message is older but gets the budget first: verbatim.
	mustOrder(t, users, "- Unrelated: rename", "left out]", "- Please keep the database migrations reversible, each one needs a down step "+strings.Repeat(".", 80))

	req.Instructions = ""
	out = run(t, s, req)
	// Without the focus the older message is left out of the user
	// messages; the Goal still quotes it, as the session's first request.
	mustNotContain(t, out, "Requested focus")
	mustNotContain(t, sectionBody(t, out, "## Critical Context"), "down step "+strings.Repeat(".", 80))
	mustContain(t, sectionBody(t, out, "## Goal"), "- Initially: Please keep the database migrations reversible, each one needs a down step "+strings.Repeat(".", 80))
}

func TestPreviousSummaryMerged(t *testing.T) {
	prev := strings.Join([]string{
		"## Goal",
		"- Initially: build a CLI",
		"",
		"## Constraints & Preferences",
		"- Never use cgo.",
		"",
		"## Progress",
		"",
		"### Done",
		"- Ran `go build` (exit 0)",
		"",
		"### In Progress",
		"- (none)",
		"",
		"### Blocked",
		"- (none)",
		"",
		"## Key Decisions",
		"- Use cobra rather than flag.",
		"",
		"## Next Steps",
		"- Write docs",
		"",
		"## Branch",
		"`main` in /src/cli",
		"",
		"## Critical Context",
		"",
		"### User messages (newest first)",
		"- build a CLI",
		"  with two commands",
		"",
		"### Notes from earlier",
		"| a | b |",
		"|---|---|",
		"| 1 | 2 |",
	}, "\n")
	req := history(
		user("add a --verbose flag. Never use cgo."),
		assistant("", call("c1", "bash", map[string]any{"command": "go build"})),
		result("c1", "bash", "", false),
		assistant("Added the flag."),
	)
	req.PreviousSummary = prev
	out := run(t, New(Options{}), req)

	got := headingsOf(out)
	want := append(append([]string(nil), historyHeadings...), "### Commands run", "### User messages (newest first)", "### Branch", "### Notes from earlier")
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("headings = %q\nwant %q\n%s", got, want, out)
	}
	if g := sectionBody(t, out, "## Goal"); g != "- Initially: build a CLI\n- Most recently: add a --verbose flag. Never use cgo." {
		t.Errorf("goal = %q", g)
	}
	// The exact duplicates appear once, the previous item first.
	if c := sectionBody(t, out, "## Constraints & Preferences"); c != "- Never use cgo." {
		t.Errorf("constraints = %q", c)
	}
	if d := sectionBody(t, out, "### Done"); d != "- Ran `go build` (exit 0)" {
		t.Errorf("done = %q", d)
	}
	mustContain(t, sectionBody(t, out, "## Key Decisions"), "- Use cobra rather than flag.")
	mustContain(t, sectionBody(t, out, "## Next Steps"), "- Write docs")
	mustOrder(t, sectionBody(t, out, "### User messages (newest first)"),
		"- add a --verbose flag. Never use cgo.", "- build a CLI\n  with two commands")
	if b := sectionBody(t, out, "### Branch"); b != "`main` in /src/cli" {
		t.Errorf("branch = %q", b)
	}
	if n := sectionBody(t, out, "### Notes from earlier"); n != "| a | b |\n|---|---|\n| 1 | 2 |" {
		t.Errorf("notes = %q", n)
	}
}

// TestPreviousSummaryFromEngine merges a summary shaped as the engine
// stores it: history, a split turn's start after "---", file lists.
func TestPreviousSummaryFromEngine(t *testing.T) {
	s := New(Options{})
	hist := run(t, s, history(user("build the thing"), assistant("Built.")))
	turn := run(t, s, &compact.SummaryRequest{Kind: compact.SummaryTurnPrefix, Messages: []*compact.Message{user("now test it")}})
	stored := hist + "\n\n---\n\n**The current turn began before the kept messages. Its start:**\n\n" + turn +
		"\n\n" + compact.FormatFileLists([]string{"a.go"}, []string{"b.go"})
	req := history(user("next part"))
	req.PreviousSummary = stored
	out := run(t, s, req)
	got := headingsOf(out)
	// The split turn is history now: its request joins the user
	// messages, newer than the history's; nothing of the separator or
	// of what it said of the kept messages remains.
	want := append(append([]string(nil), historyHeadings...), "### User messages (newest first)")
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("headings = %q\nwant %q\n%s", got, want, out)
	}
	if u := sectionBody(t, out, "### User messages (newest first)"); u != "- next part\n- now test it\n- build the thing" {
		t.Errorf("user messages = %q", u)
	}
	if g := sectionBody(t, out, "## Goal"); g != "- Initially: build the thing\n- Most recently: next part" {
		t.Errorf("goal = %q", g)
	}
	mustNotContain(t, out, "The current turn began", "Context for the Kept Messages")
	mustNotContain(t, out, "<read-files>", "<modified-files>", "---")
}

func TestPreviousSummaryWithoutHeadings(t *testing.T) {
	req := history(user("go on"))
	req.PreviousSummary = "We built the parser.\n\nThe lexer still has a bug with tabs."
	out := run(t, New(Options{}), req)
	if got := sectionBody(t, out, "### Earlier summary"); got != "We built the parser.\n\nThe lexer still has a bug with tabs." {
		t.Errorf("earlier summary = %q", got)
	}
}

// TestPreviousSummaryNothingLost merges a summary into a new one, then
// that one again, and checks that every line of text survives.
func TestPreviousSummaryNothingLost(t *testing.T) {
	prev := "# Checkpoint\n\n## Goal\nShip v2.\n\n## Key Decisions Made\n1. **SQLite** - simple\n2. Keep the old API\n\n## Next Steps (WP3-WP4)\n\n### WP3: Port the CLI\n- Copy main.go\n\n```\n## not a heading\n```\n"
	s := New(Options{})
	req := history(user("continue with WP3"), assistant("Copying main.go now."))
	req.PreviousSummary = prev
	once := run(t, s, req)
	req2 := history(user("and WP4"))
	req2.PreviousSummary = once
	twice := run(t, s, req2)
	for _, out := range []string{once, twice} {
		mustContain(t, out, "**Checkpoint**", "Ship v2.", "**Key Decisions Made**", "1. **SQLite** - simple",
			"2. Keep the old API", "**Next Steps (WP3-WP4)**", "**WP3: Port the CLI**", "- Copy main.go", "```\n## not a heading\n```")
	}
	// The earlier request stays quoted with the user's messages; the
	// Goal speaks of the latest one only.
	mustContain(t, twice, "- continue with WP3", "- Most recently: and WP4")
	if strings.Count(twice, "Most recently") != 1 {
		t.Errorf("the Goal piles up latest requests:\n%s", twice)
	}
	if strings.Count(twice, "Ship v2.") != 1 || strings.Count(twice, "- Copy main.go") != 1 {
		t.Errorf("duplicates after the second merge:\n%s", twice)
	}
}

func TestTurnPrefix(t *testing.T) {
	req := &compact.SummaryRequest{
		Kind: compact.SummaryTurnPrefix,
		Messages: []*compact.Message{
			user("refactor the config loader"),
			assistant("I'll read it first.", call("c1", "read", map[string]any{"path": "config.go"})),
			result("c1", "read", "package config", false),
			assistant("", call("c2", "bash", map[string]any{"command": "go test ./config"})),
			result("c2", "bash", "FAIL config_test.go:9: expected nil\nCommand exited with code 1", true),
			assistant("The test fails because of a nil map. I will initialize it instead of checking later."),
		},
		Instructions: "config",
	}
	out := run(t, New(Options{}), req)
	if got := headingsOf(out); strings.Join(got, "|") != strings.Join(turnHeadings, "|") {
		t.Fatalf("headings = %q", got)
	}
	if got := sectionBody(t, out, "## Turn Request"); got != "- refactor the config loader" {
		t.Errorf("turn request = %q", got)
	}
	work := sectionBody(t, out, "## Work So Far in This Turn")
	mustContain(t, work, "- Ran `go test ./config` (exit 1)", "- Failed: `go test ./config` (exit 1): FAIL config_test.go:9: expected nil",
		"- Read 1 file: `config.go`", "I will initialize it instead of checking later.")
	mustContain(t, sectionBody(t, out, "## Context for the Kept Messages"), "- Requested focus: config",
		"- Decided: I will initialize it instead of checking later.")
}

func TestMaxTokensSynthetic(t *testing.T) {
	msgs := bigConversation()
	full := run(t, New(Options{}), history(msgs...))
	for _, max := range []int{250, 600, 1500, 4000} {
		t.Run(strconv.Itoa(max), func(t *testing.T) {
			req := history(msgs...)
			req.MaxTokens = max
			req.PreviousSummary = "## Goal\n- an old goal\n\n## Branch\n" + strings.Repeat("- an old note that takes room\n", 40)
			out := run(t, New(Options{}), req)
			if got := tokens(out); got > max {
				t.Errorf("tokens = %d > %d", got, max)
			}
			for _, h := range historyHeadings {
				if !strings.Contains(out, "\n"+h+"\n") && !strings.HasPrefix(out, h+"\n") {
					t.Errorf("heading %q lost", h)
				}
			}
			mustContain(t, out, "left out to fit the summary budget]")
		})
	}
	turn := &compact.SummaryRequest{Kind: compact.SummaryTurnPrefix, Messages: msgs, MaxTokens: 400}
	out := run(t, New(Options{}), turn)
	if got := tokens(out); got > 400 {
		t.Errorf("turn prefix: tokens = %d > 400", got)
	}
	if got := headingsOf(out); strings.Join(got, "|") != strings.Join(turnHeadings, "|") {
		t.Errorf("turn prefix headings = %q", got)
	}

	req := history(msgs...)
	req.MaxTokens = tokens(full) + 10
	if out := run(t, New(Options{}), req); out != full {
		t.Errorf("a budget that fits changed the output")
	}
}

func bigConversation() []*compact.Message {
	var msgs []*compact.Message
	for i := 0; i < 40; i++ {
		n := strconv.Itoa(i)
		msgs = append(msgs,
			user("step "+n+": please change module "+n+" and never break the build. "+strings.Repeat("detail ", 40)),
			assistant("I'll use approach "+n+" instead of the old one.",
				call("b"+n, "bash", map[string]any{"command": "make test-" + n}),
				call("e"+n, "edit", map[string]any{"path": "mod" + n + ".go"})),
			result("b"+n, "bash", "error: case "+n+" failed\nCommand exited with code 2", true),
			result("e"+n, "edit", "ok", false),
			assistant("Module "+n+" changed.\n\nNext I will run the tests for module "+n+"."),
		)
	}
	return msgs
}

func TestDeterministic(t *testing.T) {
	req := history(bigConversation()...)
	req.Instructions = "module 7"
	req.PreviousSummary = "## Goal\n- old\n\n## Odd\ntext"
	req.MaxTokens = 1200
	a := run(t, New(Options{}), req)
	for i := 0; i < 5; i++ {
		if b := run(t, New(Options{}), req); a != b {
			t.Fatalf("run %d differs", i)
		}
	}
}

func TestDoesNotModifyMessages(t *testing.T) {
	msgs := bigConversation()
	before := make([]string, len(msgs))
	for i, m := range msgs {
		before[i] = m.Text()
	}
	run(t, New(Options{}), history(msgs...))
	for i, m := range msgs {
		if m.Text() != before[i] {
			t.Fatalf("message %d changed", i)
		}
	}
}

func TestModifiedFilesCount(t *testing.T) {
	req := history(user("x"))
	req.ModifiedFiles = []string{"a.go", "b.go"}
	req.ReadFiles = []string{"c.go"}
	out := run(t, New(Options{}), req)
	mustContain(t, sectionBody(t, out, "### Done"), "- 2 files modified so far in the session (listed at the end)")
	mustNotContain(t, out, "<read-files>", "<modified-files>", "c.go")
}

func TestIsInspection(t *testing.T) {
	tests := map[string]bool{
		`ls -la`:                                true,
		`grep -n "a\|b" x.go | head -5`:         true,
		`cd pkg && git diff 2>&1 | tail`:        true,
		`cat > /tmp/x.py << 'EOF'`:              false,
		`echo hi > out.txt`:                     false,
		`find . -name '*.o' -delete`:            false,
		`sed -i 's/a/b/' f`:                     false,
		`npm run check 2>&1 | tail -5`:          false,
		`git commit -m "ls"`:                    false,
		`FOO=1 grep x y 2>/dev/null`:            true,
		`rg pattern; echo "done; rm -rf /"`:     true,
		`cd /tmp && rm x`:                       false,
		`(cd a && ls) || echo missing >&2`:      true,
		`wc -l *.go && go build ./...`:          false,
		`printf '%s\n' a | sort | uniq -c`:      true,
		`git log --oneline | head -3; git show`: true,
	}
	for cmd, want := range tests {
		if got := facts.Inspection(cmd); got != want {
			t.Errorf("isInspection(%q) = %v, want %v", cmd, got, want)
		}
	}
}

func TestShorten(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"abcdefghij", 4, "abcd [… 6 of 10 chars left out]"},
		{"héllo wörld", 6, "héllo [… 6 of 11 chars left out]"},
	}
	for _, tt := range tests {
		if got := shorten(tt.in, tt.n); got != tt.want {
			t.Errorf("shorten(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

// A long turn compacted twice: the second span holds no user message, so
// the goal comes from the earlier summary's turn request instead of being
// left empty.
func TestGoalFromEarlierTurnRequest(t *testing.T) {
	prev := "No earlier history.\n\n---\n\n**The current turn began before the kept messages. Its start:**\n\n" +
		"## Turn Request\n- Port the exporter to the new API and keep the old flags working.\n\n" +
		"## Work So Far in This Turn\n- Ran `go build ./...` (exit 0)\n"
	req := history(
		assistant("Now the tests.", call("c1", "bash", map[string]any{"command": "go test ./exporter"})),
		result("c1", "bash", "ok  \texporter\t0.2s", false),
	)
	req.PreviousSummary = prev
	out := run(t, &Summarizer{}, req)
	goal := sectionBody(t, out, "## Goal")
	mustContain(t, goal, "Port the exporter to the new API and keep the old flags working.")
	mustNotContain(t, goal, "(none)")
}

// TestFirstRequestQuotedAgain: a first request that an earlier summary
// paraphrased is quoted word for word from SummaryRequest.FirstRequest,
// once, and not when the earlier summary already quotes it.
func TestFirstRequestQuotedAgain(t *testing.T) {
	s := New(Options{})
	const ask = "Port the parser to Go; keep every CLI flag as it is."
	req := history(user("next part"))
	req.PreviousSummary = "## Goal\nThe user wants a Go port of the parser.\n"
	req.FirstRequest = user(ask)
	out := run(t, s, req)
	goal := sectionBody(t, out, "## Goal")
	mustContain(t, goal, "- Initially: "+ask, "- Most recently: next part")
	if n := strings.Count(out, ask); n != 1 {
		t.Errorf("the first request is quoted %d times", n)
	}
	req.PreviousSummary = "## Goal\n- Initially: " + ask + "\n"
	out = run(t, s, req)
	if n := strings.Count(out, ask); n != 1 {
		t.Errorf("with an earlier summary quoting it, the first request appears %d times:\n%s", n, out)
	}
}

// TestIdentifiersBounded: a history naming more identifiers than any
// budget keeps lists at most maxIdentifiers of them, the most important
// first (so the budget's shrink never drops thousands of lines one by
// one).
func TestIdentifiersBounded(t *testing.T) {
	var msgs []*compact.Message
	for i := 0; i < maxIdentifiers+2000; i++ {
		msgs = append(msgs, user(fmt.Sprintf("look at ticket %d", 100000+i)))
	}
	out := run(t, New(Options{}), history(msgs...))
	ids := sectionBody(t, out, "### Identifiers")
	if n := strings.Count(ids, "`"); n/2 > maxIdentifiers || n == 0 {
		t.Errorf("%d identifiers listed, want between 1 and %d", n/2, maxIdentifiers)
	}
}

// Claude Code writes <system-reminder> blocks into the user's text and
// into tool results; a summary of such messages as they are (the proxy
// sees them so) quotes neither a reminder as the user's words nor one as
// a failure's output.
func TestRemindersNotQuoted(t *testing.T) {
	const r = "<system-reminder>\nThe TodoWrite tool hasn't been used recently. Consider using it.\n</system-reminder>"
	tests := []struct {
		name     string
		msgs     []*compact.Message
		goal     string // a line the Goal section must hold
		blocked  string // a line the Blocked section must hold; "" for none
		withheld string // text the summary must not hold
	}{
		{"reminder before the prompt", []*compact.Message{user(r + "\n\nrename the loader")}, "- Initially: rename the loader", "", "TodoWrite"},
		{"reminder after the prompt", []*compact.Message{user("rename the loader\n" + r)}, "- Initially: rename the loader", "", "TodoWrite"},
		{"reminder block beside the prompt", []*compact.Message{{Role: compact.RoleUser, Content: []compact.Part{
			{Type: compact.PartText, Text: "rename the loader"}, {Type: compact.PartText, Text: r}}}}, "- Initially: rename the loader", "", "TodoWrite"},
		{"reminder alone is no request", []*compact.Message{user("rename the loader"), assistant("Renamed."), user(r)},
			"- Initially: rename the loader", "", "TodoWrite"},
		{"reminder in a failing result", []*compact.Message{user("run the tests"),
			assistant("", call("c1", "bash", map[string]any{"command": "go test ./..."})),
			result("c1", "bash", r+"\n--- FAIL: TestLoad (0.00s)\nFAIL\n\nCommand exited with code 1", true)},
			"- Initially: run the tests", "- `go test ./...` (exit 1): --- FAIL: TestLoad (0.00s) ⏎ FAIL", "TodoWrite"},
		{"failing result that is only a reminder", []*compact.Message{user("run the tests"),
			assistant("", call("c1", "bash", map[string]any{"command": "go test ./..."})),
			result("c1", "bash", r, true)},
			"- Initially: run the tests", "- `go test ./...` (error): (no output)", "TodoWrite"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := run(t, New(Options{}), history(tc.msgs...))
			mustNotContain(t, out, tc.withheld, "system-reminder")
			mustContain(t, sectionBody(t, out, "## Goal"), tc.goal)
			if tc.blocked != "" {
				mustContain(t, sectionBody(t, out, "### Blocked"), tc.blocked)
			}
		})
	}
}
