package compact_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// Every Go snippet in the README is the body of an Example that go test
// runs: each carries a marker naming its Example, and its lines appear,
// in order and unchanged, in that Example's body. A "prints" block after
// a snippet is the Example's // Output.
func TestReadmeSnippetsAreExamples(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)(<!-- example: (\\w+) -->\n)?```go\n(.*?)\n```\n(\nprints[^\n]*\n\n```\n(.*?)\n```)?").FindAllStringSubmatch(string(readme), -1)
	if len(blocks) == 0 {
		t.Fatal("no Go snippet in the README")
	}
	for _, b := range blocks {
		name, snippet := b[2], b[3]
		if name == "" {
			t.Errorf("a README Go snippet has no <!-- example: Name --> marker:\n%s", firstLine(snippet))
			continue
		}
		body, ok := exampleBody(string(src), name)
		if !ok {
			t.Errorf("README snippet names %s, which example_test.go does not define", name)
			continue
		}
		if !strings.Contains(body, snippet) {
			t.Errorf("README snippet of %s differs from the Example's body; its first line: %s", name, firstLine(snippet))
		}
		if printed := b[5]; printed != "" {
			_, out, _ := strings.Cut(body, "// Output:\n")
			want := strings.TrimSpace(strings.ReplaceAll(out, "// ", ""))
			if printed != want {
				t.Errorf("README output of %s:\n%s\nthe Example's:\n%s", name, printed, want)
			}
		}
	}
}

// exampleBody returns the body of func name in src, one tab of
// indentation removed.
func exampleBody(src, name string) (string, bool) {
	head := "func " + name + "() {\n"
	i := strings.Index(src, head)
	if i < 0 {
		return "", false
	}
	rest := src[i+len(head):]
	j := strings.Index(rest, "\n}\n")
	if j < 0 {
		return "", false
	}
	lines := strings.Split(rest[:j], "\n")
	for k, l := range lines {
		lines[k] = strings.TrimPrefix(l, "\t")
	}
	return strings.Join(lines, "\n"), true
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
