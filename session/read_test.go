package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/sharedtest"
)

// Open must leave the file exactly as it was: same bytes, same mtime, no
// temporary files beside it, even for files that need migration or hold a
// torn line.
func TestOpenDoesNotModifyFile(t *testing.T) {
	type tc struct {
		name    string
		path    func(t *testing.T) string
		migrate bool // whether the file needs migration
	}
	cases := []tc{
		{"v3", func(t *testing.T) string {
			return writeSession(t, v3Header, msgLine("00000001", "", "user", "hi"))
		}, false},
		{"v1 torn", func(t *testing.T) string {
			return writeRaw(t, v1Header+"\n"+v1MsgLine("user", "hi")+"\n"+`{"type":"message","timest`)
		}, true},
	}
	for _, f := range sharedtest.PiSessions() {
		cases = append(cases, tc{f, func(t *testing.T) string { return copyFixture(t, f) }, true})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := c.path(t)
			old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
			before := readFile(t, p)
			s := mustOpen(t, p, Options{})
			s.Entries()
			s.Context()
			s.Tree()
			if s.NeedsMigration() != c.migrate {
				t.Errorf("NeedsMigration = %v, want %v", s.NeedsMigration(), c.migrate)
			}
			if got := readFile(t, p); string(got) != string(before) {
				t.Errorf("Open changed the file's bytes")
			}
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if !st.ModTime().Equal(old) {
				t.Errorf("mtime changed: %v, want %v", st.ModTime(), old)
			}
			dir, _ := os.ReadDir(filepath.Dir(p))
			if len(dir) != 1 {
				t.Errorf("the directory holds %d files after Open, want 1", len(dir))
			}
		})
	}
}

// Version 1 fixtures are migrated in memory: every entry gets an 8-hex id
// and the previous entry as parent, the same on every read, and
// firstKeptEntryIndex (header counted) resolves to the id of that entry.
func TestReadV1Fixtures(t *testing.T) {
	hexID := regexp.MustCompile(`^[0-9a-f]{8}$`)
	cases := []struct {
		name        string
		entries     int
		compactions int
		// keptIndex are the stored firstKeptEntryIndex values, in order.
		keptIndex []int
	}{
		{largeSession, 1018, 0, nil},
		{beforeCompaction, 1002, 2, []int{293, 551}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := fixture(t, c.name)
			s := mustOpen(t, p, Options{})
			if v := s.Header().Version; v != 1 {
				t.Errorf("header version %d, want 1", v)
			}
			if !s.NeedsMigration() {
				t.Error("NeedsMigration = false for a version 1 file")
			}
			if len(s.Warnings()) != 0 || s.TornLine() != 0 || len(s.SkippedLines()) != 0 {
				t.Errorf("unexpected warnings %q, torn %d, skipped %v", s.Warnings(), s.TornLine(), s.SkippedLines())
			}
			entries := s.Entries()
			if len(entries) != c.entries {
				t.Fatalf("%d entries, want %d", len(entries), c.entries)
			}
			seen := map[string]bool{}
			var kept []string
			for i, e := range entries {
				if !hexID.MatchString(e.ID) {
					t.Fatalf("entry %d: id %q is not 8 hex digits", i, e.ID)
				}
				if seen[e.ID] {
					t.Fatalf("entry %d: id %q repeated", i, e.ID)
				}
				seen[e.ID] = true
				want := ""
				if i > 0 {
					want = entries[i-1].ID
				}
				if e.ParentID != want {
					t.Fatalf("entry %d: parent %q, want %q", i, e.ParentID, want)
				}
				if s.Index(e.ID) != i || s.Line(e.ID) != i+2 {
					t.Fatalf("entry %d: Index %d Line %d", i, s.Index(e.ID), s.Line(e.ID))
				}
				if e.Compaction != nil {
					kept = append(kept, e.Compaction.FirstKeptID)
				}
			}
			var want []string
			for _, idx := range c.keptIndex {
				want = append(want, entries[idx-1].ID) // index 0 is the header
			}
			if !slices.Equal(kept, want) {
				t.Errorf("first kept ids %v, want %v", kept, want)
			}
			if s.Leaf() != entries[len(entries)-1].ID {
				t.Errorf("leaf %q is not the last entry", s.Leaf())
			}
			again := mustOpen(t, p, Options{})
			if !slices.Equal(ids(again.Entries()), ids(entries)) {
				t.Error("a second read gave different ids")
			}
		})
	}
}

