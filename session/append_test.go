package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/sharedtest"
)

// Appending to a copy of each fixture: the entry is on the last line, a
// child of the old leaf, and is there on a re-read; a second append
// follows it (the size the session tracks is right).
func TestAppendFixtures(t *testing.T) {
	sharedtest.EachPiSession(t, func(t *testing.T, name string) {
		p := copyFixture(t, name)
		s := mustOpen(t, p, Options{})
		oldLeaf := s.Leaf()
		oldSize := len(readFile(t, p))
		n := len(fileLines(t, p))

		e1, err := s.AppendMessage(bg, compact.TextMessage(compact.RoleUser, "first appended"))
		if err != nil {
			t.Fatal(err)
		}
		e2, err := s.AppendMessage(bg, compact.TextMessage(compact.RoleUser, "second appended"))
		if err != nil {
			t.Fatalf("second append: %v", err)
		}
		if e1.ParentID != oldLeaf || e2.ParentID != e1.ID || s.Leaf() != e2.ID {
			t.Errorf("parents %q, %q (old leaf %q), leaf %q", e1.ParentID, e2.ParentID, oldLeaf, s.Leaf())
		}
		if s.Line(e1.ID) != n+1 || s.Line(e2.ID) != n+2 {
			t.Errorf("lines %d, %d; want %d, %d", s.Line(e1.ID), s.Line(e2.ID), n+1, n+2)
		}
		data := readFile(t, p)
		if !bytes.HasSuffix(data, []byte("\n")) || len(fileLines(t, p)) != n+2 {
			t.Errorf("file has %d lines, want %d, ending in a newline", len(fileLines(t, p)), n+2)
		}
		if !bytes.Equal(data[:oldSize], readFile(t, fixture(t, name))) {
			t.Error("appending changed the existing bytes")
		}

		again := mustOpen(t, p, Options{})
		if again.Leaf() != e2.ID {
			t.Fatalf("leaf after re-read %q, want %q", again.Leaf(), e2.ID)
		}
		for _, e := range []*compact.Entry{e1, e2} {
			got := again.Entry(e.ID)
			if got == nil || got.ParentID != e.ParentID || got.Message.Text() != e.Message.Text() || got.Timestamp != e.Timestamp {
				t.Errorf("entry %s re-read as %+v", e.ID, got)
			}
		}
		// The version 1 entries kept their derived ids.
		if !slices.Equal(ids(again.Entries()[:len(again.Entries())-2]), ids(s.Entries()[:len(s.Entries())-2])) {
			t.Error("ids of the existing entries changed after appending")
		}
		c := again.Context()
		if ids := c.EntryIDs; ids[len(ids)-1] != e2.ID || ids[len(ids)-2] != e1.ID {
			t.Errorf("context does not end with the appended messages")
		}
	})
}

