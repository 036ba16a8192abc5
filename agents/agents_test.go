package agents

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// sharedTestdata is the folder of real pi sessions beside the clone.
func sharedTestdata(t *testing.T) string {
	dir := os.Getenv("COMPACT_TESTDATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "testdata")
	}
	if _, err := os.Stat(filepath.Join(dir, "sessions", "pi")); err != nil {
		t.Skipf("test data not found at %s (set COMPACT_TESTDATA)", dir)
	}
	return dir
}

func TestDetect(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name string
		path string
		want string
	}{
		{"pi session", filepath.Join(sharedTestdata(t), "sessions", "pi", "before-compaction.jsonl"), Pi},
		{"pi session, spaced header", write("spaced.jsonl", `{"type": "session", "version": 3, "id": "x"}`+"\n"), Pi},
		{"demo", "../examples/sessions/demo.jsonl", Pi},
		{"request body", "./requestbody/testdata/pi-chat.json", "request-body"},
		{"claude code", "./claudecode/testdata/pomodoro.jsonl", "claude-code"},
		{"cline history", "./cline/testdata/xml-task/api_conversation_history.json", "cline"},
		{"cline folder", "./cline/testdata/roo-task", "cline"},
		{"swe-agent", "./sweagent/testdata/function-calling.traj", "swe-agent"},
		{"codex", "./codex/testdata/exec-0.135.jsonl", "codex"},
		{"gemini cli", "./geminicli/testdata/session-2026-03-27-readme.json", "gemini-cli"},
		{"gemini cli jsonl", "./geminicli/testdata/session-2026-04-23T12-52-0ab84937.jsonl", "gemini-cli"},
		{"openhands", "./openhands/testdata/basic.json", "openhands"},
		{"openhands events", "./openhands/testdata/session/5f1b2c3d/events", "openhands"},
		{"openhands session", "./openhands/testdata/session/5f1b2c3d", "openhands"},
		{"openhands evaluation output", "./openhands/testdata/output.jsonl", "openhands"},
		{"openhands resolver output", "./openhands/testdata/resolver-output.jsonl", "openhands"},
		{"cline ui_messages.json beside its history", "./cline/testdata/roo-task/ui_messages.json", "cline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Detect(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if f.Name != tt.want {
				t.Errorf("Detect = %q, want %q", f.Name, tt.want)
			}
		})
	}
	for _, bad := range []string{write("notes.txt", "hello\n"), write("empty", ""), dir} {
		if _, err := Detect(bad); !errors.Is(err, ErrUnknownFormat) {
			t.Errorf("Detect(%s) = %v, want ErrUnknownFormat", bad, err)
		}
	}
	if _, err := Detect(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Detect(missing) = %v", err)
	}
}

func TestByName(t *testing.T) {
	for _, name := range Names() {
		f, err := ByName(name)
		if err != nil || f.Name != name {
			t.Errorf("ByName(%q) = %q, %v", name, f.Name, err)
		}
		if name != Pi && (f.Detect == nil || f.ReadFile == nil || f.Agent == "") {
			t.Errorf("format %q is missing its reader", name)
		}
	}
	if _, err := ByName("word"); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("ByName(word) = %v", err)
	}
}

// Detection picks the right format for every test file of every reader
// (each file its own detector accepts): no earlier detector in Formats
// takes it first.
func TestDetectionOrder(t *testing.T) {
	for _, f := range Formats() {
		n := 0
		for _, file := range exampleFiles(t, f.Name) {
			head, err := readHead(file)
			if err != nil {
				t.Fatal(err)
			}
			if !f.Detect(head) {
				continue // a sibling file or a bad-input sample
			}
			n++
			got, err := DetectHead(head, file)
			if err != nil || got.Name != f.Name {
				t.Errorf("%s: detected as %q (%v), want %s", file, got.Name, err, f.Name)
			}
		}
		if n == 0 {
			t.Errorf("the %s detector accepts none of its own test files", f.Name)
		}
	}
}

// readerDir returns the folder of the package that reads format, the
// one that holds its testdata; for a format it does not know it fails t
// and returns "".
func readerDir(t *testing.T, format string) string {
	t.Helper()
	dir := map[string]string{
		"gemini-cli": "geminicli", "claude-code": "claudecode", "codex": "codex", "cline": "cline",
		"openhands": "openhands", "swe-agent": "sweagent", "request-body": "requestbody",
	}[format]
	if dir == "" {
		t.Errorf("format %s: no reader folder named for it in readerDir", format)
	}
	return dir
}

// exampleFiles lists the test files of a format's package.
func exampleFiles(t *testing.T, format string) []string {
	pkg := readerDir(t, format)
	var files []string
	filepath.WalkDir(filepath.Join(pkg, "testdata"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(path) != ".md" {
			files = append(files, path)
		}
		return nil
	})
	if len(files) == 0 {
		t.Errorf("no test files for %s in %s/testdata", format, pkg)
	}
	return files
}
