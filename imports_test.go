package compact

import (
	"go/build"
	"strings"
	"testing"
)

// TestDomainImports: the root package is the domain. It imports the
// standard library, without unsafe, and the module's internal packages
// (jsontext, redact, zerocopy): never a package that builds on it, and
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