// A compaction appended to a version 1 file carries firstKeptEntryIndex
// (header counted) beside firstKeptEntryId, so that pi's migration finds
// the kept entry; reading it back resolves the same id, and migrating
// the file afterwards keeps only the id.
func TestAppendCompactionV1(t *testing.T) {
	p := copyFixture(t, beforeCompaction)
	s := mustOpen(t, p, Options{})
	entries := s.Entries()
	kept := entries[900]
	c := &compact.Entry{Kind: compact.KindCompaction, Compaction: &compact.Compaction{
		Summary: "summary of the start", FirstKeptID: kept.ID, TokensBefore: 123456,
		ReadFiles: []string{"a.go"}, ModifiedFiles: []string{"b.go"}, Details: map[string]any{"reason": "manual"},
	}}
	if err := s.Append(bg, c); err != nil {
		t.Fatal(err)
	}
	lines := fileLines(t, p)
	last := canonical(t, []byte(lines[len(lines)-1]))
	if last["firstKeptEntryId"] != kept.ID || last["firstKeptEntryIndex"] != jsonNumber(901) {
		t.Errorf("appended line has firstKeptEntryId %v, firstKeptEntryIndex %v; want %s, 901", last["firstKeptEntryId"], last["firstKeptEntryIndex"], kept.ID)
	}
	// pi's loader keeps every JSON line in order, the header at 0: its
	// entry 901 must be the kept message.
	piEntry, err := Read(strings.NewReader(v1Header+"\n"+lines[901]+"\n"), "pi", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := piEntry.Entries()[0]; got.Message == nil || got.Message.Text() != kept.Message.Text() || got.Timestamp != kept.Timestamp {
		t.Error("index 901 of pi's entry list is not the kept entry")
	}

	again := mustOpen(t, p, Options{})
	got := again.Entry(c.ID)
	if got == nil || got.Compaction.FirstKeptID != kept.ID || got.ParentID != entries[len(entries)-1].ID {
		t.Fatalf("re-read compaction %+v", got)
	}
	if got.Compaction.Summary != c.Compaction.Summary || got.Compaction.TokensBefore != 123456 ||
		!slices.Equal(got.Compaction.ReadFiles, []string{"a.go"}) || got.Compaction.Details["reason"] != "manual" {
		t.Errorf("compaction fields %+v", got.Compaction)
	}
	ctx := again.Context()
	if ctx.Compaction == nil || ctx.Compaction.ID != c.ID || ctx.EntryIDs[1] != kept.ID {
		t.Errorf("context after the compaction starts %v", ctx.EntryIDs[:2])
	}

	// Migrating in memory right after the append, and after a re-read,
	// gives the same version 3 line: the id only.
	for name, sess := range map[string]*Session{"in memory": s, "re-read": again} {
		var out bytes.Buffer
		if _, err := sess.WriteTo(&out); err != nil {
			t.Fatal(err)
		}
		outLines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		m := canonical(t, []byte(outLines[len(outLines)-1]))
		if _, has := m["firstKeptEntryIndex"]; has || m["firstKeptEntryId"] != kept.ID {
			t.Errorf("%s: migrated compaction line %v", name, outLines[len(outLines)-1][:200])
		}
	}
}

func jsonNumber(n int) any { return canonicalNumber(strconv.Itoa(n)) }

// Append fails, writing nothing and recording nothing, when the file
// changed since it was read, the context is done, the id is taken or the
// parent unknown. The entry passed in is left as it was.
func TestAppendFailures(t *testing.T) {
	cancelled, cancel := context.WithCancel(bg)
	cancel()
	cases := []struct {
		name   string
		ctx    context.Context
		modify func(t *testing.T, p string)
		entry  func() *compact.Entry
		want   string
		is     error
	}{
		{"external append", bg, func(t *testing.T, p string) {
			f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString(msgLine("0000000f", "00000001", "user", "someone else") + "\n")
			f.Close()
		}, nil, "changed since it was read", nil},
		{"file truncated", bg, func(t *testing.T, p string) {
			os.WriteFile(p, []byte(v3Header+"\n"), 0o644)
		}, nil, "changed since it was read", nil},
		{"file removed", bg, func(t *testing.T, p string) { os.Remove(p) }, nil, "no such file", os.ErrNotExist},
		{"context cancelled", cancelled, nil, nil, "canceled", context.Canceled},
		{"id taken", bg, nil, func() *compact.Entry {
			return &compact.Entry{ID: "00000001", Kind: compact.KindMessage, Message: compact.TextMessage(compact.RoleUser, "x")}
		}, "already used", nil},
		{"unknown parent", bg, nil, func() *compact.Entry {
			return &compact.Entry{ParentID: "deadbeef", Kind: compact.KindMessage, Message: compact.TextMessage(compact.RoleUser, "x")}
		}, "deadbeef", compact.ErrNoEntry},
		{"message entry without message", bg, nil, func() *compact.Entry {
			return &compact.Entry{Kind: compact.KindMessage}
		}, "without a message", nil},
		{"unknown kind", bg, nil, func() *compact.Entry {
			return &compact.Entry{Kind: "mystery"}
		}, "unknown type", nil},
		{"invalid tool arguments", bg, nil, func() *compact.Entry {
			return &compact.Entry{Kind: compact.KindMessage, Message: &compact.Message{Role: compact.RoleAssistant,
				Content: []compact.Part{{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: "c", Name: "n", Arguments: []byte("{")}}}}}
		}, "arguments", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := writeSession(t, v3Header, msgLine("00000001", "", "user", "one"))
			s := mustOpen(t, p, Options{})
			if c.modify != nil {
				c.modify(t, p)
			}
			before, _ := os.ReadFile(p)
			e := &compact.Entry{Kind: compact.KindMessage, Message: compact.TextMessage(compact.RoleUser, "mine")}
			if c.entry != nil {
				e = c.entry()
			}
			orig := *e
			err := s.Append(c.ctx, e)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Append: %v, want an error mentioning %q", err, c.want)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("error %v does not wrap %v", err, c.is)
			}
			if after, _ := os.ReadFile(p); !bytes.Equal(after, before) {
				t.Error("the failed append wrote to the file")
			}
			if len(s.Entries()) != 1 || s.Leaf() != "00000001" {
				t.Errorf("the failed append was recorded: %d entries, leaf %q", len(s.Entries()), s.Leaf())
			}
			if e.ID != orig.ID || e.ParentID != orig.ParentID || e.Timestamp != orig.Timestamp {
				t.Errorf("the failed append changed the entry: %q %q %q", e.ID, e.ParentID, e.Timestamp)
			}
		})
	}
}

