package compact_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// docFiles lists the reader-facing Markdown files whose links and code
// snippets the tests check, relative to the repository root.
func docFiles(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("no page under docs/")
	}
	return append([]string{"README.md", "CONTRIBUTING.md", "SECURITY.md", "BENCHMARKS.md",
		filepath.Join("examples", "agent", "README.md")}, pages...)
}

// TestDocLinks: every relative link of the docs names a file that exists,
// and every #anchor names a heading of the page it points to.
func TestDocLinks(t *testing.T) {
	for _, file := range docFiles(t) {
		for _, p := range linkProblems(file) {
			t.Error(p)
		}
	}
}

// TestLinkProblems feeds the link check pages with good and broken links,
// so that the check above can be trusted to fail.
func TestLinkProblems(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/target.md", "# Target\n\n## The `compact run FILE` command\n\n## Twice\n\n## Twice\n\n```sh\n# not a heading\n```\n")
	write("code.go", "package x\n")
	for _, tc := range []struct {
		name, page string
		problems   int
	}{
		{"plain file", "[a](docs/target.md)", 0},
		{"file outside the docs", "[a](code.go)", 0},
		{"heading with code", "[a](docs/target.md#the-compact-run-file-command)", 0},
		{"repeated heading", "[a](docs/target.md#twice-1)", 0},
		{"own heading", "# Here we are\n[a](#here-we-are)", 0},
		{"web address", "[a](https://example.com/x.md#nowhere)", 0},
		{"link in code", "```\n[a](missing.md)\n```\nand `[b](missing.md)`", 0},
		{"missing file", "[a](docs/missing.md)", 1},
		{"missing anchor", "[a](docs/target.md#nowhere)", 1},
		{"heading in a code block", "[a](docs/target.md#not-a-heading)", 1},
		{"third of a repeated heading", "[a](docs/target.md#twice-2)", 1},
		{"missing own heading", "# Here\n[a](#there)", 1},
		{"two broken", "[a](nothing.md) [b](#nowhere)", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			write("page.md", tc.page)
			if got := linkProblems(filepath.Join(dir, "page.md")); len(got) != tc.problems {
				t.Errorf("%d problems, want %d: %q", len(got), tc.problems, got)
			}
		})
	}
}

var (
	fenceRE      = regexp.MustCompile("(?ms)^ *```.*?^ *```[^\n]*$")
	inlineCodeRE = regexp.MustCompile("`[^`\n]*`")
	linkRE       = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)
)

// linkProblems returns one line for each relative link of the Markdown
// file that does not resolve.
func linkProblems(file string) []string {
	data, err := os.ReadFile(file)
	if err != nil {
		return []string{err.Error()}
	}
	text := inlineCodeRE.ReplaceAllString(fenceRE.ReplaceAllString(string(data), ""), "")
	var problems []string
	for _, m := range linkRE.FindAllStringSubmatch(text, -1) {
		target := m[1]
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		path, anchor, _ := strings.Cut(target, "#")
		resolved := file
		if path != "" {
			resolved = filepath.Join(filepath.Dir(file), path)
			if _, err := os.Stat(resolved); err != nil {
				problems = append(problems, fmt.Sprintf("%s: link %s: no such file %s", file, target, resolved))
				continue
			}
		}
		if anchor == "" {
			continue
		}
		page, err := os.ReadFile(resolved)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: link %s: %v", file, target, err))
			continue
		}
		if !slices.Contains(headingAnchors(string(page)), anchor) {
			problems = append(problems, fmt.Sprintf("%s: link %s: %s has no heading with that anchor", file, target, resolved))
		}
	}
	return problems
}

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown page: lower case, punctuation dropped, spaces turned into
// hyphens, and -1, -2, ... after a repeated one.
func headingAnchors(page string) []string {
	var anchors []string
	seen := map[string]int{}
	for _, line := range strings.Split(fenceRE.ReplaceAllString(page, ""), "\n") {
		title, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " ")
		if !ok || !strings.HasPrefix(line, "#") || len(line)-len(strings.TrimLeft(line, "#")) > 6 {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(title)) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		anchor := b.String()
		if n := seen[anchor]; n > 0 {
			anchors = append(anchors, fmt.Sprintf("%s-%d", anchor, n))
		} else {
			anchors = append(anchors, anchor)
		}
		seen[anchor]++
	}
	return anchors
}

