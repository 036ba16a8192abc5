package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

func TestFromTranscript(t *testing.T) {
	tr := &compact.Transcript{
		Format: "test", SessionID: "abc", Cwd: "/work",
		Entries: []*compact.Entry{
			{Kind: compact.KindMessage, ID: "u1", Timestamp: "2026-01-02T03:04:05.000Z", Message: compact.TextMessage(compact.RoleUser, "fix the bug")},
			{Kind: compact.KindMessage, Message: &compact.Message{Role: compact.RoleAssistant,
				Content: []compact.Part{{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: "c1", Name: "read", Arguments: []byte(`{"path":"a.go"}`)}}},
				Usage:   &compact.Usage{Input: 100, Output: 10}, StopReason: compact.StopToolUse}},
			{Kind: compact.KindMessage, Message: &compact.Message{Role: compact.RoleToolResult, ToolCallID: "c1", ToolName: "read",
				Content: []compact.Part{{Type: compact.PartText, Text: "package a"}}, Extra: map[string]json.RawMessage{"agentOnly": json.RawMessage(`{"x":1}`)}}},
			{Kind: compact.KindCustom, Meta: &compact.EntryMeta{CustomType: "other-record", Data: []byte(`{"type":"other"}`)}},
		},
	}
	s, err := FromTranscript(tr, "t.jsonl", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Header().ID != "abc" || s.Header().Cwd != "/work" || s.Header().Version != CurrentVersion {
		t.Errorf("header = %+v", s.Header())
	}
	path := s.Path()
	if len(path) != 4 {
		t.Fatalf("path has %d entries, want 4", len(path))
	}
	if path[0].ID != "u1" || path[1].ParentID != "u1" || path[3].ParentID != path[2].ID {
		t.Errorf("entries not chained: %s<-%s, %s<-%s", path[1].ParentID, path[1].ID, path[3].ParentID, path[3].ID)
	}
	if path[2].Timestamp != "2026-01-02T03:04:05.000Z" {
		t.Errorf("timestamp not carried: %q", path[2].Timestamp)
	}
	if got := string(path[2].Message.Extra["agentOnly"]); got != `{"x":1}` {
		t.Errorf("extra lost: %q", got)
	}
	ctx := s.Context()
	if len(ctx.Messages) != 3 {
		t.Errorf("context has %d messages, want 3", len(ctx.Messages))
	}
	var buf bytes.Buffer
	if err := EncodeTranscript(&buf, tr); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "\n"); n != 5 {
		t.Errorf("%d lines, want 5", n)
	}
	if tr.Entries[1].ID != "" {
		t.Error("EncodeTranscript changed its input")
	}
}

func TestFromTranscriptBadEntry(t *testing.T) {
	tr := &compact.Transcript{Entries: []*compact.Entry{{Kind: compact.KindMessage, ID: "x"}}}
	_, err := FromTranscript(tr, "t", Options{})
	if err == nil || !strings.Contains(err.Error(), "entry 1 (message x)") {
		t.Fatalf("err = %v", err)
	}
}

func TestFromTranscriptModel(t *testing.T) {
	tr := &compact.Transcript{Model: "gpt-4o", Provider: "openai", Entries: []*compact.Entry{
		{Kind: compact.KindMessage, Message: compact.TextMessage(compact.RoleUser, "hi")},
	}}
	s, err := FromTranscript(tr, "t", Options{})
	if err != nil {
		t.Fatal(err)
	}
	path := s.Path()
	if len(path) != 2 || path[0].Kind != compact.KindModelChange || path[1].ParentID != path[0].ID {
		t.Fatalf("path = %v", path)
	}
	if c := s.Context(); c.Model != "gpt-4o" || c.Provider != "openai" {
		t.Errorf("context model %s/%s", c.Provider, c.Model)
	}
}

func TestEncodeTranscriptPrettyRawValues(t *testing.T) {
	tr := &compact.Transcript{Entries: []*compact.Entry{
		{Kind: compact.KindCustom, Meta: &compact.EntryMeta{CustomType: "x:record", Data: json.RawMessage("{\n  \"a\": [1,\n 2]\n}")}},
		{Kind: compact.KindMessage, Message: &compact.Message{Role: compact.RoleAssistant, StopReason: compact.StopToolUse,
			Content: []compact.Part{{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: "c", Name: "t", Arguments: json.RawMessage("{\n \"path\": \"a\\nb\"\n}")}}}}},
	}}
	var buf bytes.Buffer
	if err := EncodeTranscript(&buf, tr); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "\n"); n != 3 {
		t.Fatalf("%d lines, want 3:\n%s", n, buf.String())
	}
	s, err := Read(&buf, "t", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Path()[1].Message.ToolCalls()[0].FilePath(); got != "a\nb" {
		t.Errorf("path argument %q", got)
	}
}

func TestSaveAs(t *testing.T) {
	tr := &compact.Transcript{SessionID: "s1", Timestamp: "2026-01-01T00:00:00.000Z", Entries: []*compact.Entry{
		{Kind: compact.KindMessage, ID: "a", Message: compact.TextMessage(compact.RoleUser, "hi")},
	}}
	s, err := FromTranscript(tr, "t", Options{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "out.jsonl")
	if err := s.SaveAs(path); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	EncodeTranscript(&want, tr)
	if got, _ := os.ReadFile(path); string(got) != want.String() {
		t.Errorf("saved %q, want %q", got, want.String())
	}
	if err := s.SaveAs(path); !errors.Is(err, fs.ErrExist) {
		t.Errorf("SaveAs over an existing file: %v, want fs.ErrExist", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("%d files in the folder, want the one saved", len(entries))
	}
}
