package agents

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReaderFiles: every reader is laid out in the files the package
// comment lists, each holding what it says: Detect in detect.go; Format,
// Read and ReadFile in read.go; records.go and build.go beside them
// (requestbody's build is its anthropic.go and chat.go).
func TestReaderFiles(t *testing.T) {
	for _, f := range Formats() {
		dir := readerDir(t, f.Name)
		if dir == "" {
			continue
		}
		files := []string{"doc.go", "detect.go", "read.go", "records.go", "build.go"}
		if dir == "requestbody" {
			files = files[:3]
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