// snippetRE finds a Go code block with its marker and, when the block is
// followed by one, the "prints" block of its output.
var snippetRE = regexp.MustCompile("(?s)(<!-- example: ([\\w/]+) -->\n)?```go\n(.*?)\n```\n(\nprints[^\n]*\n\n```\n(.*?)\n```)?")

// TestDocSnippetsAreExamples: every Go snippet of the README and docs/ is
// the body of an Example that go test runs. Each carries a marker naming
// its Example, <!-- example: ExampleGuard --> for one of example_test.go
// or <!-- example: session/ExampleOpen --> for another package's, and its
// lines appear, in order and unchanged, in that Example's body. A
// "prints" block after a snippet is the Example's // Output.
func TestDocSnippetsAreExamples(t *testing.T) {
	snippets := 0
	for _, file := range docFiles(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range snippetRE.FindAllStringSubmatch(string(data), -1) {
			snippets++
			if p := snippetProblem(b[2], b[3], b[5]); p != "" {
				t.Errorf("%s: %s", file, p)
			}
		}
	}
	if snippets == 0 {
		t.Fatal("no Go snippet in the docs")
	}
}

// TestSnippetProblem: the snippet check fails a snippet without a
// marker, one naming no Example, one that differs from its Example and
// one whose printed output is not the Example's.
func TestSnippetProblem(t *testing.T) {
	for _, tc := range []struct {
		name, marker, snippet, printed string
		ok                             bool
	}{
		{"the body", "ExamplePin", "ctx := context.Background()", "", true},
		{"another package", "session/ExampleOpen", "view := s.Context()", "", true},
		{"no marker", "", "ctx := context.Background()", "", false},
		{"no such example", "ExampleNothing", "ctx := context.Background()", "", false},
		{"no such package", "nowhere/ExampleOpen", "x", "", false},
		{"changed line", "ExamplePin", "ctx := context.TODO()", "", false},
		{"wrong output", "ExampleLadder_Run", "ladder := compact.Ladder{Strategies: []compact.Strategy{compact.Mask{}, compact.Truncate{}}}", "mask: freed everything", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if p := snippetProblem(tc.marker, tc.snippet, tc.printed); (p == "") != tc.ok {
				t.Errorf("problem %q, want ok %v", p, tc.ok)
			}
		})
	}
}

// snippetProblem checks one snippet against the Example its marker
// names and returns what is wrong, or "".
func snippetProblem(marker, snippet, printed string) string {
	if marker == "" {
		return fmt.Sprintf("a Go snippet has no <!-- example: Name --> marker: %s", firstLine(snippet))
	}
	dir, name := ".", marker
	if i := strings.LastIndexByte(marker, '/'); i >= 0 {
		dir, name = marker[:i], marker[i+1:]
	}
	src, err := os.ReadFile(filepath.Join(dir, "example_test.go"))
	if err != nil {
		return fmt.Sprintf("snippet %s: %v", marker, err)
	}
	body, ok := exampleBody(string(src), name)
	if !ok {
		return fmt.Sprintf("snippet names %s, which %s does not define", marker, filepath.Join(dir, "example_test.go"))
	}
	if !strings.Contains(body, snippet) {
		return fmt.Sprintf("snippet of %s differs from the Example's body; its first line: %s", marker, firstLine(snippet))
	}
	if printed != "" {
		_, out, _ := strings.Cut(body, "// Output:\n")
		if want := strings.TrimSpace(strings.ReplaceAll(out, "// ", "")); printed != want {
			return fmt.Sprintf("output of %s:\n%s\nthe Example's:\n%s", marker, printed, want)
		}
	}
	return ""
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

// TestLayering holds every package of the module to the layering rule of
// docs/architecture.md: a package imports only packages of its own layer
// or below, the root and layer 0 only the standard library besides, and
// every package has a layer. The layers are read from the page's table.
func TestLayering(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	layers, err := parseLayers(string(page))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		imports[fields[0]] = fields[1:]
	}
	for _, p := range layerProblems(layers, imports) {
		t.Error(p)
	}
}