// A version 2 file: ids and parent links are used as stored (a null
// parent stays a root), and the hookMessage role reads as custom.
func TestReadV2(t *testing.T) {
	p := writeSession(t,
		`{"type":"session","version":2,"id":"v2","timestamp":"t","cwd":"/"}`,
		msgLine("00000001", "", "user", "one"),
		`{"type":"message","id":"00000002","parentId":"00000001","timestamp":"t","message":{"role":"hookMessage","customType":"x","content":"hooked","display":true,"timestamp":1}}`,
		msgLine("00000003", "", "user", "second root"),
	)
	s := mustOpen(t, p, Options{})
	e := s.Entries()
	if got := []string{e[0].ParentID, e[1].ParentID, e[2].ParentID}; !slices.Equal(got, []string{"", "00000001", ""}) {
		t.Errorf("parents %q", got)
	}
	if r := e[1].Message.Role; r != compact.RoleCustom {
		t.Errorf("role %q, want custom", r)
	}
	if txt := e[1].Message.Text(); txt != "hooked" {
		t.Errorf("text %q", txt)
	}
	if !s.NeedsMigration() {
		t.Error("a version 2 file must need migration")
	}
	var out strings.Builder
	if _, err := s.WriteTo(&out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	if !strings.Contains(lines[0], `"version":3`) || !strings.Contains(lines[2], `"role":"custom"`) {
		t.Errorf("migrated output:\n%s", out.String())
	}
	if lines[1] != msgLine("00000001", "", "user", "one") || lines[3] != msgLine("00000003", "", "user", "second root") {
		t.Errorf("lines without anything to migrate changed:\n%s", out.String())
	}
}

// Every way a file can be wrong names the file, the line and the cause.
// In lenient mode bad entry lines are skipped with a warning, and the
// session then refuses to be rewritten.
func TestMalformed(t *testing.T) {
	m1 := msgLine("00000001", "", "user", "one")
	cases := []struct {
		name     string
		data     string
		sentinel error
		line     int
		cause    string
		// lenient: "skip" (the line is skipped), "ok" (read, warned),
		// "fail" (an error even in lenient mode).
		lenient string
	}{
		{"empty file", "", ErrNotSession, 1, "empty", "fail"},
		{"only blank lines", "\n  \n\n", ErrNotSession, 1, "empty", "fail"},
		{"first line not a header", m1 + "\n", ErrNotSession, 1, `type "message"`, "fail"},
		{"first line not JSON", "hello\n" + v3Header + "\n", ErrNotSession, 1, "not JSON", "fail"},
		{"byte order mark before the header", "\xef\xbb\xbf" + v3Header + "\n" + m1 + "\n", ErrNotSession, 1, "starts with a byte order mark (bytes EF BB BF) before the header", "fail"},
		{"version of the wrong kind", `{"type":"session","version":"3","id":"s1"}` + "\n" + m1 + "\n", ErrNotSession, 1, "field version of the header: want a whole number, have string", "fail"},
		{"negative version", `{"type":"session","version":-1,"id":"s1"}` + "\n" + m1 + "\n", ErrNotSession, 1, "field version: -1 is no session format version (pi writes 1 to 3)", "fail"},
		{"header without id", `{"type":"session","version":3}` + "\n", ErrNotSession, 1, "field id", "fail"},
		{"missing type", v3Header + "\n" + m1 + "\n" + `{"id":"00000002","parentId":"00000001","timestamp":"t"}` + "\n", ErrMalformed, 3, "field type", "skip"},
		{"message entry without message", v3Header + "\n" + `{"type":"message","id":"00000001","parentId":null,"timestamp":"t"}` + "\n", ErrMalformed, 2, "field message", "skip"},
		{"message without role", v3Header + "\n" + `{"type":"message","id":"00000001","parentId":null,"timestamp":"t","message":{"content":"x"}}` + "\n", ErrMalformed, 2, "message.role", "skip"},
		{"message of the wrong type", v3Header + "\n" + `{"type":"message","id":"00000001","parentId":null,"timestamp":"t","message":"hi"}` + "\n", ErrMalformed, 2, "field message: want a mapping, have string", "skip"},
		{"invalid JSON, not cut short", v3Header + "\n" + m1 + "\n" + `{"type":"message",,}` + "\n" + msgLine("00000002", "00000001", "user", "two") + "\n", ErrMalformed, 3, "invalid JSON", "skip"},
		{"trailing data after the object", v3Header + "\n" + `{"type":"label","id":"00000001","parentId":null,"timestamp":"t"} {}` + "\n", ErrMalformed, 2, "invalid JSON", "skip"},
		{"not an object", v3Header + "\n" + "[1,2]\n", ErrMalformed, 2, "", "skip"},
		{"second header", v3Header + "\n" + m1 + "\n" + v3Header + "\n", ErrMalformed, 3, "second session header", "skip"},
		{"missing id in v3", v3Header + "\n" + `{"type":"label","parentId":null,"timestamp":"t","targetId":"x"}` + "\n", ErrMalformed, 2, "field id", "fail"},
		{"duplicate ids", v3Header + "\n" + m1 + "\n" + msgLine("00000001", "", "assistant", "dup") + "\n", ErrMalformed, 3, "used by an earlier entry", "ok"},
		{"parent cycle", v3Header + "\n" + msgLine("0000000a", "0000000b", "user", "a") + "\n" + msgLine("0000000b", "0000000a", "user", "b") + "\n", ErrMalformed, 2, "cycle", "ok"},
		{"own parent", v3Header + "\n" + msgLine("0000000a", "0000000a", "user", "a") + "\n", ErrMalformed, 2, "cycle", "ok"},
		{"firstKeptEntryIndex past the end", v1Header + "\n" + v1MsgLine("user", "a") + "\n" + `{"type":"compaction","timestamp":"t","summary":"s","firstKeptEntryIndex":99,"tokensBefore":1}` + "\n", ErrMalformed, 3, "firstKeptEntryIndex: 99", "fail"},
		{"firstKeptEntryIndex at the header", v1Header + "\n" + v1MsgLine("user", "a") + "\n" + `{"type":"compaction","timestamp":"t","summary":"s","firstKeptEntryIndex":0,"tokensBefore":1}` + "\n", ErrMalformed, 3, "firstKeptEntryIndex: 0", "fail"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := writeRaw(t, c.data)
			_, err := Open(p, Options{})
			var le *LineError
			if !errors.As(err, &le) {
				t.Fatalf("error %v (%T), want a *LineError", err, err)
			}
			if !errors.Is(err, c.sentinel) {
				t.Errorf("error %v does not wrap %v", err, c.sentinel)
			}
			if le.File != p || le.Line != c.line {
				t.Errorf("error at %s:%d, want %s:%d", le.File, le.Line, p, c.line)
			}
			if !strings.HasPrefix(err.Error(), fmt.Sprintf("%s:%d: ", p, c.line)) || !strings.Contains(err.Error(), c.cause) {
				t.Errorf("message %q: want the position and %q", err, c.cause)
			}

			var warned []string
			s, err := Open(p, Options{Lenient: true, Warn: func(m string) { warned = append(warned, m) }})
			switch c.lenient {
			case "fail":
				if err == nil {
					t.Fatal("lenient Open succeeded, want an error")
				}
				return
			case "skip":
				if err != nil {
					t.Fatalf("lenient Open: %v", err)
				}
				if !slices.Equal(s.SkippedLines(), []int{c.line}) {
					t.Errorf("skipped %v, want [%d]", s.SkippedLines(), c.line)
				}
				if _, err := s.WriteTo(new(strings.Builder)); err == nil || !strings.Contains(err.Error(), "refusing") {
					t.Errorf("WriteTo after skipping: %v, want a refusal", err)
				}
				if rewrote, err := s.Migrate(); rewrote || (s.NeedsMigration() && err == nil) {
					t.Errorf("Migrate after skipping a line: %v, %v", rewrote, err)
				}
			case "ok":
				if err != nil {
					t.Fatalf("lenient Open: %v", err)
				}
				if len(s.SkippedLines()) != 0 {
					t.Errorf("skipped %v, want none", s.SkippedLines())
				}
			}
			pos := fmt.Sprintf("%s:%d:", p, c.line)
			if len(warned) != 1 || !strings.Contains(warned[0], pos) || !slices.Equal(warned, s.Warnings()) {
				t.Errorf("warnings %q (Warnings() %q), want one naming %s", warned, s.Warnings(), pos)
			}
			if got := readFile(t, p); string(got) != c.data {
				t.Error("a lenient read changed the file")
			}
		})
	}
}

