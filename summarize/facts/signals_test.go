package facts

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

func TestShellFileOps(t *testing.T) {
	r, w, e := FileRead, FileWritten, FileEdited
	for _, tt := range []struct {
		cmd  string
		want []FileOp
	}{
		{"sed -i 's/a/b/g' main.go util.go", []FileOp{{"main.go", e}, {"util.go", e}}},
		{"sed -i '' 's/a/b/' pkg/x.ts", []FileOp{{"pkg/x.ts", e}}},
		{"sed -i.bak -e 's/a/b/' -e 's/c/d/' conf.yaml", []FileOp{{"conf.yaml", e}}},
		{"sed -n '1,20p' main.go", nil},
		{"mv old.go new.go", []FileOp{{"old.go", e}, {"new.go", w}}},
		{"mv a.ts b.ts dir/", []FileOp{{"a.ts", e}, {"b.ts", e}, {"dir/", w}}},
		{"git mv a.go b.go && git rm c.go", []FileOp{{"a.go", e}, {"b.go", w}, {"c.go", e}}},
		{"cp -r src/base.tmpl out/page.tmpl", []FileOp{{"src/base.tmpl", r}, {"out/page.tmpl", w}}},
		{"rm -rf build/ tmp/cache.db", []FileOp{{"build/", e}, {"tmp/cache.db", e}}},
		{"echo hi > out.txt; date >> log.txt", []FileOp{{"out.txt", w}, {"log.txt", w}}},
		{"go test ./... 2>/dev/null | tee -a report.txt", []FileOp{{"report.txt", w}}},
		{"cat > script.sh <<'EOF'\nrm -rf /\nmv x y\nEOF\nchmod +x script.sh", []FileOp{{"script.sh", w}}},
		{"cat a.go b.go | head -n 20 c.go", []FileOp{{"a.go", r}, {"b.go", r}, {"c.go", r}}},
		{"wc -l < input.txt > count.txt", []FileOp{{"input.txt", r}, {"count.txt", w}}},
		{"perl -pi -e 's/x/y/' a.pl", []FileOp{{"a.pl", e}}},
		{"touch new.go && cd sub && rm \"$FILE\" ok.txt", []FileOp{{"new.go", w}, {"ok.txt", e}}},
		{`mv "with space.go" 'quoted.go'`, []FileOp{{"with space.go", e}, {"quoted.go", w}}},
		{"for f in *.ts; do mv \"$f\" lib/; done", []FileOp{{"lib/", w}}},
		{"grep -rn error src/", nil},
		{"if then fi ((( unparsable\necho ok > fine.txt", []FileOp{{"fine.txt", w}}},
	} {
		if got := ShellFileOps(tt.cmd); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ShellFileOps(%q) = %v, want %v", tt.cmd, got, tt.want)
		}
	}
}

func TestAddShellFiles(t *testing.T) {
	var ops compact.FileOps
	AddShellFiles(&ops, "cat in.txt > out.txt && sed -i s/a/b/ conf.ini")
	read, modified := ops.Lists()
	if !reflect.DeepEqual(read, []string{"in.txt"}) || !reflect.DeepEqual(modified, []string{"conf.ini", "out.txt"}) {
		t.Errorf("read %v, modified %v", read, modified)
	}
}

func TestInspection(t *testing.T) {
	for cmd, want := range map[string]bool{
		"ls -la":                          true,
		"grep -rn foo . | head -5":        true,
		"git log --oneline | head":        true,
		"sed -n 1,5p a.go":                true,
		"cat a > b":                       false,
		"sed -i s/a/b/ a.go":              false,
		"find . -name x -delete":          false,
		"go test ./...":                   false,
		"git commit -m x":                 false,
		"grep x file 2>/dev/null":         true,
		"npm run check 2>&1 | grep error": false,
		"((( broken":                      false,
	} {
		if got := Inspection(cmd); got != want {
			t.Errorf("Inspection(%q) = %v, want %v", cmd, got, want)
		}
	}
}

func call(id, name string, args map[string]any) *compact.Message {
	raw, _ := json.Marshal(args)
	return &compact.Message{Role: compact.RoleAssistant, Content: []compact.Part{{Type: compact.PartToolCall,
		ToolCall: &compact.ToolCall{ID: id, Name: name, Arguments: raw}}}}
}

func result(id, name, text string, isError bool) *compact.Message {
	m := compact.TextMessage(compact.RoleToolResult, text)
	m.ToolCallID, m.ToolName, m.IsError = id, name, isError
	return m
}