// TestLayerProblems: the layering check fails an import from above, a
// package without a layer and a module outside the standard library in
// the root.
func TestLayerProblems(t *testing.T) {
	const m = module + "/"
	layers, err := parseLayers("## The layering rule\n\n| layer | packages |\n|---|---|\n| 0 | `internal/swar` |\n| 1 | `.` |\n| 2 | `session` `proxy/store` |\n| 3 | `proxy/store/bolt` |\n| 5 | `proxy` |\n| 6 | `cmd/...` |\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		imports  map[string][]string
		problems int
	}{
		{"downwards", map[string][]string{module: {"fmt", m + "internal/swar"}, m + "proxy/store/bolt": {module, m + "proxy/store", "go.etcd.io/bbolt"}, m + "cmd/compact": {m + "proxy"}}, 0},
		{"the same layer", map[string][]string{m + "session": {m + "proxy/store"}}, 0},
		{"a store importing the proxy", map[string][]string{m + "proxy/store/bolt": {m + "proxy"}}, 1},
		{"the root importing a door", map[string][]string{module: {m + "session"}}, 1},
		{"the root importing a module", map[string][]string{module: {"github.com/x/y"}}, 1},
		{"a package without a layer", map[string][]string{m + "newthing": {module}}, 1},
		{"an import without a layer", map[string][]string{m + "proxy": {m + "newthing"}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := layerProblems(layers, tc.imports); len(got) != tc.problems {
				t.Errorf("%d problems, want %d: %q", len(got), tc.problems, got)
			}
		})
	}
}

const module = "github.com/compactkit/compact"

// layerRule maps a package pattern of the architecture page ("session",
// "cmd/..." for cmd and below, "." for the root) to its layer.
type layerRule struct {
	pattern string
	layer   int
}

// parseLayers reads the table of the layering rule's section.
func parseLayers(page string) ([]layerRule, error) {
	_, section, ok := strings.Cut(page, "## The layering rule")
	if !ok {
		return nil, fmt.Errorf("no section \"The layering rule\"")
	}
	if i := strings.Index(section, "\n## "); i >= 0 {
		section = section[:i]
	}
	var rules []layerRule
	row := regexp.MustCompile("(?m)^\\| (\\d+) \\|(.*)\\|$")
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		var layer int
		fmt.Sscan(m[1], &layer)
		for _, p := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(m[2], -1) {
			rules = append(rules, layerRule{p[1], layer})
		}
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("no layer table in the section \"The layering rule\"")
	}
	return rules, nil
}

// layerOf returns the layer of a package of the module: the rule that
// names it, else the longest "x/..." rule that covers it.
func layerOf(rules []layerRule, pkg string) (int, bool) {
	rel := "."
	if pkg != module {
		rel = strings.TrimPrefix(pkg, module+"/")
	}
	best, layer := -1, 0
	for _, r := range rules {
		if r.pattern == rel {
			return r.layer, true
		}
		if base, ok := strings.CutSuffix(r.pattern, "/..."); ok && (rel == base || strings.HasPrefix(rel, base+"/")) && len(base) > best {
			best, layer = len(base), r.layer
		}
	}
	return layer, best >= 0
}

// layerProblems checks the imports of each package (by import path)
// against the layers and returns one line per breach.
func layerProblems(rules []layerRule, imports map[string][]string) []string {
	var problems []string
	pkgs := make([]string, 0, len(imports))
	for p := range imports {
		pkgs = append(pkgs, p)
	}
	slices.Sort(pkgs)
	for _, p := range pkgs {
		layer, ok := layerOf(rules, p)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s has no layer in docs/architecture.md", p))
			continue
		}
		for _, imp := range imports[p] {
			if imp != module && !strings.HasPrefix(imp, module+"/") {
				if first, _, _ := strings.Cut(imp, "/"); layer <= 1 && strings.Contains(first, ".") {
					problems = append(problems, fmt.Sprintf("%s (layer %d) imports %s, which is not the standard library", p, layer, imp))
				}
				continue
			}
			l, ok := layerOf(rules, imp)
			switch {
			case !ok:
				problems = append(problems, fmt.Sprintf("%s imports %s, which has no layer in docs/architecture.md", p, imp))
			case l > layer:
				problems = append(problems, fmt.Sprintf("%s (layer %d) imports %s (layer %d), a layer above it", p, layer, imp, l))
			}
		}
	}
	return problems
}