// A line skipped in lenient mode still counts for version 1
// firstKeptEntryIndex when it is JSON, as it does in pi's loader.
func TestLenientSkippedLineKeepsV1Index(t *testing.T) {
	p := writeSession(t, v1Header,
		v1MsgLine("user", "a"),
		`{"timestamp":"no type"}`, // JSON: pi keeps it, index 2
		v1MsgLine("user", "b"),    // index 3
		`{"type":"compaction","timestamp":"t","summary":"s","firstKeptEntryIndex":3,"tokensBefore":1}`,
	)
	s := mustOpen(t, p, Options{Lenient: true})
	e := s.Entries()
	if len(e) != 3 {
		t.Fatalf("%d entries", len(e))
	}
	if got := e[2].Compaction.FirstKeptID; got != e[1].ID || e[1].Message.Text() != "b" {
		t.Errorf("kept %q, want %q (the message b)", got, e[1].ID)
	}
}

// A last line cut short by a crash is reported, never an error.
func TestTornLineRead(t *testing.T) {
	m1 := msgLine("00000001", "", "user", "one")
	m2 := msgLine("00000002", "00000001", "assistant", "two")
	cases := []struct {
		name string
		data string
		line int
		n    int
	}{
		{"last line cut", v3Header + "\n" + m1 + "\n" + m2[:40], 3, 1},
		{"cut inside a string escape", v3Header + "\n" + m1 + "\n" + `{"type":"message","id":"x","message":{"role":"user","content":"a\`, 3, 1},
		{"cut in the middle of a multi-byte character", v3Header + "\n" + m1 + "\n" + `{"type":"message","id":"x","message":{"role":"user","content":"` + "\xe2\x82", 3, 1},
		{"torn then blank line", v3Header + "\n" + m1 + "\n" + m2[:60] + "\n\n", 3, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := writeRaw(t, c.data)
			var warned []string
			s, err := Open(p, Options{Warn: func(m string) { warned = append(warned, m) }})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if s.TornLine() != c.line {
				t.Errorf("TornLine %d, want %d", s.TornLine(), c.line)
			}
			pos := fmt.Sprintf("%s:%d:", p, c.line)
			if len(warned) != 1 || !strings.Contains(warned[0], pos) || !slices.Equal(s.Warnings(), warned) {
				t.Errorf("warnings %q, want one naming %s", warned, pos)
			}
			if len(s.Entries()) != c.n {
				t.Errorf("%d entries, want %d", len(s.Entries()), c.n)
			}
			if _, err := s.WriteTo(new(strings.Builder)); err == nil || !strings.Contains(err.Error(), "incomplete line") {
				t.Errorf("WriteTo with a torn line: %v, want a refusal naming it", err)
			}
		})
	}
}

// Unknown entry types, whatever fields they carry, are read as metadata;
// known types ignore odd values in fields they do not use.
func TestUnknownKindsAndFields(t *testing.T) {
	p := writeSession(t, v3Header,
		msgLine("00000001", "", "user", "one"),
		`{"type":"future_thing","id":"00000002","parentId":"00000001","timestamp":"t","summary":{"not":"a string"},"label":7,"message":[1,2],"version":"x"}`,
		`{"type":"model_change","id":"00000003","parentId":"00000002","timestamp":"t","provider":"openai","modelId":"gpt-5","summary":42,"message":"odd"}`,
		`{"type":"branch_summary","id":"00000004","parentId":"00000003","timestamp":"t","fromId":"00000001","summary":"went elsewhere","details":{"x":1}}`,
	)
	s := mustOpen(t, p, Options{})
	e := s.Entries()
	if len(e) != 4 {
		t.Fatalf("%d entries", len(e))
	}
	if e[1].Kind != "future_thing" || e[1].Message != nil || e[1].IsContextMessage() || e[1].ParentID != "00000001" {
		t.Errorf("unknown entry read as %+v", e[1])
	}
	if e[2].Metadata().Provider != "openai" || e[2].Metadata().ModelID != "gpt-5" {
		t.Errorf("model change read as %+v", e[2])
	}
	if e[3].Metadata().TargetID != "00000001" || e[3].Message.Text() != "went elsewhere" {
		t.Errorf("branch summary: fromId %q, text %q", e[3].Metadata().TargetID, e[3].Message.Text())
	}
	c := s.Context()
	if !slices.Equal(c.EntryIDs, []string{"00000001", "00000004"}) || c.Model != "gpt-5" {
		t.Errorf("context %v model %q", c.EntryIDs, c.Model)
	}
}

// Fields of messages and content blocks that Message does not model are
// kept in Extra; the extractive summarizer reads tool result details.
func TestMessageExtras(t *testing.T) {
	p := writeSession(t, v3Header,
		`{"type":"message","id":"00000001","parentId":null,"timestamp":"t","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hm","thinkingSignature":"sig=="},{"type":"text","text":"a \"quoted\" \\ text","textSignature":{"k":[1,"]"]}},{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"ls"},"partialJson":"{\"command\""}],"api":"anthropic-messages","provider":"anthropic","model":"m","usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10,"cost":{"total":0.5}},"stopReason":"toolUse","timestamp":5}}`,
		`{"type":"message","id":"00000002","parentId":"00000001","timestamp":"t","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"out"}],"details":{"exitCode":2},"isError":true,"timestamp":6}}`,
		`{"type":"message","id":"00000003","parentId":"00000002","timestamp":"t","message":{"role":"user","content":"plain","timestamp":7}}`,
		`{"type":"message","id":"00000004","parentId":"00000003","timestamp":"t","message":{"role":"bashExecution","command":"ls","output":"x","exitCode":0,"cancelled":false,"truncated":true,"fullOutputPath":"/tmp/o","timestamp":8}}`,
		`{"type":"message","id":"00000005","parentId":"00000004","timestamp":"t","message":{"role":"assistant","content":[],"usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3},"stopReason":"stop","timestamp":9}}`,
	)
	s := mustOpen(t, p, Options{})
	e := s.Entries()
	a := e[0].Message
	want := map[string]string{"api": `"anthropic-messages"`}
	if got := extraStrings(a.Extra); !mapsEqual(got, want) {
		t.Errorf("assistant extras %v, want %v", got, want)
	}
	// The usage with its cost is kept whole in the usage, not in Extra.
	if got, w := a.Usage.Stored, `{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10,"cost":{"total":0.5}}`; got != w {
		t.Errorf("assistant usage stored %s, want %s", got, w)
	}
	parts := []map[string]string{{"thinkingSignature": `"sig=="`}, {"textSignature": `{"k":[1,"]"]}`}, {"partialJson": `"{\"command\""`}}
	for i, w := range parts {
		if got := extraStrings(a.Content[i].Extra); !mapsEqual(got, w) {
			t.Errorf("part %d extras %v, want %v", i, got, w)
		}
	}
	if a.Content[1].Text != `a "quoted" \ text` {
		t.Errorf("text %q", a.Content[1].Text)
	}
	if got := string(e[1].Message.Metadata().Details); got != `{"exitCode":2}` || len(e[1].Message.Extra) != 0 {
		t.Errorf("tool result details %s, extras %v", got, extraStrings(e[1].Message.Extra))
	}
	if e[2].Message.Extra != nil || e[2].Message.Content[0].Extra != nil {
		t.Errorf("a plain user message got extras %v", extraStrings(e[2].Message.Extra))
	}
	if got := extraStrings(e[3].Message.Extra); !mapsEqual(got, map[string]string{"truncated": "true", "fullOutputPath": `"/tmp/o"`}) {
		t.Errorf("bash extras %v", got)
	}
	if e[4].Message.Extra != nil || e[4].Message.Usage.Stored != "" {
		t.Errorf("usage with only the modelled counts kept: extras %v, stored %q", extraStrings(e[4].Message.Extra), e[4].Message.Usage.Stored)
	}
	// Encoding the message read gives the stored members back.
	lines := fileLines(t, p)
	for _, n := range []int{1, 2, 4} { // line index = entry number
		id := fmt.Sprintf("%08d", n)
		enc, err := EncodeMessage(s.Entry(id).Message)
		if err != nil {
			t.Fatal(err)
		}
		stored := canonical(t, []byte(lines[n]))["message"]
		if got := canonical(t, enc); !reflect.DeepEqual(any(got), stored) {
			t.Errorf("entry %s re-encoded:\n got %s\nwant %v", id, enc, stored)
		}
	}
}

func extraStrings(m map[string]json.RawMessage) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}

func mapsEqual(a, b map[string]string) bool { return maps.Equal(a, b) }

// A torn line with lines after it may hide lost entries: it is an error
// naming the line and --lenient, unless Lenient, which skips it with a
// warning and still refuses to rewrite the file.
func TestTornLineInTheMiddle(t *testing.T) {
	m1 := msgLine("00000001", "", "user", "one")
	m2 := msgLine("00000002", "00000001", "assistant", "two")
	m3 := msgLine("00000003", "00000002", "user", "three")
	cases := []struct {
		name string
		data string
		line int
	}{
		{"torn line then entries", v3Header + "\n" + m1 + "\n" + m2[:40] + "\n" + m3 + "\n", 3},
		{"torn line, blank line, entry", v3Header + "\n" + m1 + "\n" + m2[:40] + "\n\n" + m3, 3},
		{"two torn lines", v3Header + "\n" + m1 + "\n" + m2[:40] + "\n" + m3[:30], 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := writeRaw(t, c.data)
			_, err := Open(p, Options{})
			var le *LineError
			if !errors.As(err, &le) || le.Line != c.line || !errors.Is(err, ErrMalformed) ||
				!strings.HasPrefix(err.Error(), fmt.Sprintf("%s:%d: ", p, c.line)) ||
				!strings.Contains(err.Error(), "incomplete line") || !strings.Contains(err.Error(), "--lenient") {
				t.Fatalf("Open: %v; want an error at line %d naming --lenient", err, c.line)
			}
			var warned []string
			s, err := Open(p, Options{Lenient: true, Warn: func(m string) { warned = append(warned, m) }})
			if err != nil {
				t.Fatalf("lenient Open: %v", err)
			}
			if len(warned) == 0 || !strings.Contains(warned[0], fmt.Sprintf("%s:%d: incomplete line", p, c.line)) {
				t.Errorf("warnings %q, want the first naming line %d", warned, c.line)
			}
			if s.TornLine() == 0 {
				t.Error("TornLine 0 after skipping a torn line")
			}
			if _, err := s.WriteTo(new(strings.Builder)); err == nil {
				t.Error("WriteTo succeeded although a torn line was skipped")
			}
		})
	}
}

