package readertest

import (
	"context"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/summarize/extractive"
)

// CheckOrphanResult imports tr as a pi session and checks how a tool
// result without its call, whose output holds orphan, came through: no
// user message of the context carries orphan; a harness note of kind
// compact.OrphanResultKind of format carries it after the line that says
// what it is; and the extractive summary of the context quotes it nowhere,
// its Goal quoting the user's latest request, latest, unless latest is ""
// (a context whose requests are all in an earlier summary). It returns
// the notes found.
func CheckOrphanResult(t testing.TB, tr *compact.Transcript, format, orphan, latest string) []*compact.Message {
	t.Helper()
	s := Import(t, tr, "orphan")
	msgs := s.Context().Messages
	var notes []*compact.Message
	for _, m := range msgs {
		switch {
		case m.Role == compact.RoleUser && strings.Contains(m.Text(), orphan):
			t.Errorf("a user message carries the orphan result %q: %.120q", orphan, m.Text())
		case compact.IsHarnessNote(m) && m.Metadata().CustomType == compact.HarnessNoteType(format, compact.OrphanResultKind):
			if !strings.HasPrefix(m.Text(), "[tool result without its call") || !strings.Contains(m.Text(), orphan) {
				t.Errorf("orphan result note %.120q: want the output %q after a line saying what it is", m.Text(), orphan)
			}
			notes = append(notes, m)
		}
	}
	if len(notes) == 0 {
		t.Errorf("no harness note of kind %s in the context", compact.OrphanResultKind)
	}
	sum := Summary(t, msgs)
	if strings.Contains(sum, orphan) {
		t.Errorf("the summary quotes the orphan result %q:\n%s", orphan, sum)
	}
	if goal := Section(sum, "## Goal"); latest != "" && !strings.Contains(goal, latest) {
		t.Errorf("the summary's Goal does not quote the latest request %q:\n%s", latest, sum)
	}
	return notes
}

// Messages returns the messages of tr's entries, in order.
func Messages(tr *compact.Transcript) []*compact.Message {
	var msgs []*compact.Message
	for _, e := range tr.Entries {
		if e.Message != nil {
			msgs = append(msgs, e.Message)
		}
	}
	return msgs
}

// Summary returns the text of the extractive summary of msgs, the one a
// test of what a summary quotes reads; it fails t when there is none.
func Summary(t testing.TB, msgs []*compact.Message) string {
	t.Helper()
	sum, err := extractive.New(extractive.Options{}).Summarize(context.Background(), &compact.SummaryRequest{Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	return sum.Text
}

// Section returns the body of the Markdown section of doc headed title
// ("## Goal"), white space trimmed: "" when doc has none.
func Section(doc, title string) string {
	i := strings.Index(doc, title+"\n")
	if i < 0 {
		return ""
	}
	body := doc[i+len(title)+1:]
	if j := strings.Index(body, "\n## "); j >= 0 {
		body = body[:j]
	}
	return strings.TrimSpace(body)
}

// Orphan is one case of RunOrphans: a file holding a tool result whose
// call it does not hold.
type Orphan struct {
	Name string
	// File is the name Body is read as; "" reads it as Name.
	File string
	// Body is the content of the file.
	Body string
	// Read, when set, makes the transcript instead of Body (a reader's
	// testdata file, or a file the test builds another way).
	Read func(t *testing.T) *compact.Transcript
	// Orphan is the output of the result without its call; Latest is
	// the user's latest request, "" when the context holds none (see
	// CheckOrphanResult).
	Orphan, Latest string
	// Check, when set, checks the harness notes the result became.
	Check func(t *testing.T, notes []*compact.Message)
}

// RunOrphans reads each case with read, in a subtest, and checks with
// CheckOrphanResult that its result without a call came through as a
// harness note of format, never as the user's words.
func RunOrphans(t *testing.T, read ReadFunc, format string, cases []Orphan) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			t.Helper()
			var tr *compact.Transcript
			if tc.Read != nil {
				tr = tc.Read(t)
			} else {
				file := tc.File
				if file == "" {
					file = tc.Name
				}
				var err error
				if tr, err = read([]byte(tc.Body), file); err != nil {
					t.Fatal(err)
				}
			}
			notes := CheckOrphanResult(t, tr, format, tc.Orphan, tc.Latest)
			if tc.Check != nil {
				tc.Check(t, notes)
			}
		})
	}
}
