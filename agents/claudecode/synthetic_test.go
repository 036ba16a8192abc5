package claudecode

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/readertest"
)

// Small hand-written transcripts for what the public samples lack:
// branches, sidechain and summary records, images, API errors, unknown
// records and bad input. Their records have the shape of the real ones.

func rec(fields string) string {
	return "{" + fields + `,"sessionId":"s1","cwd":"/w","timestamp":"2026-01-02T03:04:05.000Z"}`
}

func userText(uuid, parent, text string) string {
	return rec(`"type":"user","uuid":"` + uuid + `","parentUuid":` + parentJSON(parent) + `,"isSidechain":false,"message":{"role":"user","content":` + quote(text) + `}`)
}

func assistantLine(uuid, parent, msgID, content string) string {
	return rec(`"type":"assistant","uuid":"` + uuid + `","parentUuid":` + parentJSON(parent) + `,"isSidechain":false,"message":{"id":"` + msgID +
		`","type":"message","role":"assistant","model":"claude-x","content":[` + content + `],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":5,"cache_read_input_tokens":100,"cache_creation_input_tokens":7}}`)
}

func parentJSON(p string) string {
	if p == "" {
		return "null"
	}
	return quote(p)
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

func lines(ls ...string) []byte { return []byte(strings.Join(ls, "\n") + "\n") }

func TestBranches(t *testing.T) {
	// The user edited the first prompt: u2 replaces u1, whose answer a1
	// and tool result r1 stay in the file off the path.
	data := lines(
		userText("u1", "", "first try"),
		assistantLine("a1", "u1", "m1", `{"type":"tool_use","id":"c1","name":"Read","input":{"file_path":"x"}}`),
		rec(`"type":"user","uuid":"r1","parentUuid":"a1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"old"}]},"toolUseResult":{"x":1}`),
		userText("u2", "", "second try"),
		assistantLine("a2", "u2", "m2", `{"type":"text","text":"done"}`),
		`{"type":"summary","summary":"A title","leafUuid":"a2"}`,
	)
	tr, err := Read(data, "branch.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Entries) != 6 {
		t.Fatalf("%d entries", len(tr.Entries))
	}
	s := readertest.Import(t, tr, "branch")
	if got := pathIDs(s.Path()); got != "u2<- a2<-u2 line-6<-a2" {
		t.Errorf("path %s, want u2 a2 line-6", got)
	}
	if e := findEntry(tr, "u1"); e.ParentID != "u2" || tr.Entries[0].ID != "u2" {
		t.Errorf("the main line's root is not first (%s), or the abandoned prompt's parent is %q", tr.Entries[0].ID, e.ParentID)
	}
	if e := findEntry(tr, "a1"); e.ParentID != "u1" {
		t.Errorf("abandoned answer's parent %q", e.ParentID)
	}
	if e := findEntry(tr, "r1"); e.ParentID != "a1" || e.Message.Role != compact.RoleToolResult {
		t.Errorf("abandoned result's parent %q role %s", e.ParentID, e.Message.Role)
	}
	if e := tr.Entries[5]; e.Kind != compact.KindCustom || e.Metadata().CustomType != "claude-code:summary" || !strings.Contains(string(e.Metadata().Data), "A title") {
		t.Errorf("summary entry %+v", e)
	}
	if n := len(s.Context().Messages); n != 2 {
		t.Errorf("context %d messages, want 2", n)
	}
}

func TestSidechainInMainFile(t *testing.T) {
	side := rec(`"type":"assistant","uuid":"s2","parentUuid":"s1","isSidechain":true,"message":{"id":"ms","role":"assistant","model":"claude-x","content":[{"type":"text","text":"sub"}]}`)
	data := lines(
		userText("u1", "", "go"),
		rec(`"type":"user","uuid":"s1","parentUuid":null,"isSidechain":true,"message":{"role":"user","content":"subtask"}`),
		side,
		assistantLine("a1", "u1", "m1", `{"type":"text","text":"ok"}`),
	)
	tr, err := Read(data, "side.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	got := counts(tr.Entries)
	if got["user"] != 1 || got["assistant"] != 1 || got["custom"] != 2 {
		t.Errorf("entries %v", got)
	}
	if e := tr.Entries[2]; e.Metadata().CustomType != "claude-code:sidechain" || string(e.Metadata().Data) != side {
		t.Errorf("sidechain entry %s %s", e.Metadata().CustomType, e.Metadata().Data)
	}
	// Read on its own, the subagent's records are the conversation.
	sub, err := Read(lines(string(tr.Entries[1].Metadata().Data), side), "agent.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if got := counts(sub.Entries); got["user"] != 1 || got["assistant"] != 1 {
		t.Errorf("subagent file entries %v", got)
	}
}

func TestMessageMapping(t *testing.T) {
	data := lines(
		rec(`"type":"user","uuid":"u1","parentUuid":null,"message":{"role":"user","content":[{"type":"text","text":"look"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0K"}}]}`),
		assistantLine("a1", "u1", "m1", `{"type":"tool_use","id":"c1","name":"Bash","input":{"command":"ls"}}`),
		rec(`"type":"user","uuid":"r1","parentUuid":"a1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","is_error":true,"content":[{"type":"text","text":"boom"},{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"/9j/"}}]},{"type":"text","text":"[Request interrupted by user]"}]}`),
		rec(`"type":"user","uuid":"r2","parentUuid":"r1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"nope","content":"lost"}]}`),
		rec(`"type":"assistant","uuid":"e1","parentUuid":"r2","isApiErrorMessage":true,"message":{"id":"m2","role":"assistant","model":"<synthetic>","content":[{"type":"text","text":"API Error: 529 overloaded"}],"stop_reason":"stop_sequence","usage":{"input_tokens":0,"output_tokens":0}}`),
		rec(`"type":"mystery-record","uuid":"x1","parentUuid":"e1","data":{"k":[1,2]}`),
	)
	tr, err := Read(data, "map.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Model != "claude-x" {
		t.Errorf("model %q: the synthetic error message must not set it", tr.Model)
	}
	if tr.Unknown["mystery-record"] != 1 {
		t.Errorf("unknown %v", tr.Unknown)
	}
	readertest.CheckKinds(t, tr, "user assistant toolResult custom custom assistant claude-code:mystery-record")
	img := tr.Entries[0].Message.Content[1]
	if img.Type != compact.PartImage || img.Image.MimeType != "image/png" || img.Image.Data != "iVBORw0K" {
		t.Errorf("image %+v", img)
	}
	res := tr.Entries[2]
	if res.ID != "r1" || !res.Message.IsError || res.Message.ToolName != "Bash" || len(res.Message.Content) != 2 || res.Message.Content[1].Image.MimeType != "image/jpeg" {
		t.Errorf("result %s %+v", res.ID, res.Message)
	}
	if e := tr.Entries[3]; e.ID != "r1-2" || e.Message.Text() != "[Request interrupted by user]" ||
		e.Message.Metadata().CustomType != "harness:claude-code:interrupted" {
		t.Errorf("text after the result: %s %q", e.ID, e.Message.Text())
	}
	if e := tr.Entries[4]; e.Message.Text() != "[tool result without its call: nope]\nlost" || !compact.IsHarnessNote(e.Message) ||
		len(tr.Warnings) != 1 || !strings.Contains(tr.Warnings[0], `map.jsonl:4: tool_result "nope"`) {
		t.Errorf("orphan result: %q, warnings %q", e.Message.Text(), tr.Warnings)
	}
	apiErr := tr.Entries[5].Message
	if apiErr.StopReason != compact.StopError || apiErr.Metadata().ErrorMessage != "API Error: 529 overloaded" {
		t.Errorf("api error: %s %q", apiErr.StopReason, apiErr.Metadata().ErrorMessage)
	}
	call := tr.Entries[1].Message
	if call.StopReason != compact.StopToolUse || *call.Usage != (compact.Usage{Input: 10, Output: 5, CacheRead: 100, CacheWrite: 7}) {
		t.Errorf("call: %s %+v", call.StopReason, call.Usage)
	}
	readertest.Import(t, tr, "map")
}

func TestBadInput(t *testing.T) {
	good := userText("u1", "", "hi")
	readertest.RunBad(t, Read, "bad.jsonl", []readertest.Bad{
		{Name: "cut last line", Body: good + "\n" + `{"type":"user","uuid":"u2","mess`, Warnings: []string{"bad.jsonl:2: the last line is cut short"}},
		{Name: "bad middle line", Body: good + "\n{not json\n" + good + "\n", Err: "bad.jsonl:2: not a JSON object"},
		{Name: "no type", Body: `{"uuid":"u1"}` + "\n", Err: "bad.jsonl:1: field type: missing"},
		{Name: "type not a string", Body: `{"type":5}` + "\n", Err: "bad.jsonl:1: field type: want a string"},
		{Name: "no message", Body: `{"type":"user","uuid":"u1"}` + "\n", Err: "bad.jsonl:1: field message: missing"},
		{Name: "content a number", Body: `{"type":"user","uuid":"u1","message":{"content":5}}` + "\n", Err: "bad.jsonl:1: field message.content: want a string or an array"},
		{Name: "block text a number", Body: `{"type":"assistant","uuid":"a","message":{"id":"m","content":[{"type":"text","text":1}]}}` + "\n", Err: "bad.jsonl:1: field message.content[0].text: want a string"},
		{Name: "usage count not an integer", Body: `{"type":"assistant","uuid":"a","message":{"id":"m","content":[],"usage":{"output_tokens":1,"input_tokens":"9"}}}` + "\n", Err: `bad.jsonl:1: field message.usage.input_tokens: want an integer, have "9"`},
		{Name: "usage not object", Body: `{"type":"assistant","uuid":"a","message":{"id":"m","content":[],"usage":[]}}` + "\n", Err: "bad.jsonl:1: field message.usage: want an object"},
		{Name: "sidechain not bool", Body: `{"type":"user","uuid":"a","isSidechain":"yes","message":{"content":"x"}}` + "\n", Err: "bad.jsonl:1: field isSidechain: want true or false"},
		{Name: "crlf and bom", Body: "\xef\xbb\xbf" + good + "\r\n\r\n"},
	}, func(t *testing.T, tr *compact.Transcript) {
		if len(tr.Entries) != 1 {
			t.Errorf("%d entries, want 1", len(tr.Entries))
		}
	})
}

func TestExtraNamesKeptApart(t *testing.T) {
	// Record members whose names the session reader would take for its
	// own fields (it ignores case) are renamed, not lost.
	data := lines(rec(`"type":"user","uuid":"u1","parentUuid":null,"Content":"x","toolName":"y","message":{"role":"user","content":[{"type":"text","text":"hi","Text":"z"}]}`))
	tr, err := Read(data, "x.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	readertest.CheckExtrasKeptApart(t, tr, tr.Entries[0].Message, "claudeCode", "hi",
		map[string]string{"Content": `"x"`, "toolName": `"y"`}, map[string]string{"Text": `"z"`})
}
