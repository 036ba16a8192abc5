// Package readertest holds the checks every reader of another agent's
// files (requestbody, sweagent, openhands, claudecode, codex, cline,
// geminicli) runs: detection of its files and refusal of the others'
// (CheckDetect, DetectsNone), the one-line error bad input gets
// (CheckError, and RunBad for a table of bad files), and on the transcripts it makes, tool calls and results
// paired (CheckCalls, CheckPairing, CheckAnswered), counts by role,
// custom type and unknown record, warnings, the import and the round
// trip through a pi session file (Import, RoundTrip, SameSession), a
// table of bodies or of testdata files checked in one go (RunCases,
// RunSamples), counts matched against a plain scan of the file
// (RunCounts), results without a call and harness text kept from the
// user's words (RunOrphans, Summary, Section), extras whose names clash
// kept apart (CheckExtrasKeptApart); and the fuzz targets and benchmark
// they share.
package readertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/session"
)

// RoundTrip imports tr as a pi session in memory, checks that its context
// holds wantContext messages, then writes it with EncodeTranscript, reads
// the file back with session.Read and checks that every entry came back
// with the same content (after the model_change entry that names
// tr.Model, when the encoder writes one).
func RoundTrip(t testing.TB, tr *compact.Transcript, wantContext int) {
	t.Helper()
	s := Import(t, tr, "import")
	if n := len(s.Context().Messages); n != wantContext {
		t.Errorf("imported context has %d messages, want %d", n, wantContext)
	}
	var buf bytes.Buffer
	if err := session.EncodeTranscript(&buf, tr); err != nil {
		t.Fatalf("EncodeTranscript: %v", err)
	}
	back, err := session.Read(&buf, "encoded.jsonl", session.Options{})
	if err != nil {
		t.Fatalf("re-read: %v", err)
	}
	got := back.Entries()
	if tr.Model != "" && len(got) > 0 && got[0].Kind == compact.KindModelChange && (len(tr.Entries) == 0 || tr.Entries[0].Kind != compact.KindModelChange) {
		// The model_change entry EncodeTranscript puts first for t.Model.
		if got[0].Metadata().ModelID != tr.Model {
			t.Errorf("model_change names %q, want %q", got[0].Metadata().ModelID, tr.Model)
		}
		got = got[1:]
	}
	if len(got) != len(tr.Entries) {
		t.Fatalf("re-read %d entries, want %d", len(got), len(tr.Entries))
	}
	for i, want := range tr.Entries {
		if a, b := EntryFacts(want), EntryFacts(got[i]); a != b {
			t.Errorf("entry %d changed on the way through the file:\n got %s\nwant %s", i, b, a)
		}
	}
}

// EntryFacts renders what an entry says, leaving out the ids and
// timestamps EncodeTranscript assigns; JSON values are compacted so that
// spacing does not count.
func EntryFacts(e *compact.Entry) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s data=%s", e.Kind, e.Metadata().CustomType, compactJSON(e.Metadata().Data))
	if c := e.Compaction; c != nil {
		fmt.Fprintf(&b, " compaction{%q kept=%s before=%d}", c.Summary, c.FirstKeptID, c.TokensBefore)
	}
	if m := e.Message; m != nil {
		fmt.Fprintf(&b, " %s call=%s tool=%s err=%v stop=%s model=%s/%s", m.Role, m.ToolCallID, m.ToolName, m.IsError, m.StopReason, m.Provider, m.Model)
		if m.Usage != nil {
			fmt.Fprintf(&b, " usage=%+v", *m.Usage)
		}
		fmt.Fprintf(&b, " extra=%s [", extraFacts(m.Extra))
		for _, p := range m.Content {
			fmt.Fprintf(&b, "{%s %q %q %s %d", p.Type, p.Text, p.Thinking, p.Picture().MimeType, len(p.Picture().Data))
			if p.ToolCall != nil {
				fmt.Fprintf(&b, " %s %s %s", p.ToolCall.ID, p.ToolCall.Name, compactJSON(p.ToolCall.Arguments))
			}
			fmt.Fprintf(&b, " %s}", extraFacts(p.Extra))
		}
		b.WriteByte(']')
	}
	return b.String()
}

func extraFacts(m map[string]json.RawMessage) string {
	if len(m) == 0 {
		return "{}"
	}
	out := map[string]string{}
	for k, v := range m {
		out[k] = compactJSON(v)
	}
	return fmt.Sprint(out)
}

