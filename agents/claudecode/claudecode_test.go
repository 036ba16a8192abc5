package claudecode

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/readertest"
	"github.com/compactkit/compact/session"
)

// counts tallies the entries of a transcript by role or kind.
func counts(entries []*compact.Entry) map[string]int {
	n := make(map[string]int)
	for _, e := range entries {
		if e.Message != nil {
			n[string(e.Message.Role)]++
		} else {
			n[string(e.Kind)]++
		}
	}
	return n
}

func TestReadSamples(t *testing.T) {
	tests := []struct {
		file      string
		session   string
		model     string
		entries   map[string]int
		context   map[string]int
		warnings  int
		pathAll   bool
		firstUser string
	}{
		{
			file: "tool-heavy.jsonl", session: "d6e0bada-1959-4eec-a9d2-0bfade768d8f", model: "claude-opus-4-6",
			// Two prompts; the two interruption notices, the /mcp caveat,
			// command and output are Claude Code's notes (custom).
			entries: map[string]int{"user": 2, "assistant": 4, "toolResult": 6, "custom": 17 + 5},
			context: map[string]int{"user": 2, "custom": 5, "assistant": 4, "toolResult": 6}, pathAll: true,
			firstUser: "start phoenix in background",
		},
		{
			file: "compaction.jsonl", session: "ae4a77f8-aedd-4bc1-888f-c94edc91af04", model: "claude-haiku-4-5-20251001",
			entries: map[string]int{"user": 1, "assistant": 5, "toolResult": 6, "custom": 47 + 3, "compaction": 1},
			// After the compaction: the summary, the /compact caveat,
			// command and output (notes), the next prompt, one response
			// and its three results.
			context:  map[string]int{"compactionSummary": 1, "custom": 3, "user": 1, "assistant": 1, "toolResult": 3},
			warnings: 1, pathAll: true,
		},
		{
			file: "subagent.jsonl", session: "4d5611e5-241a-462a-8d15-5122611a9569", model: "claude-sonnet-4-5-20250929",
			entries: map[string]int{"user": 1, "assistant": 2, "toolResult": 11, "custom": 6},
			context: map[string]int{"user": 1, "assistant": 2, "toolResult": 11}, pathAll: true,
			firstUser: "Very thorough exploration.",
		},
		{
			file: "pomodoro.jsonl", session: "36d9e1bc-63bf-4e97-8a3e-2b20ba8583f2", model: "claude-sonnet-4-5-20250929",
			entries: map[string]int{"user": 2, "assistant": 20, "toolResult": 18, "custom": 4},
			context: map[string]int{"user": 2, "assistant": 20, "toolResult": 18}, pathAll: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			tr := readertest.ReadTestdata(t, ReadFile, tc.file)
			if tr.Format != Format || tr.SessionID != tc.session || tr.Model != tc.model || tr.Provider != "anthropic" || tr.Cwd == "" || tr.Timestamp == "" {
				t.Errorf("header: format %q session %q model %q cwd %q timestamp %q", tr.Format, tr.SessionID, tr.Model, tr.Cwd, tr.Timestamp)
			}
			if got := counts(tr.Entries); !equalCounts(got, tc.entries) {
				t.Errorf("entries %v, want %v", got, tc.entries)
			}
			if len(tr.Warnings) != tc.warnings {
				t.Errorf("warnings %q, want %d", tr.Warnings, tc.warnings)
			}
			if len(tr.Unknown) != 0 {
				t.Errorf("unknown %v", tr.Unknown)
			}
			if readertest.CheckPairing(t, tr) == 0 {
				t.Error("no tool results")
			}
			readertest.CheckCalls(t, tr)
			s := readertest.Import(t, tr, tc.file)
			if tc.pathAll && len(s.Path()) != len(tr.Entries)+1 {
				t.Errorf("path has %d entries, want all %d and the model_change", len(s.Path()), len(tr.Entries))
			}
			ctx := s.Context()
			cm := make(map[string]int)
			for _, m := range ctx.Messages {
				cm[string(m.Role)]++
			}
			if !equalCounts(cm, tc.context) {
				t.Errorf("context %v, want %v", cm, tc.context)
			}
			checkContextPairing(t, ctx.Messages)
			if tc.firstUser != "" {
				for _, m := range ctx.Messages {
					if m.Role == compact.RoleUser {
						if !strings.HasPrefix(m.Text(), tc.firstUser) {
							t.Errorf("first prompt %.40q, want %q", m.Text(), tc.firstUser)
						}
						break
					}
				}
			}
			roundTrip(t, tr, s)
		})
	}
}

func equalCounts(a, b map[string]int) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}

// checkContextPairing fails when a tool result in the model's context
// does not follow the assistant message holding its call, with only
// results between.
func checkContextPairing(t *testing.T, msgs []*compact.Message) {
	t.Helper()
	var open map[string]bool
	for i, m := range msgs {
		switch m.Role {
		case compact.RoleAssistant:
			open = make(map[string]bool)
			for _, c := range m.ToolCalls() {
				open[c.ID] = true
			}
		case compact.RoleToolResult:
			if !open[m.ToolCallID] {
				t.Errorf("context message %d: result %s does not follow its call", i, m.ToolCallID)
			}
		default:
			open = nil
		}
	}
}

