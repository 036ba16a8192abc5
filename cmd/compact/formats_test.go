package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact/internal/testing/sharedtest"
	"github.com/compactkit/compact/session"
)

// requestBody is a real request body pi sent (see requestbody/testdata).
const requestBody = "../../agents/requestbody/testdata/pi-anthropic.json"

// TestReadOnlyCommandsReadOtherFormats: the commands that only read
// take another agent's file as it is; the ones that write refuse it and
// point at compact import.
func TestReadOnlyCommandsReadOtherFormats(t *testing.T) {
	c := newCLI(t)
	file := sharedtest.TempCopy(t, requestBody)
	before, _ := os.ReadFile(file)
	for _, args := range [][]string{
		{"inspect", file},
		{"context", file},
		{"tree", file},
		{"run", "--dry-run", file},
		{"inspect", "--format", "request-body", file},
	} {
		out := c.ok(args...)
		if out == "" {
			t.Errorf("compact %s printed nothing", strings.Join(args, " "))
		}
	}
	var rep contextReport
	c.okJSON(&rep, "--json", "context", file)
	if len(rep.Messages) != 7 || !strings.Contains(string(rep.Messages[0].Message), "Run the shell steps") {
		t.Errorf("context of the request body: %d messages", len(rep.Messages))
	}
	for _, args := range [][]string{
		{"run", file},
		{"prune", file},
		{"pin", file, "x"},
		{"migrate", file},
	} {
		r := c.run(args...)
		if r.code == 0 || !strings.Contains(r.stderr, "format request-body") || !strings.Contains(r.stderr, "compact import") {
			t.Errorf("compact %s: exit %d, stderr %q; want a refusal naming the format and compact import", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	if r := c.run("run", "--format", "request-body", file); r.code != 2 || !strings.Contains(r.stderr, "--dry-run") {
		t.Errorf("run --format without --dry-run: exit %d, %q", r.code, r.stderr)
	}
	if r := c.run("inspect", "--format", "word", file); r.code != 2 || !strings.Contains(r.stderr, `"word": unknown session format (known: pi, `) {
		t.Errorf("inspect --format word: exit %d, %q", r.code, r.stderr)
	}
	// --format pi makes a foreign file an error of the session reader.
	if r := c.run("inspect", "--format", "pi", file); r.code != 1 || !strings.Contains(r.stderr, "(format request-body)") {
		t.Errorf("inspect --format pi: exit %d, %q", r.code, r.stderr)
	}
	after, _ := os.ReadFile(file)
	if string(before) != string(after) {
		t.Error("a command changed the file")
	}
}

func TestImportCommand(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "imported.jsonl")
	var r importReport
	c.okJSON(&r, "--json", "import", requestBody, "-o", out, "--cwd", dir)
	if r.Format != "request-body" || r.Messages != 7 || r.Entries < 9 {
		t.Errorf("import report %+v", r)
	}
	s, err := session.Open(out, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Header().Cwd != dir || s.Header().Version != session.CurrentVersion {
		t.Errorf("header %+v", s.Header())
	}
	// The converted file is a session every command continues.
	c.ok("run", "--keep-recent", "10", out)
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"import", requestBody, "-o", out}, 1, "the file exists"},
		{[]string{"import", requestBody}, 2, `required flag(s) "output" not set`},
		{[]string{"import", requestBody, "-o", filepath.Join(dir, "no", "x.jsonl")}, 2, "does not exist"},
		{[]string{"import", demoSession, "-o", filepath.Join(dir, "y.jsonl")}, 1, "already a pi session"},
		{[]string{"import", filepath.Join(dir, "missing.json"), "-o", filepath.Join(dir, "z.jsonl")}, 1, "no such file"},
	}
	for _, tt := range tests {
		res := c.run(tt.args...)
		if res.code != tt.code || !strings.Contains(res.stderr, tt.want) {
			t.Errorf("compact %s: exit %d, %q; want %d and %q", strings.Join(tt.args, " "), res.code, res.stderr, tt.code, tt.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the folder holds %d files after the failures, want only the import", len(entries))
	}
}

// TestReportReadsOtherFormats: compact report takes another agent's file,
// detected or named by --format.
func TestReportReadsOtherFormats(t *testing.T) {
	c := newCLI(t)
	out := filepath.Join(t.TempDir(), "r.html")
	c.ok("report", "../../agents/codex/testdata/pomodoro.jsonl", "-o", out)
	page, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(page), "pomodoro") {
		t.Fatalf("report of a Codex rollout: %v", err)
	}
	c.ok("report", "--format", "request-body", requestBody, "-o", out)
	if out := c.ok("bench", "--format", "request-body", "--keep-recent", "10", requestBody); !strings.Contains(out, "extractive") {
		t.Errorf("bench --format request-body printed %q", out)
	}
}

// TestUnknownFormatMessages: import and the commands that only read
// describe a file no format reads in the same one line, exit 1, and
// leave the file as it was; real formats are still taken.
func TestUnknownFormatMessages(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const reads = "not a format compact reads (pi, claude-code, cline, codex, gemini-cli, openhands, request-body, swe-agent)"
	ui := string(readFile(t, "../../agents/cline/testdata/xml-task/ui_messages.json"))
	folder := filepath.Join(dir, "folder")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	stream := `{"type":"init","timestamp":"2025-10-10T10:00:00.000Z","session_id":"c0ffee","model":"gemini-2.5-pro"}
{"type":"message","timestamp":"2025-10-10T10:00:00.100Z","role":"user","content":"hi"}
{"type":"result","timestamp":"2025-10-10T10:00:02.100Z","status":"success","stats":{"total_tokens":12}}
`
	tests := []struct {
		name string
		path string
		want string // stderr after "compact: PATH: "
	}{
		{"empty file", write("empty.json", ""), "empty file: " + reads},
		{"random bytes", write("random.bin", "\x8f\x00\x13\xfe\xc1binary\x00"), "binary data, not text: " + reads},
		{"folder", folder, "a folder: neither a Cline task (api_conversation_history.json) nor an OpenHands session (events/<n>.json); name a session file (compact reads pi, claude-code, cline, codex, gemini-cli, openhands, request-body, swe-agent)"},
		{"cline ui_messages.json alone", write("task/ui_messages.json", ui),
			"JSON array of 27 objects with keys ts, type, say: looks like Cline ui_messages.json; import needs api_conversation_history.json beside it"},
		{"gemini stream-json", write("stream.jsonl", stream),
			"JSON Lines, the first line an object with keys type, timestamp, session_id: looks like Gemini CLI --output-format stream-json output, which compact does not read; import the run's chat recording instead (~/.gemini/tmp/<project>/chats/session-*.jsonl)"},
		{"array of unknown objects", write("arr.json", `[{"id":1,"text":"x"},{"id":2}]`), "JSON array of 2 objects with keys id, text: " + reads},
		{"object of unknown shape", write("obj.json", `{"foo":1,"bar":[1]}`), "JSON object with keys foo, bar: " + reads},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, _ := os.ReadFile(tt.path)
			want := "compact: " + tt.path + ": " + tt.want
			out := filepath.Join(dir, "out.jsonl")
			for _, args := range [][]string{
				{"import", tt.path, "-o", out},
				{"inspect", tt.path},
				{"context", tt.path},
				{"prune", tt.path},
			} {
				if got := c.fails(1, args...); got != want {
					t.Errorf("compact %s:\n got %s\nwant %s", strings.Join(args, " "), got, want)
				}
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("import wrote its output")
			}
			if after, _ := os.ReadFile(tt.path); string(after) != string(before) {
				t.Error("the file changed")
			}
		})
	}
	// A pi session: import says so; one without its header line gets the
	// session reader's error from the commands that read it.
	if got := c.fails(1, "import", demoSession, "-o", filepath.Join(dir, "x.jsonl")); got != "compact: "+demoSession+": already a pi session (use compact fork to copy it, or --format to name its real format)" {
		t.Errorf("import of a pi session: %s", got)
	}
	nohead := write("nohead.jsonl", `{"type":"message","id":"a1","parentId":null,"timestamp":"2025-01-01T00:00:00Z","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}`+"\n")
	if got := c.fails(1, "inspect", nohead); got != "compact: "+nohead+`:1: not a pi session file: the first line has type "message", want "session"` {
		t.Errorf("inspect of a session without header: %s", got)
	}
	// Real formats, each detected by import.
	for _, file := range []string{requestBody, "../../agents/codex/testdata/pomodoro.jsonl", "../../agents/cline/testdata/xml-task/ui_messages.json",
		"../../agents/cline/testdata/xml-task", "../../agents/geminicli/testdata/session-2026-03-27-readme.json", "../../agents/openhands/testdata/basic.json",
		"../../agents/claudecode/testdata/pomodoro.jsonl", "../../agents/sweagent/testdata/function-calling.traj"} {
		out := filepath.Join(t.TempDir(), "s.jsonl")
		c.ok("import", file, "-o", out)
	}
}