func compactJSON(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// CheckPairing asserts that every tool result follows the assistant
// message holding its call, and returns the number of results.
func CheckPairing(t testing.TB, tr *compact.Transcript) int {
	t.Helper()
	calls := map[string]string{}
	n := 0
	for i, e := range tr.Entries {
		m := e.Message
		if m == nil {
			continue
		}
		for _, c := range m.ToolCalls() {
			if m.Role != compact.RoleAssistant {
				t.Errorf("entry %d: tool call in a %s message", i, m.Role)
			}
			calls[c.ID] = c.Name
		}
		if m.Role == compact.RoleToolResult {
			n++
			name, ok := calls[m.ToolCallID]
			if !ok {
				t.Errorf("entry %d: result for call %q before or without its call", i, m.ToolCallID)
			} else if name != m.ToolName {
				t.Errorf("entry %d: result names tool %q, its call %q", i, m.ToolName, name)
			}
		}
	}
	return n
}

// CheckCalls asserts that every tool call of tr has an id no other call
// has, and arguments that are one JSON object written on one line (as a
// pi session file holds them).
func CheckCalls(t testing.TB, tr *compact.Transcript) {
	t.Helper()
	seen := map[string]bool{}
	for _, e := range tr.Entries {
		if e.Message == nil {
			continue
		}
		for _, c := range e.Message.ToolCalls() {
			if seen[c.ID] {
				t.Errorf("call id %s twice", c.ID)
			}
			seen[c.ID] = true
			if !json.Valid(c.Arguments) || c.Arguments[0] != '{' || bytes.ContainsRune(c.Arguments, '\n') {
				t.Errorf("call %s: arguments %s", c.ID, c.Arguments)
			}
		}
	}
}

// CheckAnswered asserts that every tool call of tr has exactly one
// result, for the formats that record a result for every call made.
func CheckAnswered(t testing.TB, tr *compact.Transcript) {
	t.Helper()
	results := map[string]int{}
	for _, e := range tr.Entries {
		if m := e.Message; m != nil && m.Role == compact.RoleToolResult {
			results[m.ToolCallID]++
		}
	}
	for _, e := range tr.Entries {
		if e.Message == nil {
			continue
		}
		for _, c := range e.Message.ToolCalls() {
			if n := results[c.ID]; n != 1 {
				t.Errorf("call %s has %d results, want 1", c.ID, n)
			}
		}
	}
}

// Roles counts the message entries by role.
func Roles(tr *compact.Transcript) map[compact.Role]int {
	out := map[compact.Role]int{}
	for _, e := range tr.Entries {
		if e.Message != nil {
			out[e.Message.Role]++
		}
	}
	return out
}

// Customs counts the custom entries by type.
func Customs(tr *compact.Transcript) map[string]int {
	out := map[string]int{}
	for _, e := range tr.Entries {
		if e.Kind == compact.KindCustom {
			out[e.Metadata().CustomType]++
		}
	}
	return out
}

// CheckRoles asserts that the message entries of tr count want by role
// (as Roles counts them; nil: none).
func CheckRoles(t testing.TB, tr *compact.Transcript, want map[compact.Role]int) {
	t.Helper()
	checkCounts(t, "roles", Roles(tr), want)
}

// CheckCustoms asserts that the custom entries of tr count want by type
// (as Customs counts them; nil: none).
func CheckCustoms(t testing.TB, tr *compact.Transcript, want map[string]int) {
	t.Helper()
	checkCounts(t, "custom entries", Customs(tr), want)
}

// CheckUnknown asserts that tr.Unknown, which a reader always makes,
// counts the record types in want (nil: none).
func CheckUnknown(t testing.TB, tr *compact.Transcript, want map[string]int) {
	t.Helper()
	if tr.Unknown == nil {
		t.Errorf("unknown is nil, want %v", want)
		return
	}
	checkCounts(t, "unknown", tr.Unknown, want)
}

// checkCounts fails t, naming what, unless got counts what want does;
// got is never nil, and a nil want counts nothing.
func checkCounts[K comparable](t testing.TB, what string, got, want map[K]int) {
	t.Helper()
	if want == nil {
		want = map[K]int{}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s %v, want %v", what, got, want)
	}
}

// CheckWarnings asserts that tr has one warning for each of prefixes,
// in order, each beginning with its prefix.
func CheckWarnings(t testing.TB, tr *compact.Transcript, prefixes []string) {
	t.Helper()
	if len(tr.Warnings) != len(prefixes) {
		t.Fatalf("warnings %q, want %q", tr.Warnings, prefixes)
	}
	for i, w := range prefixes {
		if !strings.HasPrefix(tr.Warnings[i], w) {
			t.Errorf("warning %q, want prefix %q", tr.Warnings[i], w)
		}
	}
}

// Context returns how many messages a context built from messages
// counted by role (as Roles counts them) holds: the user, assistant and
// tool result ones.
func Context(roles map[compact.Role]int) int {
	return roles[compact.RoleUser] + roles[compact.RoleAssistant] + roles[compact.RoleToolResult]
}

// Kinds lists the entries of tr in order, each as its message's role or,
// for an entry without a message, its custom type.
func Kinds(tr *compact.Transcript) []string {
	var out []string
	for _, e := range tr.Entries {
		if e.Message != nil {
			out = append(out, string(e.Message.Role))
		} else {
			out = append(out, e.Metadata().CustomType)
		}
	}
	return out
}

// CheckKinds stops the test unless the Kinds of tr's entries, joined by
// spaces, are want.
func CheckKinds(t testing.TB, tr *compact.Transcript, want string) {
	t.Helper()
	if got := strings.Join(Kinds(tr), " "); got != want {
		t.Fatalf("entries\n%s\nwant\n%s", got, want)
	}
}

// CheckExtrasKeptApart checks m, the user message a reader made of a
// record whose members clash with names the session reader takes for its
// own fields (ignoring case) or with extras the reader sets itself: each
// of extras, a member of the record, and of partExtras, a member of its
// first part, is kept under prefix+"."+name, holding the value given
// ("": any); and tr imports as a pi session whose context starts with
// that message, a user message holding text.
func CheckExtrasKeptApart(t testing.TB, tr *compact.Transcript, m *compact.Message, prefix, text string, extras, partExtras map[string]string) {
	t.Helper()
	check := func(what string, got map[string]json.RawMessage, want map[string]string) {
		t.Helper()
		for name, v := range want {
			raw, ok := got[prefix+"."+name]
			if !ok || (v != "" && string(raw) != v) {
				t.Errorf("%s extra %s.%s = %s (kept: %v), want %s", what, prefix, name, raw, ok, v)
			}
		}
	}
	check("message", m.Extra, extras)
	if len(m.Content) == 0 {
		t.Fatalf("message has no parts")
	}
	check("part", m.Content[0].Extra, partExtras)
	s := Import(t, tr, "x")
	if got := s.Context().Messages[0]; got.Text() != text || got.Role != compact.RoleUser {
		t.Errorf("imported message %s %q, want user %q", got.Role, got.Text(), text)
	}
}