// A torn last line is reported, the next append starts on a new line, and
// afterwards the fragment is still in the file, on its own line. It is
// then no longer the last line: reading the file again needs Lenient
// (the error says so), which reports it with a warning.
func TestAppendAfterTornLine(t *testing.T) {
	cases := []struct {
		name string
		path func(t *testing.T) string
	}{
		{"v3", func(t *testing.T) string {
			m2 := msgLine("00000002", "00000001", "assistant", "two")
			return writeRaw(t, v3Header+"\n"+msgLine("00000001", "", "user", "one")+"\n"+m2[:len(m2)/2])
		}},
		{"v1 fixture", func(t *testing.T) string {
			p := copyFixture(t, largeSession)
			data := readFile(t, p)
			data = data[:len(data)-1] // drop the final newline
			cut := bytes.LastIndexByte(data, '\n') + 1
			data = data[:cut+(len(data)-cut)/2]
			os.WriteFile(p, data, 0o644)
			return p
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := c.path(t)
			tornNo := len(fileLines(t, p))
			fragment := fileLines(t, p)[tornNo-1]
			var warned []string
			s, err := Open(p, Options{Warn: func(m string) { warned = append(warned, m) }})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			pos := p + ":" + strconv.Itoa(tornNo) + ":"
			if s.TornLine() != tornNo || len(warned) != 1 || !strings.Contains(warned[0], pos) {
				t.Fatalf("torn line %d, warnings %q; want line %d named", s.TornLine(), warned, tornNo)
			}
			before := readFile(t, p)
			if _, err := s.AppendMessage(bg, compact.TextMessage(compact.RoleUser, "refused")); !errors.Is(err, ErrTornEnd) ||
				!strings.Contains(err.Error(), pos) || !strings.Contains(err.Error(), "--lenient") {
				t.Fatalf("strict append after a torn last line: %v; want ErrTornEnd naming line %d and --lenient", err, tornNo)
			}
			if !bytes.Equal(readFile(t, p), before) {
				t.Fatal("the refused append changed the file")
			}
			s, err = Open(p, Options{Lenient: true})
			if err != nil {
				t.Fatalf("Open lenient: %v", err)
			}
			leaf := s.Leaf()
			e, err := s.AppendMessage(bg, compact.TextMessage(compact.RoleUser, "after the crash"))
			if err != nil {
				t.Fatal(err)
			}
			e2, err := s.AppendMessage(bg, compact.TextMessage(compact.RoleUser, "and again"))
			if err != nil {
				t.Fatal(err)
			}
			lines := fileLines(t, p)
			if len(lines) != tornNo+2 || lines[tornNo-1] != fragment {
				t.Fatalf("the fragment is not alone on line %d:\n%.200s", tornNo, lines[tornNo-1])
			}
			if s.Line(e.ID) != tornNo+1 || s.Line(e2.ID) != tornNo+2 {
				t.Errorf("appended lines %d, %d; want %d, %d", s.Line(e.ID), s.Line(e2.ID), tornNo+1, tornNo+2)
			}
			if _, err := Open(p, Options{}); err == nil || !strings.Contains(err.Error(), pos) || !strings.Contains(err.Error(), "--lenient") {
				t.Errorf("re-read without Lenient: %v; want an error naming line %d and --lenient", err, tornNo)
			}
			warned = nil
			again, err := Open(p, Options{Lenient: true, Warn: func(m string) { warned = append(warned, m) }})
			if err != nil {
				t.Fatalf("re-read: %v", err)
			}
			if again.TornLine() != tornNo || len(warned) != 1 || !strings.Contains(warned[0], pos) {
				t.Errorf("re-read: torn line %d, warnings %q", again.TornLine(), warned)
			}
			got := again.Entry(e.ID)
			if got == nil || got.ParentID != leaf || got.Message.Text() != "after the crash" || again.Leaf() != e2.ID {
				t.Errorf("appended entry re-read as %+v (leaf %q)", got, again.Leaf())
			}
		})
	}
}