// TestOpenHandsOutput: an OpenHands evaluation or resolver output.jsonl
// is read one instance at a time: the only one, or the one --instance
// names; --instance is a usage error where it has no meaning.
func TestOpenHandsOutput(t *testing.T) {
	c := newCLI(t)
	const three = "../../agents/openhands/testdata/output.jsonl"
	const ids = `("example__repo-1", "example__repo-2", "example__repo-3")`
	dir := t.TempDir()
	out := filepath.Join(dir, "s.jsonl")
	// The stream of this instance holds an unknown action and a result
	// without its call: warnings, and a compaction.
	res := c.run("--json", "import", "--instance", "example__repo-2", three, "-o", out)
	var r importReport
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil || res.code != 0 {
		t.Fatalf("import: exit %d, %v, stderr %q", res.code, err, res.stderr)
	}
	if r.Format != "openhands" || r.Compactions != 1 || r.Messages == 0 || len(r.Warnings) != 1 {
		t.Errorf("import report %+v", r)
	}
	if s := open(t, out); s.Header().ID == "" {
		t.Error("no session id")
	}
	for _, args := range [][]string{
		{"inspect", "--instance", "example__repo-3", three},
		{"context", "--instance", "example__repo-1", three},
		{"inspect", "../../agents/openhands/testdata/output-one.jsonl"},
		{"inspect", "../../agents/openhands/testdata/resolver-output.jsonl"},
		{"inspect", "--instance", "42", "../../agents/openhands/testdata/resolver-output.jsonl"},
		{"run", "--dry-run", "--instance", "example__repo-3", three},
	} {
		if c.ok(args...) == "" {
			t.Errorf("compact %s printed nothing", strings.Join(args, " "))
		}
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"import", three, "-o", filepath.Join(dir, "x.jsonl")},
			three + ": OpenHands output.jsonl of 3 instances " + ids + ": name one with --instance"},
		{[]string{"inspect", three},
			three + ": OpenHands output.jsonl of 3 instances " + ids + ": name one with --instance"},
		{[]string{"inspect", "--instance", "nope", three},
			three + `: no instance "nope"; the file holds "example__repo-1", "example__repo-2", "example__repo-3": name one with --instance`},
		{[]string{"inspect", "--instance", "x", "../../agents/codex/testdata/pomodoro.jsonl"},
			"--instance x: ../../agents/codex/testdata/pomodoro.jsonl: the file holds one conversation, no instances to pick from (format codex)"},
		{[]string{"inspect", "--instance", "x", "../../agents/openhands/testdata/basic.json"},
			`--instance x: ../../agents/openhands/testdata/basic.json: instance "x" named, but this is one event stream, not an evaluation or resolver output.jsonl`},
		{[]string{"inspect", "--instance", "x", demoSession},
			"--instance x: " + demoSession + " is read as a pi session, which holds one conversation"},
		{[]string{"import", "--instance", "x", demoSession, "-o", filepath.Join(dir, "y.jsonl")},
			"--instance x: " + demoSession + " is a pi session, which holds one conversation"},
		{[]string{"run", "--instance", "x", three},
			"--instance x: run appends to FILE, which must be a pi session; use --dry-run, or compact import first"},
	}
	for _, tt := range tests {
		// Usage errors end by pointing at the help.
		if got, want := c.fails(2, tt.args...), "compact: "+tt.want+" (see compact --help)"; got != want {
			t.Errorf("compact %s:\n got %s\nwant %s", strings.Join(tt.args, " "), got, want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the folder holds %d files after the failures, want only the import", len(entries))
	}
}