// A line holding two complete entries (the first one's newline lost, as pi
// itself sometimes leaves them) is read as both entries, in order, with a
// warning naming the line; Line names the physical line, and WriteTo
// writes each entry on its own line.
func TestGluedLine(t *testing.T) {
	m1 := msgLine("00000001", "", "user", "one")
	m2 := msgLine("00000002", "00000001", "assistant", "two")
	m3 := msgLine("00000003", "00000002", "user", "three")
	m4 := msgLine("00000004", "00000003", "assistant", "four")
	for _, sep := range []string{"", " "} {
		p := writeRaw(t, v3Header+"\n"+m1+"\n"+m2+sep+m3+"\n"+m4+"\n")
		var warned []string
		s, err := Open(p, Options{Warn: func(m string) { warned = append(warned, m) }})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		var ids []string
		for _, e := range s.Entries() {
			ids = append(ids, e.ID)
		}
		if want := []string{"00000001", "00000002", "00000003", "00000004"}; !slices.Equal(ids, want) {
			t.Fatalf("entries %q, want %q", ids, want)
		}
		if s.Len() != 4 {
			t.Errorf("Len() = %d, want 4", s.Len())
		}
		if len(warned) != 1 || !strings.HasPrefix(warned[0], p+":3: 2 entries on one line") {
			t.Errorf("warnings %q, want one naming line 3", warned)
		}
		for id, line := range map[string]int{"00000001": 2, "00000002": 3, "00000003": 3, "00000004": 4} {
			if got := s.Line(id); got != line {
				t.Errorf("Line(%s) = %d, want %d", id, got, line)
			}
		}
		if got := len(s.Path()); got != 4 {
			t.Errorf("path of %d entries, want 4", got)
		}
		if got := string(readFile(t, p)); !strings.Contains(got, m2+sep+m3+"\n") {
			t.Errorf("the file was changed by reading:\n%s", got)
		}
		var out strings.Builder
		if _, err := s.WriteTo(&out); err != nil {
			t.Fatalf("WriteTo: %v", err)
		}
		if want := v3Header + "\n" + m1 + "\n" + m2 + "\n" + m3 + "\n" + m4 + "\n"; out.String() != want {
			t.Errorf("WriteTo wrote\n%s\nwant\n%s", out.String(), want)
		}
	}
}