// A last line that is complete but lacks its newline is not torn: the
// append adds the newline first and both entries read back.
func TestAppendAfterMissingNewline(t *testing.T) {
	p := writeRaw(t, v3Header+"\n"+msgLine("00000001", "", "user", "one"))
	s := mustOpen(t, p, Options{})
	if s.TornLine() != 0 || len(s.Warnings()) != 0 {
		t.Fatalf("complete last line reported: %q", s.Warnings())
	}
	e, err := s.AppendMessage(bg, compact.TextMessage(compact.RoleAssistant, "two"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Line(e.ID) != 3 {
		t.Errorf("line %d, want 3", s.Line(e.ID))
	}
	again := mustOpen(t, p, Options{})
	if len(again.Entries()) != 2 || again.Entry(e.ID).ParentID != "00000001" || len(again.Warnings()) != 0 {
		t.Errorf("re-read: %d entries, warnings %q", len(again.Entries()), again.Warnings())
	}
}

// A session read from a reader appends in memory only.
func TestAppendInMemory(t *testing.T) {
	s, err := Read(strings.NewReader(v3Header+"\n"), "mem", Options{})
	if err != nil {
		t.Fatal(err)
	}
	e1, err := s.AppendMessage(bg, compact.TextMessage(compact.RoleUser, "one"))
	if err != nil {
		t.Fatal(err)
	}
	e2, _ := s.AppendMessage(bg, compact.TextMessage(compact.RoleAssistant, "two"))
	if e1.ParentID != "" || e2.ParentID != e1.ID || s.Line(e1.ID) != 0 {
		t.Errorf("parents %q %q, line %d", e1.ParentID, e2.ParentID, s.Line(e1.ID))
	}
	var out bytes.Buffer
	if _, err := s.WriteTo(&out); err != nil {
		t.Fatal(err)
	}
	back, err := Read(&out, "back", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids(back.Entries()), []string{e1.ID, e2.ID}) {
		t.Errorf("written and read back: %v", ids(back.Entries()))
	}
}

// A custom entry keeps its extension data through append and re-read, on
// both decoding paths.
func TestCustomEntryData(t *testing.T) {
	p := writeSession(t, v3Header)
	s := mustOpen(t, p, Options{})
	data := json.RawMessage(`{"step":3,"notes":["a","b"],"nested":{"ok":true}}`)
	e := &compact.Entry{Kind: compact.KindCustom, Meta: &compact.EntryMeta{CustomType: "my-extension", Data: data}}
	if err := s.Append(bg, e); err != nil {
		t.Fatal(err)
	}
	got := mustOpen(t, p, Options{}).Entry(e.ID)
	if got == nil || got.Metadata().CustomType != "my-extension" || string(got.Metadata().Data) != string(data) {
		t.Fatalf("custom entry read back as %+v", got)
	}
	line := []byte(`{"type":"custom","id":"c1","parentId":null,"timestamp":"t","customType":"x","data":[1,{"a":null}]}`)
	var d fastDecoder
	fast, ref := d.decode(line), decodeLine(line)
	if ref.err != nil || fast.err != nil || string(fast.e.Metadata().Data) != `[1,{"a":null}]` || string(ref.e.Metadata().Data) != string(fast.e.Metadata().Data) {
		t.Fatalf("data: fast %q (%v), reference %q (%v)", fast.e.Metadata().Data, fast.err, ref.e.Metadata().Data, ref.err)
	}
	bad := &compact.Entry{Kind: compact.KindCustom, Meta: &compact.EntryMeta{CustomType: "x", Data: json.RawMessage(`{`)}}
	if err := s.Append(bg, bad); err == nil {
		t.Fatal("invalid data accepted")
	}
}

// A context edit is stored as a context_edit entry and replayed on every
// load: the rebuilt context shows the replacement, the original context
// the stored message.
func TestContextEditRoundTrip(t *testing.T) {
	p := writeSession(t, v3Header)
	s := mustOpen(t, p, Options{})
	res := &compact.Message{Role: compact.RoleToolResult, ToolCallID: "t1", ToolName: "bash",
		Content: []compact.Part{{Type: compact.PartText, Text: strings.Repeat("log line\n", 500)}}}
	user, err := s.AppendMessage(bg, compact.TextMessage(compact.RoleUser, "run it"))
	if err != nil {
		t.Fatal(err)
	}
	target, err := s.AppendMessage(bg, res)
	if err != nil {
		t.Fatal(err)
	}
	edit := &compact.Entry{Kind: compact.KindContextEdit, Edit: &compact.ContextEdit{Strategy: "mask", TokensFreed: 1100,
		FirstChangedID: target.ID, Edits: []compact.Edit{{TargetID: target.ID,
			Content: []compact.Part{{Type: compact.PartText, Text: "[cleared; original in entry " + target.ID + "]"}}}}}}
	if err := s.Append(bg, edit); err != nil {
		t.Fatal(err)
	}
	re := mustOpen(t, p, Options{})
	got := re.Entry(edit.ID)
	if got == nil || got.Edit == nil || got.Edit.Strategy != "mask" || got.Edit.TokensFreed != 1100 ||
		got.Edit.FirstChangedID != target.ID || len(got.Edit.Edits) != 1 || got.Edit.Edits[0].TargetID != target.ID {
		t.Fatalf("context edit read back as %+v", got)
	}
	c := re.Context()
	if len(c.Messages) != 2 || c.EntryIDs[0] != user.ID || !strings.HasPrefix(c.Messages[1].Text(), "[cleared;") ||
		c.Messages[1].ToolCallID != "t1" {
		t.Fatalf("rebuilt context %v", c.EntryIDs)
	}
	orig := compact.BuildOriginalContext(re.Path())
	if orig.Messages[1].Text() != res.Text() {
		t.Fatal("the original context lost the stored output")
	}
	// Read back through Read too, and the line must not be malformed
	// for the fast decoder (it leaves context_edit lines to the reference).
	var d fastDecoder
	line, _ := os.ReadFile(p)
	last := strings.TrimSpace(string(line))
	last = last[strings.LastIndexByte(last, '\n')+1:]
	if out := d.decode([]byte(last)); out.err != nil || out.e.Edit == nil {
		t.Fatalf("decode: %v", out.err)
	}
	bad := &compact.Entry{Kind: compact.KindContextEdit, Edit: &compact.ContextEdit{Edits: []compact.Edit{{}}}}
	if err := s.Append(bg, bad); err == nil {
		t.Fatal("an edit without a target was accepted")
	}
}

// TestNoAppendToNewerVersion: a file whose header names a format newer
// than CurrentVersion is read, but Appendable and Append refuse it with
// ErrNewerVersion, naming the header's line and both versions, and the
// file keeps its bytes.
func TestNoAppendToNewerVersion(t *testing.T) {
	header := strings.Replace(v3Header, `"version":3`, fmt.Sprintf(`"version":%d`, CurrentVersion+1), 1)
	if header == v3Header {
		t.Fatal("the test header has no version 3 to replace")
	}
	p := writeSession(t, header, msgLine("000000a1", "", "user", "hello"))
	before := readFile(t, p)
	s := mustOpen(t, p, Options{})
	if len(s.Entries()) != 1 {
		t.Fatalf("%d entries read, want 1", len(s.Entries()))
	}
	err := s.Appendable()
	if !errors.Is(err, ErrNewerVersion) {
		t.Fatalf("Appendable() = %v, want ErrNewerVersion", err)
	}
	if want := fmt.Sprintf("%s:1: append: ", p); !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), fmt.Sprintf("version %d; compact writes version %d", CurrentVersion+1, CurrentVersion)) {
		t.Errorf("error %q does not name the line and both versions", err)
	}
	if _, err := s.AppendMessage(context.Background(), compact.TextMessage(compact.RoleUser, "more")); !errors.Is(err, ErrNewerVersion) {
		t.Fatalf("AppendMessage = %v, want ErrNewerVersion", err)
	}
	if after := readFile(t, p); !bytes.Equal(before, after) {
		t.Error("the file changed")
	}
}
