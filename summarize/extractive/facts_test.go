package extractive

import (
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

func TestFactsSections(t *testing.T) {
	first := "Port the exporter to v2 (ticket EXP-2291).\nKeep `--quiet` working.\n" + strings.Repeat("All the details matter here. ", 30)
	req := history(
		user(first),
		assistant("", call("s1", "bash", map[string]any{"command": "sed -i 's/v1/v2/' only/sed.go && cat > gen/new.go <<'EOF'\npackage gen\nEOF"})),
		result("s1", "bash", "(no output)", false),
		assistant("", call("w1", "write", map[string]any{"path": "tool/written.go", "content": "x"})),
		result("w1", "write", "ok", false),
		assistant("", call("b1", "bash", map[string]any{"command": "go build ./... 2>&1 | tail -3"})),
		result("b1", "bash", "exporter/v2.go:12:3: undefined: Sink", false),
		assistant("The sink lives in commit 4be1c9d0a and `NewSink` builds it; see https://example.com/sinks."),
		user("ok"),
		assistant("Noted."),
	)
	req.ModifiedFiles = []string{"tool/written.go"}
	out := run(t, New(Options{}), req)

	// The session's first request, word for word (not shortened to 300).
	mustContain(t, sectionBody(t, out, "## Goal"), bullet("Initially: "+first))
	// The build that exited 0 but printed a compiler error is a failure,
	// quoted by its distinctive line.
	mustContain(t, sectionBody(t, out, "### Blocked"),
		"- `go build ./... 2>&1 | tail -3` (exit 0, errors printed): exporter/v2.go:12:3: undefined: Sink")
	// Files only shell commands touched, without those the engine lists.
	files := sectionBody(t, out, "### Files touched by shell commands")
	mustContain(t, files, "- Changed: `gen/new.go`, `only/sed.go`")
	mustNotContain(t, files, "tool/written.go")
	// Identifiers no other section quotes; those quoted are not repeated.
	ids := sectionBody(t, out, "### Identifiers")
	mustContain(t, ids, "`4be1c9d0a`", "`NewSink`", "`https://example.com/sinks`")
	mustNotContain(t, ids, "EXP-2291", "--quiet")
}

func TestFactsWithinBudget(t *testing.T) {
	var msgs []*compact.Message
	msgs = append(msgs, user("start"))
	for i := 0; i < 200; i++ {
		id := "c" + strings.Repeat("x", i%7)
		msgs = append(msgs,
			assistant("Identifier `name"+strings.Repeat("y", i)+"` and 10"+strings.Repeat("0", i%5)+"7",
				call(id, "bash", map[string]any{"command": "mv dir/a" + strings.Repeat("z", i) + ".go dir/b.go"})),
			result(id, "bash", "(no output)", false))
	}
	req := history(msgs...)
	req.MaxTokens = 1500
	out := run(t, New(Options{}), req)
	if got := tokens(out); got > req.MaxTokens {
		t.Errorf("%d tokens, budget %d", got, req.MaxTokens)
	}
	mustContain(t, out, "### Identifiers", "left out to fit the summary budget")
}

func TestDoneStepsNotCarried(t *testing.T) {
	prev := strings.Join([]string{
		"## Goal",
		"- Initially: build the parser",
		"",
		"## Next Steps",
		"1. Fix the tokenizer in `lex/token.go`",
		"2. Write the README section",
		"3. [ ] Add the fuzz test",
		"- Continue with the latest user request: rename the package",
	}, "\n")
	req := history(
		assistant("Renaming it now.", call("e1", "edit", map[string]any{"path": "lex/token.go", "oldText": "a", "newText": "b"})),
		result("e1", "edit", "ok", false),
		assistant("", call("t1", "todo_write", map[string]any{"todos": []map[string]any{
			{"content": "Add the fuzz test", "status": "completed"},
			{"content": "Write the README section", "status": "pending"},
		}})),
		result("t1", "todo_write", "ok", false),
	)
	req.PreviousSummary = prev
	out := run(t, New(Options{}), req)
	next := sectionBody(t, out, "## Next Steps")
	mustContain(t, next, "2. Write the README section")
	mustNotContain(t, next, "tokenizer", "fuzz test", "rename the package")
	done := sectionBody(t, out, "### Done")
	mustContain(t, done,
		"- Next step of the previous summary, done since: 1. Fix the tokenizer in `lex/token.go`",
		"- Next step of the previous summary, done since: 3. [ ] Add the fuzz test",
		"- Next step of the previous summary, done since: rename the package")
	// Without the span showing it, a step stays.
	req.Messages = []*compact.Message{user("unrelated"), assistant("Looking.")}
	out = run(t, New(Options{}), req)
	mustContain(t, sectionBody(t, out, "## Next Steps"), "1. Fix the tokenizer in `lex/token.go`", "3. [ ] Add the fuzz test")
}
