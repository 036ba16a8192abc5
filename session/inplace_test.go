package session

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/compactkit/compact/internal/testing/deepdiff"
	"github.com/compactkit/compact/internal/testing/sharedtest"
)

// within reports whether the bytes of s lie in buf.
func within(s string, buf []byte) bool {
	p, b := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	return p >= b && p+uintptr(len(s)) <= b+uintptr(len(buf))
}

// TestOpenUnescapesInPlace: Open decodes an escaped string into the
// file's own buffer (no copy), and a session so read still migrates,
// forks and writes out exactly the bytes a session read from a reader
// (which copies) gives.
func TestOpenUnescapesInPlace(t *testing.T) {
	data, err := os.ReadFile(fixture(t, "large-session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	p := writeRaw(t, string(data))
	o := mustOpen(t, p, Options{})
	r, err := Read(bytes.NewReader(data), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if o.inPlace == 0 {
		t.Fatal("no line of large-session was unescaped in place")
	}
	// A text with newlines (stored as \n) points into the file's buffer.
	found := false
	for _, e := range o.Entries() {
		if m := e.Message; m != nil && len(m.Content) > 0 && strings.Contains(m.Content[0].Text, "\n") {
			if !within(m.Content[0].Text, o.data) {
				t.Fatalf("entry %s: an unescaped text was copied out of the file's buffer", e.ID)
			}
			found = true
			break
		}
	}
	if !found {
		t.Fatal("no text with a newline in large-session")
	}

	var want, got bytes.Buffer
	if _, err := r.WriteTo(&want); err != nil {
		t.Fatal(err)
	}
	if _, err := o.WriteTo(&got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatal("WriteTo of the session Open read differs from the one Read read")
	}

	leaf := o.Leaf()
	forked := filepath.Join(t.TempDir(), "fork.jsonl")
	if _, err := o.Fork(leaf, forked); err != nil {
		t.Fatal(err)
	}
	f, err := Open(forked, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Path()) != len(o.Path()) {
		t.Errorf("fork holds %d entries on its path, the session %d", len(f.Path()), len(o.Path()))
	}

	if migrated, err := o.Migrate(); err != nil || !migrated {
		t.Fatalf("Migrate: %v, %v", migrated, err)
	}
	after, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(after, want.Bytes()) {
		t.Error("the migrated file is not what WriteTo of the session read from a reader gives")
	}
}

// TestStoredLinesChanged: when a line Open unescaped in place differs in
// the file by the time the session is written out (same size, so the
// size check passes), Migrate and Fork fail with ErrChanged and the
// file keeps the other writer's bytes.
func TestStoredLinesChanged(t *testing.T) {
	p := writeSession(t, v1Header, v1MsgLine("user", `one\ntwo`), v1MsgLine("assistant", `three\tfour`))
	o := mustOpen(t, p, Options{})
	if o.inPlace != 2 {
		t.Fatalf("%d lines unescaped in place, want 2", o.inPlace)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	edited := bytes.Replace(data, []byte(`three\tfour`), []byte(`THREE\tfour`), 1)
	if err := os.WriteFile(p, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Fork(o.Leaf(), filepath.Join(t.TempDir(), "f.jsonl")); !errors.Is(err, ErrChanged) {
		t.Errorf("Fork: %v, want ErrChanged", err)
	}
	if _, err := o.Migrate(); !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("Migrate: %v, want ErrChanged naming line 3", err)
	}
	if now, _ := os.ReadFile(p); !bytes.Equal(now, edited) {
		t.Error("the file was rewritten")
	}

	// A file cut shorter than what was read is a change too.
	if err := os.WriteFile(p, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := o.WriteTo(&out); !errors.Is(err, ErrChanged) {
		t.Errorf("WriteTo of a cut file: %v, want ErrChanged", err)
	}
}

// TestReadUnescapesInPlace: Read, which cannot read its lines again,
// unescapes in place the strings whose escapes are all JSON.stringify's
// (every escaped string of a file pi wrote), copies out the others, and
// rebuilds the stored bytes of each line it changed exactly, on one
// goroutine and on several.
func TestReadUnescapesInPlace(t *testing.T) {
	odd := v3Header + "\n" +
		// Escapes JSON.stringify does not write: copied out.
		msgLine("00000001", "", "user", `slash \/ e \u00e9 esc \u001B pair \ud83d\ude00`) + "\n" +
		// Canonical in one member, odd in another.
		msgLine("00000002", "00000001", "user", `line\none \"q\" \\ \u001b`) + "\n" +
		`{"type":"model_change","id":"00000003","parentId":"00000002","timestamp":"t\/","provider":"p\n","modelId":"m"}` + "\n"
	inputs := map[string][]byte{"odd escapes": []byte(odd)}
	for _, name := range sharedtest.PiSessions() {
		data, err := os.ReadFile(fixture(t, name))
		if err != nil {
			t.Fatal(err)
		}
		inputs[name] = data
	}
	for name, data := range inputs {
		t.Run(name, func(t *testing.T) {
			s, err := Read(bytes.NewReader(data), name, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if s.inPlace == 0 {
				t.Fatal("no line was unescaped in place")
			}
			lines := bytes.Split(data, []byte("\n"))
			stored, err := s.storedLines()
			if err != nil {
				t.Fatal(err)
			}
			changed := 0
			for _, r := range s.records {
				if !bytes.Equal(stored(r), lines[r.line-1]) {
					t.Fatalf("line %d: %s", r.line, deepdiff.Strings(string(stored(r)), string(lines[r.line-1])))
				}
				if !bytes.Equal(r.raw, lines[r.line-1]) {
					changed++
					if !r.inPlace {
						t.Fatalf("line %d changed but is not marked", r.line)
					}
				}
			}
			if changed == 0 {
				t.Fatal("no line's bytes were changed")
			}
			if name != "odd escapes" {
				return
			}
			first := s.records[0]
			if first.inPlace {
				t.Error("a line with only escapes JSON.stringify does not write was unescaped in place")
			}
			if text := first.entry.Message.Content[0].Text; text != "slash / e é esc \x1b pair 😀" {
				t.Errorf("text %q", text)
			}
			second := s.records[1]
			if text := second.entry.Message.Content[0].Text; !second.inPlace || !within(text, second.raw) {
				t.Error("a canonical string was copied out")
			}
		})
	}
}
