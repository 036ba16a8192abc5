// Command bigsession writes a large pi session for scale measurements:
// the entries of a real session repeated, with new ids, one repetition
// chained after the other, until the file reaches a size; or, with
// -tiny, N tiny user and assistant messages.
//
//	go run ./internal/cmd/bigsession -in ../shared/testdata/sessions/pi/large-session.jsonl -mb 200 -o /tmp/s200.jsonl
//	go run ./internal/cmd/bigsession -tiny 1000000 -o /tmp/tiny.jsonl
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/session"
)

func main() {
	in := flag.String("in", "", "session whose entries are repeated")
	mb := flag.Int("mb", 10, "size to reach, in MB (10^6 bytes)")
	tiny := flag.Int("tiny", 0, "write this many tiny messages instead")
	out := flag.String("o", "", "output file (required; must not exist)")
	flag.Parse()
	if *out == "" || (*in == "" && *tiny == 0) {
		fmt.Fprintln(os.Stderr, "bigsession: -o and one of -in or -tiny are required")
		os.Exit(2)
	}
	if err := run(*in, *mb, *tiny, *out); err != nil {
		fmt.Fprintln(os.Stderr, "bigsession:", err)
		os.Exit(1)
	}
}

func run(in string, mb, tiny int, out string) error {
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	t := &compact.Transcript{SessionID: "bigsession", Cwd: "/tmp", Timestamp: "2026-01-01T00:00:00.000Z"}
	if tiny > 0 {
		for i := 0; i < tiny; i++ {
			role := compact.RoleUser
			if i%2 == 1 {
				role = compact.RoleAssistant
			}
			m := compact.TextMessage(role, fmt.Sprintf("message %d", i))
			if role == compact.RoleAssistant {
				m.StopReason = compact.StopEnd
			}
			t.Entries = append(t.Entries, &compact.Entry{Kind: compact.KindMessage, ID: fmt.Sprintf("%08x", i), Message: m})
		}
		if err := session.EncodeTranscript(w, t); err != nil {
			return err
		}
		return w.Flush()
	}
	s, err := session.Open(in, session.Options{})
	if err != nil {
		return err
	}
	src, err := os.Stat(in)
	if err != nil {
		return err
	}
	reps := int(int64(mb)*1_000_000/src.Size()) + 1
	for r := 0; r < reps; r++ {
		rename := func(id string) string {
			if id == "" {
				return ""
			}
			return fmt.Sprintf("%s%04x", id, r)
		}
		for i, e := range s.Entries() {
			c := *e
			c.ID = rename(e.ID)
			c.ParentID = rename(e.ParentID)
			if i == 0 {
				c.ParentID = "" // chained after the previous repetition
			}
			if e.Compaction != nil {
				cc := *e.Compaction
				cc.FirstKeptID = rename(cc.FirstKeptID)
				c.Compaction = &cc
			}
			if e.Meta != nil && e.Meta.TargetID != "" {
				cm := *e.Meta
				cm.TargetID = rename(cm.TargetID)
				c.Meta = &cm
			}
			t.Entries = append(t.Entries, &c)
		}
	}
	if err := session.EncodeTranscript(w, t); err != nil {
		return err
	}
	return w.Flush()
}
