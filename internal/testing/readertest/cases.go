package readertest

import (
	"path/filepath"
	"testing"

	"github.com/compactkit/compact"
)

// Case is one body of a reader's table test and what the transcript read
// from it holds.
type Case struct {
	Name string
	// Body is the content of the file.
	Body string
	// Roles counts the message entries by role (see CheckRoles).
	Roles map[compact.Role]int
	// Customs counts the custom entries by type (see CheckCustoms); nil
	// leaves them unchecked.
	Customs map[string]int
	// Unknown counts the record types the reader did not know (see
	// CheckUnknown; nil: none).
	Unknown map[string]int
	// Warnings are the beginnings of the warnings, in order (see
	// CheckWarnings).
	Warnings []string
	// Check, when set, checks what the counts do not.
	Check func(t *testing.T, tr *compact.Transcript)
}

// RunCases reads the Body of each case with read, as a file called name,
// in a subtest, and checks its counts, its warnings, that each tool
// result follows its call, the case's Check, and the round trip through
// a pi session file, whose context holds the user, assistant, tool
// result and custom messages.
func RunCases(t *testing.T, read ReadFunc, name string, cases []Case) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			t.Helper()
			tr, err := read([]byte(tc.Body), name)
			if err != nil {
				t.Fatal(err)
			}
			CheckRoles(t, tr, tc.Roles)
			if tc.Customs != nil {
				CheckCustoms(t, tr, tc.Customs)
			}
			CheckUnknown(t, tr, tc.Unknown)
			CheckWarnings(t, tr, tc.Warnings)
			CheckPairing(t, tr)
			if tc.Check != nil {
				tc.Check(t, tr)
			}
			RoundTrip(t, tr, Context(tc.Roles)+tc.Roles[compact.RoleCustom])
		})
	}
}

// Sample is one file of a reader's testdata and what the transcript read
// from it holds.
type Sample struct {
	// File is the file's path below testdata.
	File string
	// Model, Session and Cwd are the transcript's model, session id and
	// working directory ("": none).
	Model, Session, Cwd string
	// Roles counts the message entries by role (see CheckRoles).
	Roles map[compact.Role]int
	// Customs counts the custom entries by type (see CheckCustoms; nil:
	// none).
	Customs map[string]int
	// Unknown counts the record types the reader did not know (see
	// CheckUnknown; nil: none).
	Unknown map[string]int
	// Warnings is how many warnings the reader gives.
	Warnings int
	// Context is how many messages the context of the imported session
	// holds; 0 counts the user, assistant, tool result and custom
	// messages of Roles.
	Context int
	// Check, when set, checks what the rest does not.
	Check func(t *testing.T, tr *compact.Transcript)
}

// RunSamples reads each sample with readFile, a reader's ReadFile, in a
// subtest, and checks the transcript: its format, model, session and
// working directory, its counts and warnings, that each tool result
// follows its call, every (when set: what the reader holds of every
// file; path is the file's), the sample's Check, and the round trip
// through a pi session file (see RoundTrip).
func RunSamples(t *testing.T, readFile func(path string) (*compact.Transcript, error), format string, samples []Sample,
	every func(t *testing.T, path string, tr *compact.Transcript)) {
	t.Helper()
	for _, s := range samples {
		t.Run(s.File, func(t *testing.T) {
			t.Helper()
			tr := ReadTestdata(t, readFile, s.File)
			if tr.Format != format || tr.Model != s.Model || tr.SessionID != s.Session || tr.Cwd != s.Cwd {
				t.Errorf("format %q model %q session %q cwd %q, want %q %q %q %q", tr.Format, tr.Model, tr.SessionID, tr.Cwd,
					format, s.Model, s.Session, s.Cwd)
			}
			CheckRoles(t, tr, s.Roles)
			CheckCustoms(t, tr, s.Customs)
			CheckUnknown(t, tr, s.Unknown)
			if len(tr.Warnings) != s.Warnings {
				t.Errorf("warnings %q, want %d", tr.Warnings, s.Warnings)
			}
			if n := CheckPairing(t, tr); n != s.Roles[compact.RoleToolResult] {
				t.Errorf("%d results paired, want %d", n, s.Roles[compact.RoleToolResult])
			}
			if every != nil {
				every(t, filepath.Join("testdata", s.File), tr)
			}
			if s.Check != nil {
				s.Check(t, tr)
			}
			context := s.Context
			if context == 0 {
				context = Context(s.Roles) + s.Roles[compact.RoleCustom]
			}
			RoundTrip(t, tr, context)
		})
	}
}