func bash(id, cmd, out string, isError bool) []*compact.Message {
	return []*compact.Message{call(id, "bash", map[string]any{"command": cmd}), result(id, "bash", out, isError)}
}

func TestFailures(t *testing.T) {
	code := func(n int) *int { return &n }
	for _, tt := range []struct {
		name string
		msgs []*compact.Message
		want []Failure // Index, Tool, Status, ExitZero and Line compared
	}{
		{"non-zero exit", bash("1", "go build ./...", "# pkg\nmain.go:3:2: undefined: x\n\nCommand exited with code 1", true),
			[]Failure{{Index: 1, Tool: "bash", Target: "go build ./...", Status: "exit 1", Line: "main.go:3:2: undefined: x"}}},
		{"errors printed with exit 0", bash("1", "go build ./... 2>&1 | tail -3", "main.go:3:2: undefined: x", false),
			[]Failure{{Index: 1, Tool: "bash", Target: "go build ./... 2>&1 | tail -3", Status: "exit 0", ExitZero: true, Line: "main.go:3:2: undefined: x"}}},
		{"test failure with exit 0", bash("1", "go test ./... | tee out.txt", "=== RUN TestX\n--- FAIL: TestX (0.01s)\nFAIL", false),
			[]Failure{{Index: 1, Tool: "bash", Target: "go test ./... | tee out.txt", Status: "exit 0", ExitZero: true, Line: "--- FAIL: TestX (0.01s)"}}},
		{"grep finding error lines is no failure", bash("1", "grep -rn 'error TS' src/", "src/a.ts:3: // error TS2304 here", false), nil},
		{"grep finding nothing is no failure", bash("1", "grep -rn nothing src/", "(no output)\n\nCommand exited with code 1", true), nil},
		{"aborted is no failure", bash("1", "sleep 100", "Command aborted", true), nil},
		{"clean exit 0", bash("1", "go build ./...", "(no output)", false), nil},
		{"file tool error", []*compact.Message{call("e", "edit", map[string]any{"path": "a.go"}),
			result("e", "edit", "Could not find the exact text in a.go.", true)},
			[]Failure{{Index: 1, Tool: "edit", Target: "a.go", Status: "error", Line: "Could not find the exact text in a.go."}}},
		{"user's own command", []*compact.Message{{Role: compact.RoleBash, Meta: &compact.MessageMeta{Command: "make", Output: "make: *** No rule to make target 'x'.  Stop.", ExitCode: code(2)}}},
			[]Failure{{Index: 0, Target: "make", Status: "exit 2", Line: "make: *** No rule to make target 'x'. Stop."}}},
		{"exit code from details", []*compact.Message{call("1", "bash", map[string]any{"command": "npm test"}),
			{Role: compact.RoleToolResult, ToolCallID: "1", ToolName: "bash", Content: []compact.Part{{Type: compact.PartText, Text: "Error: boom"}},
				Meta: &compact.MessageMeta{Details: json.RawMessage(`{"exitCode":3}`)}}},
			[]Failure{{Index: 1, Tool: "bash", Target: "npm test", Status: "exit 3", Line: "Error: boom"}}},
		{"exit code from details kept in Extra", []*compact.Message{call("1", "bash", map[string]any{"command": "npm test"}),
			{Role: compact.RoleToolResult, ToolCallID: "1", ToolName: "bash", Content: []compact.Part{{Type: compact.PartText, Text: "Error: boom"}},
				Extra: map[string]json.RawMessage{"details": json.RawMessage(`{"exitCode":4}`)}}},
			[]Failure{{Index: 1, Tool: "bash", Target: "npm test", Status: "exit 4", Line: "Error: boom"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := Failures(tt.msgs)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Failures = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestDistinctiveLine(t *testing.T) {
	for _, tt := range []struct{ out, want string }{
		{"compiling...\n\x1b[31msrc/a.ts(3,5): error TS2304: Cannot find name 'x'.\x1b[0m\nFound 1 error.", "src/a.ts(3,5): error TS2304: Cannot find name 'x'."},
		{"step one\nsomething could not be done\nmore", "something could not be done"},
		{"plain first line\nsecond", "plain first line"},
		{"Traceback (most recent call last):\n  File \"x.py\", line 1\nValueError: bad", "Traceback (most recent call last):"},
		{"\n\nCommand exited with code 1\n", ""},
		{"error: " + strings.Repeat("x", 300), "error: " + strings.Repeat("x", MaxLineRunes-7)},
	} {
		if got := DistinctiveLine(tt.out); got != tt.want {
			t.Errorf("DistinctiveLine(%q) = %q, want %q", tt.out, got, tt.want)
		}
	}
	if got := ErrorLines("--- FAIL: TestA (0s)\n    a_test.go:3: got 1\nok\nFAIL", 3); !reflect.DeepEqual(got, []string{"--- FAIL: TestA (0s)", "a_test.go:3: got 1", "FAIL"}) {
		t.Errorf("ErrorLines = %q", got)
	}
}

func TestIdentifiersIn(t *testing.T) {
	text := "See https://example.com/a/b. (and commit 9f3c2a1d7e) for PR #123 on port 8080, not 42;\n" +
		"use `--keep-recent` and `Engine.Compact`, v1.2.3, TS2304, 10ms and 20,000 tokens.\n" +
		"```\ncode 123456 https://hidden.example.com\n```\nid 0b2d6e1c-7f41-4a77-9d0e-2a1b3c4d5e6f"
	var got []string
	for _, id := range IdentifiersIn(text) {
		got = append(got, string(id.Kind)+":"+id.Text)
	}
	want := []string{"name:--keep-recent", "name:Engine.Compact", "url:https://example.com/a/b", "hash:9f3c2a1d7e",
		"id:#123", "number:8080", "id:v1.2.3", "id:TS2304", "number:20,000",
		"hash:0b2d6e1c-7f41-4a77-9d0e-2a1b3c4d5e6f"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("IdentifiersIn =\n%q\nwant\n%q", got, want)
	}
}

func TestIdentifiers(t *testing.T) {
	msgs := []*compact.Message{
		compact.TextMessage(compact.RoleUser, "port 8080 please"),
		compact.TextMessage(compact.RoleAssistant, "Using `serve` on 8080."),
		result("x", "bash", "tool output 99999 is not counted", false),
		compact.TextMessage(compact.RoleAssistant, "`serve` again"),
	}
	got := Identifiers(msgs)
	want := []Identifier{
		{Text: "8080", Kind: IdentNumber, ByUser: true, Count: 2, First: 0, Last: 1},
		{Text: "serve", Kind: IdentName, Count: 2, First: 1, Last: 3},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Identifiers = %+v", got)
	}
	ByPriority(got)
	if got[0].Text != "8080" {
		t.Errorf("ByPriority puts %q first, want the user's", got[0].Text)
	}
}

func TestContains(t *testing.T) {
	for _, tt := range []struct {
		text, needle string
		want         bool
	}{
		{"ran 1000 steps", "100", false},
		{"ran 100 steps", "100", true},
		{"v12 and v1.", "v1", true},
		{"v12", "v1", false},
		{"see /a/AGENTS.md now", "AGENTS.md", true},
		{"--dry-run-x", "--dry-run", false},
		{"use `--dry-run`", "--dry-run", true},
		{"f(x)y", "f(x)", true},
		{"", "x", false},
	} {
		if got := Contains(tt.text, tt.needle); got != tt.want {
			t.Errorf("Contains(%q, %q) = %v", tt.text, tt.needle, got)
		}
	}
	if got := Normalize("  a\n\t b  c\n"); got != "a b c" {
		t.Errorf("Normalize = %q", got)
	}
}

func TestFilesTouched(t *testing.T) {
	msgs := []*compact.Message{
		call("1", "read", map[string]any{"path": "a.go"}),
		call("2", "bash", map[string]any{"command": "sed -i s/x/y/ b.go"}),
		{Role: compact.RoleBash, Meta: &compact.MessageMeta{Command: "mv c.go d.go"}},
	}
	ops := FilesTouched(msgs)
	if got := FileList(&ops); !reflect.DeepEqual(got, []string{"a.go", "b.go", "c.go", "d.go"}) {
		t.Errorf("FileList = %v", got)
	}
}

func FuzzShellFileOps(f *testing.F) {
	for _, s := range []string{"sed -i '' s/a/b/ x", "cat > f <<EOF\nx\nEOF", "mv a b", "rm -- -x", "echo $(", "'", "a >", "tee"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		for _, op := range ShellFileOps(cmd) {
			if op.Path == "" {
				t.Errorf("empty path from %q", cmd)
			}
		}
		Inspection(cmd)
	})
}

func FuzzIdentifiersIn(f *testing.F) {
	for _, s := range []string{"`a` https://x.y/z 12345 #1 9f3c2a1d", "```\n`x`", "``", "http://"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, id := range IdentifiersIn(text) {
			if id.Text == "" {
				t.Errorf("empty identifier from %q", text)
			}
		}
		DistinctiveLine(text)
	})
}