// Records are kept in the array the lines were split into, moved down
// over the lines dropped before them. A glued line after dropped lines
// fits in their room; one before them does not, and the records move to
// an array of their own. Either way every entry keeps its line.
func TestGluedLineAfterSkippedLines(t *testing.T) {
	m := func(n int) string {
		id, parent := fmt.Sprintf("%08d", n), ""
		if n > 1 {
			parent = fmt.Sprintf("%08d", n-1)
		}
		return msgLine(id, parent, "user", fmt.Sprint("text ", n))
	}
	const bad = `{"type":"message","id":7}`
	for _, tc := range []struct {
		name string
		body string
		// lines maps each entry, by number, to its line.
		lines []int
	}{
		{"skipped lines first", bad + "\n" + bad + "\n" + m(1) + m(2) + "\n" + m(3) + "\n", []int{4, 4, 5}},
		{"glued line first", m(1) + m(2) + "\n" + bad + "\n" + m(3) + "\n" + bad + "\n" + m(4) + m(5) + m(6) + "\n" + m(7) + "\n",
			[]int{2, 2, 4, 6, 6, 6, 7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeRaw(t, v3Header+"\n"+tc.body)
			s, err := Open(p, Options{Lenient: true, Warn: func(string) {}})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			entries := s.Entries()
			if len(entries) != len(tc.lines) {
				t.Fatalf("%d entries, want %d", len(entries), len(tc.lines))
			}
			for i, e := range entries {
				n := i + 1
				if e.ID != fmt.Sprintf("%08d", n) || e.Message.Text() != fmt.Sprint("text ", n) {
					t.Errorf("entry %d is %s %q", n, e.ID, e.Message.Text())
				}
				if got := s.Line(e.ID); got != tc.lines[i] {
					t.Errorf("Line(%s) = %d, want %d", e.ID, got, tc.lines[i])
				}
			}
			if got := len(s.Path()); got != len(tc.lines) {
				t.Errorf("path of %d entries, want %d", got, len(tc.lines))
			}
		})
	}
}

