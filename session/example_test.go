package session_test

import (
	"context"
	"fmt"
	"log"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/sharedtest"
	"github.com/compactkit/compact/session"
)

// Open a pi session file and look at what the model sees at its leaf.
func ExampleOpen() {
	path, done := sharedtest.DemoCopy()
	defer done()

	s, err := session.Open(path, session.Options{Warn: func(msg string) { log.Println(msg) }})
	if err != nil {
		log.Fatal(err) // names the file and line, e.g. demo.jsonl:17: malformed line: ...
	}
	view := s.Context()
	fmt.Printf("version %d, %d entries, leaf %s\n", s.Header().Version, len(s.Entries()), s.Leaf())
	fmt.Printf("model %s, %d messages, ~%d tokens\n", view.Model, len(view.Messages), compact.Measure(view).Tokens)
	// Output:
	// version 3, 68 entries, leaf 2d45c0f8
	// model claude-sonnet-4-5, 64 messages, ~54230 tokens
}

// Append a message to a session file. The line is written under the
// file's write lock, after checking that nobody appended since the file
// was read; if somebody did, the error wraps session.ErrChanged and the
// file is left as it was.
func ExampleSession_AppendMessage() {
	path, done := sharedtest.DemoCopy()
	defer done()

	s, err := session.Open(path, session.Options{})
	if err != nil {
		log.Fatal(err)
	}
	leaf := s.Leaf()
	e, err := s.AppendMessage(context.Background(), compact.TextMessage(compact.RoleUser, "Now run the tests again."))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("parent is the old leaf:", e.ParentID == leaf)
	fmt.Println("new leaf:", s.Leaf() == e.ID)

	again, err := session.Open(path, session.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("entries after re-reading:", len(again.Entries()))
	// Output:
	// parent is the old leaf: true
	// new leaf: true
	// entries after re-reading: 69
}
