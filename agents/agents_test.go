package agents

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
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
	for _, f := range readers(t) {
		n := 0
		for _, file := range exampleFiles(t, f) {
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

// reader is a format of Formats and the folder of the package that
// reads it, which holds its testdata.
type reader struct {
	Format
	dir string
}

// readers returns the formats of Formats with their folders. A format
// without a folder named here fails t and is left out.
func readers(t *testing.T) []reader {
	t.Helper()
	dirs := map[string]string{
		"gemini-cli": "geminicli", "claude-code": "claudecode", "codex": "codex", "cline": "cline",
		"openhands": "openhands", "swe-agent": "sweagent", "request-body": "requestbody",
	}
	var out []reader
	for _, f := range Formats() {
		if dirs[f.Name] == "" {
			t.Errorf("format %s: no reader folder named for it in readers", f.Name)
			continue
		}
		out = append(out, reader{f, dirs[f.Name]})
	}
	return out
}

// exampleFiles lists the test files of a reader's package.
func exampleFiles(t *testing.T, r reader) []string {
	pkg := r.dir
	var files []string
	filepath.WalkDir(filepath.Join(pkg, "testdata"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(path) != ".md" {
			files = append(files, path)
		}
		return nil
	})
	if len(files) == 0 {
		t.Errorf("no test files for %s in %s/testdata", r.Name, pkg)
	}
	return files
}

// TestReaderFiles: every reader is laid out in the files the package
// comment lists, each holding what it says: Detect in detect.go; Format,
// Read and ReadFile in read.go; records.go and build.go beside them
// (requestbody's build is its anthropic.go and chat.go); compaction.go in
// a reader that makes compaction entries.
func TestReaderFiles(t *testing.T) {
	for _, r := range readers(t) {
		dir := r.dir
		files := []string{"doc.go", "detect.go", "read.go", "records.go", "build.go"}
		if dir == "requestbody" {
			files = files[:3]
		}
		if makesCompactions(t, dir) {
			files = append(files, "compaction.go")
		}
		for _, name := range files {
			if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
				t.Errorf("%s: %v", dir, err)
			}
		}
		where := declFiles(t, dir)
		for name, file := range map[string]string{"Detect": "detect.go", "Format": "read.go", "Read": "read.go", "ReadFile": "read.go"} {
			if where[name] != file {
				t.Errorf("%s: %s is declared in %q, want %s", dir, name, where[name], file)
			}
		}
	}
}

// declFiles returns the file of each top-level function, constant, type
// and variable of the package in dir, tests left out.
func declFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					out[d.Name.Name] = filepath.Base(path)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.ValueSpec:
						for _, n := range s.Names {
							out[n.Name] = filepath.Base(path)
						}
					case *ast.TypeSpec:
						out[s.Name.Name] = filepath.Base(path)
					}
				}
			}
		}
	}
	return out
}

// makesCompactions reports whether the code of the package in dir, tests
// left out, makes compact.KindCompaction entries.
func makesCompactions(t *testing.T, dir string) bool {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "compact.KindCompaction") && filepath.Base(path) != "doc.go" {
			return true
		}
	}
	return false
}