// A file from parallelBytes up is decoded by several goroutines, each
// noting the lines it could not decode and the version 1 indexes it met.
// The session must be the one a single goroutine reads: the same
// entries, ids, parents and resolved indexes, the same lines skipped and
// the same warnings, in order.
func TestParallelDecodeMatchesSerial(t *testing.T) {
	var b strings.Builder
	b.WriteString(v1Header + "\n")
	text := strings.Repeat(`a line\tof text\n`, 40) // JSON escapes
	n := 0
	for b.Len() < 3*parallelBytes {
		n++
		switch {
		case n%97 == 0:
			b.WriteString(`{"type":"message","id":7}` + "\n") // malformed: skipped
		case n%131 == 0:
			k := n - 5 // a message: the lines count from the header, at 0
			if k%97 == 0 {
				k--
			}
			fmt.Fprintf(&b, `{"type":"compaction","timestamp":"t","summary":"s","firstKeptEntryIndex":%d,"tokensBefore":9}`+"\n", k)
		default:
			b.WriteString(v1MsgLine([]string{"user", "assistant"}[n%2], fmt.Sprint(n, text)) + "\n")
		}
	}
	data := []byte(b.String())
	read := func(procs int) (*Session, []string) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		var warned []string
		s, err := Read(bytes.NewReader(data), "big.jsonl", Options{Lenient: true, Warn: func(m string) { warned = append(warned, m) }})
		if err != nil {
			t.Fatalf("GOMAXPROCS %d: %v", procs, err)
		}
		return s, warned
	}
	one, oneWarned := read(1)
	two, twoWarned := read(2)
	if len(oneWarned) == 0 || !slices.Equal(oneWarned, twoWarned) {
		t.Errorf("warnings on one goroutine %q, on two %q", oneWarned, twoWarned)
	}
	if !slices.Equal(one.SkippedLines(), two.SkippedLines()) {
		t.Errorf("skipped lines %v on one goroutine, %v on two", one.SkippedLines(), two.SkippedLines())
	}
	a, c := one.Entries(), two.Entries()
	if len(a) != len(c) {
		t.Fatalf("%d entries on one goroutine, %d on two", len(a), len(c))
	}
	kept := 0
	for i := range a {
		if a[i].ID != c[i].ID || a[i].ParentID != c[i].ParentID || a[i].Kind != c[i].Kind {
			t.Fatalf("entry %d: %s<-%s %s on one goroutine, %s<-%s %s on two", i, a[i].ID, a[i].ParentID, a[i].Kind, c[i].ID, c[i].ParentID, c[i].Kind)
		}
		if a[i].Compaction != nil {
			if a[i].Compaction.FirstKeptID == "" || a[i].Compaction.FirstKeptID != c[i].Compaction.FirstKeptID {
				t.Errorf("entry %d keeps from %q on one goroutine, %q on two", i, a[i].Compaction.FirstKeptID, c[i].Compaction.FirstKeptID)
			}
			kept++
		} else if a[i].Message.Text() != c[i].Message.Text() {
			t.Errorf("entry %d: texts differ", i)
		}
	}
	if kept == 0 {
		t.Error("no compaction: the indexes went untested")
	}
}

