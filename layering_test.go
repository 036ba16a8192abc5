package compact_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"go/build"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The module's packages stand in layers (docs/architecture.md draws
// them): a package imports only packages of a lower layer, so the domain
// never learns about its doors and a door never reaches into another.
// Every package must have a layer: a new one is placed here on purpose.
var layers = []struct {
	rank     int
	patterns []string // a path relative to the module; "x/..." is x and below
}{
	// Infrastructure that knows nothing of the domain.
	{0, []string{"internal/swar", "internal/zerocopy", "internal/numfmt"}},
	{1, []string{"internal/jsontext", "internal/redact"}},
	// The domain and the engine.
	{2, []string{"."}},
	// Infrastructure for the doors, in terms of the domain.
	{3, []string{"internal/jsonrec", "internal/apihttp"}},
	// Formats and rules built directly on the domain; the proxy's state contract.
	{4, []string{"session", "summarize", "summarize/facts", "memlog", "tiktoken", "report", "proxy/store"}},
	// The APIs, the extractive summarizer, the benchmark and the stores.
	{5, []string{"summarize/extractive", "anthropic", "openai", "retention",
		"proxy/store/bolt", "proxy/store/redis", "proxy/store/storetest"}},
	// The readers of other agents' files.
	{6, []string{"agents/..."}},
	// The doors: the format registry and the proxy.
	{7, []string{"agents", "proxy"}},
	// Test harnesses.
	{8, []string{"internal/testing/..."}},
	// What wires and drives the doors.
	{9, []string{"internal/testing/clustertest", "cmd/...", "internal/cmd/...", "e2e", "examples/...", "scripts/...", "bench/..."}},
}

// layerOf returns the rank of the package at rel (relative to the module
// root), the most specific pattern winning.
func layerOf(rel string) (int, bool) {
	best, bestLen, found := 0, -1, false
	for _, l := range layers {
		for _, p := range l.patterns {
			n := -1
			switch {
			case p == rel:
				n = len(p) + 1 // an exact name beats a subtree
			case strings.HasSuffix(p, "/..."):
				base := strings.TrimSuffix(p, "/...")
				if strings.HasPrefix(rel, base+"/") {
					n = len(base)
				}
			}
			if n > bestLen {
				best, bestLen, found = l.rank, n, true
			}
		}
	}
	return best, found
}

type listedPackage struct {
	ImportPath string
	Module     *struct{ Path string }
	Imports    []string
}

// modulePackages runs go list over the module and returns its packages.
func modulePackages(t *testing.T) (module string, pkgs []listedPackage) {
	t.Helper()
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	cmd := exec.Command(goBin, "list", "-json", "./...")
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.Error
		if errors.As(err, &ee) {
			t.Skipf("go command not available: %v", err)
		}
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	dec := json.NewDecoder(&out)
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		if p.Module != nil {
			module = p.Module.Path
		}
		pkgs = append(pkgs, p)
	}
	if module == "" || len(pkgs) == 0 {
		t.Fatal("go list named no module packages")
	}
	return module, pkgs
}

func rel(module, path string) (string, bool) {
	if path == module {
		return ".", true
	}
	r, ok := strings.CutPrefix(path, module+"/")
	return r, ok
}

// TestLayering checks the import graph against the layers above: no
// package imports one of its own layer or above.
func TestLayering(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	module, pkgs := modulePackages(t)
	for _, p := range pkgs {
		from, _ := rel(module, p.ImportPath)
		rf, ok := layerOf(from)
		if !ok {
			t.Errorf("package %s has no layer: place it in layering_test.go (and docs/architecture.md)", from)
			continue
		}
		for _, imp := range p.Imports {
			to, inModule := rel(module, imp)
			if !inModule {
				continue // the root's own rule is TestDomainImports
			}
			rt, ok := layerOf(to)
			if !ok {
				continue // reported as its own package
			}
			if rt >= rf {
				t.Errorf("%s (layer %d) imports %s (layer %d): a package imports only lower layers", from, rf, to, rt)
			}
		}
	}
}

// TestLayerOf pins the matching rules the layering test relies on.
func TestLayerOf(t *testing.T) {
	for _, c := range []struct {
		rel  string
		want int
	}{
		{".", 2},
		{"internal/zerocopy", 0},
		{"agents", 7},
		{"agents/codex", 6},
		{"proxy/store", 4},
		{"proxy/store/redis", 5},
		{"proxy", 7},
		{"internal/testing/fakeupstream", 8},
		{"internal/testing/clustertest", 9},
		{"internal/jsonrec", 3},
		{"cmd/compact", 9},
	} {
		got, ok := layerOf(c.rel)
		if !ok || got != c.want {
			t.Errorf("layerOf(%q) = %d, %v; want %d", c.rel, got, ok, c.want)
		}
	}
	if _, ok := layerOf("nowhere"); ok {
		t.Error("an unplaced package got a layer")
	}
}

// nothing from outside the module.
func TestDomainImports(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	const internal = "github.com/compactkit/compact/internal/"
	for _, imp := range pkg.Imports {
		switch {
		case imp == "unsafe":
			t.Errorf("the root package imports unsafe: put the conversion in internal/zerocopy")
		case strings.HasPrefix(imp, internal):
		case strings.Contains(strings.SplitN(imp, "/", 2)[0], "."):
			t.Errorf("the root package imports %s: only the standard library and %s* may be", imp, internal)
		}
	}
}
