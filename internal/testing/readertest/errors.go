package readertest

import (
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

// CheckError asserts that err, what a reader returned for bad input, is
// one line that begins with want: the name of the file, the line and the
// field at fault, and what is wrong with it.
func CheckError(t testing.TB, err error, want string) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("no error, want %q...", want)
	case !strings.HasPrefix(err.Error(), want):
		t.Errorf("error %q, want %q...", err, want)
	case strings.Contains(err.Error(), "\n"):
		t.Errorf("error %q spans lines", err)
	}
}

// Bad is one case of RunBad: the content of a file a reader should refuse
// or read past.
type Bad struct {
	Name string
	// Body is the content of the file.
	Body string
	// Err is the beginning of the error reading it must give (see
	// CheckError); "" when it must read.
	Err string
	// Warnings are the beginnings of the warnings, in order, of a body
	// that reads (see CheckWarnings; nil: none).
	Warnings []string
}

// RunBad reads the Body of each case with read, as a file called name, in
// a subtest: a case with an Err must fail with that error; any other must
// read, with its Warnings, and is then given to check when check is not
// nil (a reader's own checks of what it kept: the entries, the session).
func RunBad(t *testing.T, read ReadFunc, name string, cases []Bad, check func(t *testing.T, tr *compact.Transcript)) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			t.Helper()
			tr, err := read([]byte(tc.Body), name)
			if tc.Err != "" {
				CheckError(t, err, tc.Err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			CheckWarnings(t, tr, tc.Warnings)
			if check != nil {
				check(t, tr)
			}
		})
	}
}
