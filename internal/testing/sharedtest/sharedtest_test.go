package sharedtest

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLookup(t *testing.T) {
	good := t.TempDir()
	if err := os.MkdirAll(filepath.Join(good, "sessions", "pi"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Without the variable the folder is ../shared/testdata from the
	// module root, which is three levels above this package's folder.
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	beside := filepath.Join(wd, "..", "..", "..", "..", "shared", "testdata")

	tests := []struct {
		name         string
		env          string
		wantDir      string
		wantExplicit bool
		wantErr      bool
	}{
		{name: "named and there", env: good, wantDir: good, wantExplicit: true},
		{name: "named and missing", env: filepath.Join(good, "nope"), wantDir: filepath.Join(good, "nope"), wantExplicit: true, wantErr: true},
		{name: "named without pi sessions", env: t.TempDir(), wantExplicit: true, wantErr: true},
		{name: "beside the clone", env: "", wantDir: beside},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(Env, tt.env)
			dir, explicit, err := Lookup()
			if explicit != tt.wantExplicit {
				t.Errorf("explicit = %v, want %v", explicit, tt.wantExplicit)
			}
			if tt.wantDir != "" && filepath.Clean(dir) != filepath.Clean(tt.wantDir) {
				t.Errorf("dir = %s, want %s", dir, tt.wantDir)
			}
			if tt.env != "" && (err != nil) != tt.wantErr {
				t.Errorf("err = %v, want an error: %v", err, tt.wantErr)
			}
		})
	}
}

func TestPiSession(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sessions", "pi"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sessions", "pi", "x.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(Env, dir)
	if got, want := PiSession(t, "x.jsonl"), filepath.Join(dir, "sessions", "pi", "x.jsonl"); got != want {
		t.Errorf("PiSession = %s, want %s", got, want)
	}
}

func TestCopies(t *testing.T) {
	want, err := os.ReadFile(DemoPath(t))
	if err != nil {
		t.Fatal(err)
	}
	p := TempCopy(t, DemoPath(t))
	path, remove := DemoCopy()
	for _, copy := range []string{p, path} {
		got, err := os.ReadFile(copy)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) || filepath.Base(copy) != "demo.jsonl" || copy == DemoPath(t) {
			t.Errorf("%s: not a copy of the demo named demo.jsonl", copy)
		}
	}
	remove()
	if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
		t.Errorf("DemoCopy's remove left %s: %v", filepath.Dir(path), err)
	}
}

// The module root is this module's go.mod, not a nested module's.
func TestDeclares(t *testing.T) {
	for gomod, want := range map[string]bool{
		"module github.com/compactkit/compact\n\ngo 1.26\n":                true,
		"// comment\nmodule \"github.com/compactkit/compact\"\n":           true,
		"module github.com/compactkit/compact/bench/decoders\n\ngo 1.26\n": false,
		"go 1.26\n": false,
	} {
		if got := declares([]byte(gomod), modulePath); got != want {
			t.Errorf("declares(%q) = %v, want %v", gomod, got, want)
		}
	}
}
