package store_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestStoresImportNoProxy: the stores and their conformance suite link
// the state contract and nothing else of the proxy, nor the proxy's heavy
// dependencies (metrics, compression, the shell parser). A program that
// only opens a store (an operator's tool, a test) stays small, and the
// arrow points from the proxy to its stores, never back.
func TestStoresImportNoProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs go list")
	}
	goBin := goTool(t)
	const mod = "github.com/compactkit/compact"
	// Packages of the module a store may link: the root (Usage, Reason),
	// internal/, and this package.
	allowed := func(p string) bool {
		return p == mod || strings.HasPrefix(p, mod+"/internal/") || p == mod+"/proxy/store"
	}
	forbidden := []string{
		"github.com/prometheus/",
		"github.com/klauspost/compress",
		"mvdan.cc/sh/",
	}
	for _, pkg := range []string{"proxy/store", "proxy/store/bolt", "proxy/store/redis", "proxy/store/storetest"} {
		t.Run(pkg, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, goBin, "list", "-deps", mod+"/"+pkg)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("go list -deps %s: %v\n%s", pkg, err, stderr.String())
			}
			deps := strings.Fields(string(out))
			if len(deps) == 0 {
				t.Fatalf("go list -deps %s listed nothing", pkg)
			}
			for _, d := range deps {
				if d == mod+"/"+pkg {
					continue
				}
				if strings.HasPrefix(d, mod+"/") || d == mod {
					if !allowed(d) {
						t.Errorf("%s imports %s; a store may use only the root, internal/ and proxy/store", pkg, d)
					}
					continue
				}
				for _, f := range forbidden {
					if strings.HasPrefix(d, f) {
						t.Errorf("%s links %s, a dependency of the proxy's server, not of its state", pkg, d)
					}
				}
			}
		})
	}
}

// goTool returns the go command of the toolchain that built the test, or
// the one on PATH; it skips the test when there is neither.
func goTool(t *testing.T) string {
	t.Helper()
	if root := runtime.GOROOT(); root != "" {
		p := filepath.Join(root, "bin", "go")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	p, err := exec.LookPath("go")
	if errors.Is(err, exec.ErrNotFound) || p == "" {
		t.Skip("no go command to run go list with")
	}
	if err != nil {
		t.Fatalf("looking for the go command: %v", err)
	}
	return p
}