// roundTrip runs the readers' shared round trip (entries unchanged
// through a pi session file) and checks that ids and parent links, which
// carry the branches, come back too.
func roundTrip(t *testing.T, tr *compact.Transcript, s *session.Session) {
	t.Helper()
	readertest.RoundTrip(t, tr, len(s.Context().Messages))
	var buf bytes.Buffer
	if err := session.EncodeTranscript(&buf, tr); err != nil {
		t.Fatal(err)
	}
	back, err := session.Read(&buf, "roundtrip", session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, b := pathIDs(s.Path()), pathIDs(back.Path())
	if a != b {
		t.Errorf("round trip: path\n%s\nwas\n%s", b, a)
	}
}

// pathIDs lists the id and parent of each entry of a path, leaving out
// the model_change entry the encoder adds (its id is random).
func pathIDs(path []*compact.Entry) string {
	var out []string
	for _, e := range path {
		if e.Kind == compact.KindModelChange {
			continue
		}
		parent := e.ParentID
		if len(out) == 0 {
			parent = ""
		}
		out = append(out, e.ID+"<-"+parent)
	}
	return strings.Join(out, " ")
}

func TestUsageLastLineWins(t *testing.T) {
	tr := readertest.ReadTestdata(t, ReadFile, "tool-heavy.jsonl")
	tests := []struct {
		id   string // uuid of the response's first line
		want compact.Usage
		stop compact.StopReason
	}{
		// Two lines: output_tokens 25 on the first, 173 on the last. Claude
		// Code writes its cache for an hour (cache_creation).
		{"9c0157de", compact.Usage{Input: 47, CacheWrite: 1115, CacheWrite1h: 1115, CacheRead: 26504, Output: 173}, compact.StopToolUse},
		{"8565db80", compact.Usage{Input: 3, CacheWrite: 7883, CacheWrite1h: 7883, CacheRead: 17915, Output: 27}, compact.StopToolUse},
	}
	for _, tc := range tests {
		e := findEntry(tr, tc.id)
		if e == nil {
			t.Fatalf("no entry %s", tc.id)
		}
		m := e.Message
		if m.Usage == nil || *m.Usage != tc.want {
			t.Errorf("%s: usage %+v, want %+v", tc.id, m.Usage, tc.want)
		}
		if m.StopReason != tc.stop || m.Provider != "anthropic" || m.Model != "claude-opus-4-6" {
			t.Errorf("%s: stop %q provider %q model %q", tc.id, m.StopReason, m.Provider, m.Model)
		}
	}
}

// findEntry returns the entry with the id, or whose id starts with it.
func findEntry(tr *compact.Transcript, id string) *compact.Entry {
	for _, e := range tr.Entries {
		if e.ID == id || (len(id) < 36 && strings.HasPrefix(e.ID, id)) {
			return e
		}
	}
	return nil
}

func TestJoinedResponse(t *testing.T) {
	tr := readertest.ReadTestdata(t, ReadFile, "tool-heavy.jsonl")
	// Four lines: text, thinking, two tool calls; the result of the
	// second call points at its own line, off the parent chain.
	e := findEntry(tr, "61045c3d")
	if e == nil {
		t.Fatal("response not found")
	}
	m := e.Message
	var types []string
	for _, p := range m.Content {
		types = append(types, string(p.Type))
	}
	if got := strings.Join(types, ","); got != "text,thinking,toolCall,toolCall" {
		t.Errorf("parts %s", got)
	}
	// The signature is kept where a pi session keeps it.
	if _, ok := m.Content[1].Extra["thinkingSignature"]; !ok {
		t.Error("thinking signature not kept as thinkingSignature")
	}
	var lines []map[string]any
	if err := json.Unmarshal(m.Extra["lines"], &lines); err != nil || len(lines) != 3 {
		t.Errorf("lines extra %s (%v)", m.Extra["lines"], err)
	}
	var api map[string]any
	if err := json.Unmarshal(m.Extra["apiMessage"], &api); err != nil || api["id"] != "msg_01LbyjvsALGe2gMsTgDSj7e6" {
		t.Errorf("apiMessage extra %s", m.Extra["apiMessage"])
	}
	if !strings.HasPrefix(string(m.Extra["uuid"]), `"61045c3d`) {
		t.Errorf("uuid extra %s", m.Extra["uuid"])
	}
	// Both results follow, each with its tool name and the tool's
	// structured output kept.
	n := 0
	for _, r := range tr.Entries {
		if r.Message != nil && r.Message.Role == compact.RoleToolResult {
			for _, c := range m.ToolCalls() {
				if c.ID == r.Message.ToolCallID {
					n++
					if _, ok := r.Message.Extra["toolUseResult"]; !ok {
						t.Errorf("result %s: toolUseResult not kept", r.ID)
					}
				}
			}
		}
	}
	if n != 2 {
		t.Errorf("%d results for the two calls", n)
	}
}

func TestMetaMarked(t *testing.T) {
	tr := readertest.ReadTestdata(t, ReadFile, "tool-heavy.jsonl")
	meta := 0
	for _, e := range tr.Entries {
		if e.Message != nil && string(e.Message.Extra["isMeta"]) == "true" {
			meta++
			if !compact.IsHarnessNote(e.Message) || e.Message.Metadata().CustomType != "harness:claude-code:caveat" ||
				!strings.Contains(e.Message.Text(), "local-command-caveat") {
				t.Errorf("meta message %s: %s %.40q", e.ID, e.Message.Role, e.Message.Text())
			}
		}
	}
	if meta != 1 {
		t.Errorf("%d isMeta messages, want 1", meta)
	}
}

func TestCompaction(t *testing.T) {
	tr := readertest.ReadTestdata(t, ReadFile, "compaction.jsonl")
	var comp *compact.Entry
	boundary := -1
	for i, e := range tr.Entries {
		if e.Kind == compact.KindCompaction {
			comp = e
		}
		if e.Kind == compact.KindCustom && e.Metadata().CustomType == "claude-code:system" && bytes.Contains(e.Metadata().Data, []byte(`"compact_boundary"`)) {
			boundary = i
		}
	}
	if comp == nil || boundary < 0 {
		t.Fatalf("compaction %v, boundary at %d", comp, boundary)
	}
	c := comp.Compaction
	if comp.ID != "94000b8f-fa9f-4b7b-8d81-cdc73aa8a085" || tr.Entries[boundary+1] != comp {
		t.Errorf("compaction entry %s does not follow its boundary", comp.ID)
	}
	if c.TokensBefore != 142431 || c.Details["reason"] != "manual" || c.Details["source"] != Format ||
		c.Details["boundaryUuid"] != "434dc859-6299-4713-8613-d28662692f06" {
		t.Errorf("compaction %d %v", c.TokensBefore, c.Details)
	}
	if !strings.HasPrefix(c.Summary, "This session is being continued from a previous conversation") {
		t.Errorf("summary %.60q", c.Summary)
	}
	if c.FirstKeptID != "bc8137ed-4f00-41c3-824d-3e220d6d5def" {
		t.Errorf("first kept %s", c.FirstKeptID)
	}
	s := readertest.Import(t, tr, "compaction")
	// The entries the compaction replaced stay on the path before it.
	path := s.Path()
	at := -1
	for i, e := range path {
		if e.ID == comp.ID {
			at = i
		}
	}
	if at < 30 {
		t.Errorf("compaction at %d on the path: the replaced entries are not before it", at)
	}
	ctx := s.Context()
	if ctx.Compaction == nil || ctx.Compaction.ID != comp.ID || ctx.Messages[0].Role != compact.RoleCompactionSummary {
		t.Error("context does not start with the compaction summary")
	}
}

func TestSubagentFiles(t *testing.T) {
	dir := t.TempDir()
	main := filepath.Join(dir, "abc.jsonl")
	if err := os.WriteFile(main, []byte(`{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"abc","message":{"role":"user","content":"hi"}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "abc", "subagents"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"agent-b.jsonl", "agent-a.jsonl", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, "abc", "subagents", f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	files, err := SubagentFiles(main)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || filepath.Base(files[0]) != "agent-a.jsonl" || filepath.Base(files[1]) != "agent-b.jsonl" {
		t.Errorf("files %v", files)
	}
	tr, err := ReadFile(main)
	if err != nil || len(tr.Entries) != 1 {
		t.Fatalf("main file: %v, %v", tr, err)
	}
}

func TestDetect(t *testing.T) {
	heads := append(readertest.FileHeads(t, true, 120, "testdata/*.jsonl"),
		readertest.FileHeads(t, false, 120, "../codex/testdata/*.jsonl", "../../../shared/testdata/sessions/pi/before-compaction.jsonl")...)
	heads = append(heads, []readertest.Head{
		{"empty", "", false},
		{"blank lines first", "\n\n" + `{"type":"summary","summary":"t","leafUuid":"x"}` + "\n", true},
		{"not JSON", "hello\n", false},
		{"codex line", `{"timestamp":"t","type":"session_meta","payload":{"id":"x","sessionId":"y"}}` + "\n", false},
		{"request body", `{"messages":[]}`, false},
		{"gemini cli session", `{"sessionId":"0ab8","projectHash":"9da8","startTime":"2026-04-23T12:52:52.759Z","kind":"main"}` + "\n", false},
		{"gemini cli session cut", `{"sessionId":"0ab8","projectHash":"9da8","sta`, false},
		{"gemini cli message", `{"id":"u1","timestamp":"t","type":"user","content":[{"text":"hi"}]}` + "\n", false},
	}...)
	readertest.CheckDetect(t, Detect, heads)
}