// In a version 1 file, firstKeptEntryIndex counts each entry of a glued
// line: pi computed the index from the entries it held in memory, where
// they were separate. A compaction after the glued line that keeps from
// an entry after it resolves to that entry, and Migrate writes the glued
// entries on lines of their own.
func TestGluedLineVersion1Index(t *testing.T) {
	// Indexes: header 0, a 1, b and c glued 2 and 3, d 4, compaction 5.
	p := writeRaw(t, v1Header+"\n"+v1MsgLine("user", "a")+"\n"+v1MsgLine("assistant", "b")+v1MsgLine("user", "c")+"\n"+
		v1MsgLine("assistant", "d")+"\n"+
		`{"type":"compaction","timestamp":"t","summary":"s","firstKeptEntryIndex":4,"tokensBefore":9}`+"\n"+v1MsgLine("user", "e")+"\n")
	s, err := Open(p, Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	e := s.Entries()
	if len(e) != 6 {
		t.Fatalf("%d entries, want 6", len(e))
	}
	for i, text := range []string{"a", "b", "c", "d"} {
		if got := e[i].Message.Text(); got != text {
			t.Errorf("entry %d is %q, want %q", i, got, text)
		}
	}
	if got := e[4].Compaction.FirstKeptID; got != e[3].ID {
		t.Errorf("kept %q, want %q (the message d)", got, e[3].ID)
	}
	if e[2].ParentID != e[1].ID || e[3].ParentID != e[2].ID {
		t.Errorf("parents %q, %q; want the chain a, b, c, d", e[2].ParentID, e[3].ParentID)
	}
	if ok, err := s.Migrate(); !ok || err != nil {
		t.Fatalf("Migrate: %v, %v", ok, err)
	}
	lines := fileLines(t, p)
	if len(lines) != 7 {
		t.Fatalf("migrated file has %d lines, want 7:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	var warned []string
	m, err := Open(p, Options{Warn: func(m string) { warned = append(warned, m) }})
	if err != nil || len(warned) != 0 {
		t.Fatalf("re-read: %v, warnings %q", err, warned)
	}
	me := m.Entries()
	for i := range e {
		if me[i].ID != e[i].ID || me[i].ParentID != e[i].ParentID {
			t.Errorf("entry %d: %q<-%q after migrating, %q<-%q before", i, me[i].ID, me[i].ParentID, e[i].ID, e[i].ParentID)
		}
	}
	if got := me[4].Compaction.FirstKeptID; got != e[3].ID {
		t.Errorf("after migrating, kept %q, want %q", got, e[3].ID)
	}
}

// A glued line whose last entry was cut short by a crash gives its
// complete entries; the cut-short end follows the rule for torn lines
// (only on the last line without Lenient).
func TestGluedLineCutShort(t *testing.T) {
	m1 := msgLine("00000001", "", "user", "one")
	m2 := msgLine("00000002", "00000001", "assistant", "two")
	m3 := msgLine("00000003", "00000002", "user", "three")
	m4 := msgLine("00000004", "00000002", "user", "four")
	ids := func(s *Session) []string {
		var out []string
		for _, e := range s.Entries() {
			out = append(out, e.ID)
		}
		return out
	}

	p := writeRaw(t, v3Header+"\n"+m1+"\n"+m2+m3[:40])
	var warned []string
	s, err := Open(p, Options{Warn: func(m string) { warned = append(warned, m) }})
	if err != nil {
		t.Fatalf("last line: Open: %v", err)
	}
	if got := ids(s); !slices.Equal(got, []string{"00000001", "00000002"}) || s.TornLine() != 3 {
		t.Errorf("last line: entries %q, torn line %d; want 1, 2 and line 3", got, s.TornLine())
	}
	if len(warned) != 1 || !strings.HasPrefix(warned[0], p+":3: 1 complete entry and an incomplete one") || !strings.Contains(warned[0], "incomplete") {
		t.Errorf("last line: warnings %q", warned)
	}
	if _, err := s.WriteTo(new(strings.Builder)); err == nil {
		t.Error("last line: WriteTo succeeded although a cut-short entry was left out")
	}

	p = writeRaw(t, v3Header+"\n"+m1+"\n"+m2+m3[:40]+"\n"+m4+"\n")
	if _, err := Open(p, Options{}); err == nil || !strings.HasPrefix(err.Error(), p+":3: ") || !strings.Contains(err.Error(), "--lenient") {
		t.Errorf("middle line: Open: %v; want an error naming line 3 and --lenient", err)
	}
	s, err = Open(p, Options{Lenient: true})
	if err != nil {
		t.Fatalf("middle line, lenient: %v", err)
	}
	if got := ids(s); !slices.Equal(got, []string{"00000001", "00000002", "00000004"}) {
		t.Errorf("middle line, lenient: entries %q", got)
	}
}

// The session header with the first entry glued after it is read as the
// header and the entry, with a warning naming line 1.
func TestGluedHeader(t *testing.T) {
	m1 := msgLine("00000001", "", "user", "one")
	m2 := msgLine("00000002", "00000001", "assistant", "two")
	p := writeRaw(t, v3Header+m1+"\n"+m2+"\n")
	var warned []string
	s, err := Open(p, Options{Warn: func(m string) { warned = append(warned, m) }})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if got := len(s.Entries()); got != 2 || s.Line("00000001") != 1 || s.Line("00000002") != 2 || s.Header().ID == "" {
		t.Errorf("%d entries, lines %d and %d, header %+v", got, s.Line("00000001"), s.Line("00000002"), s.Header())
	}
	if len(warned) != 1 || !strings.HasPrefix(warned[0], p+":1: the session header and 1 entry on one line") {
		t.Errorf("warnings %q, want one naming line 1", warned)
	}
	var out strings.Builder
	if _, err := s.WriteTo(&out); err != nil || out.String() != v3Header+"\n"+m1+"\n"+m2+"\n" {
		t.Errorf("WriteTo: %v\n%s", err, out.String())
	}
}
