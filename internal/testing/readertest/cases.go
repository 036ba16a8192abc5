package readertest

import (
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
