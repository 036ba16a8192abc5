package readertest

import (
	"strings"
	"testing"
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
