package agents

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// reads is the end of the messages about content no format reads.
const reads = "not a format compact reads (pi, claude-code, cline, codex, gemini-cli, openhands, request-body, swe-agent)"

// geminiStream is the start of what gemini --output-format stream-json
// prints.
const geminiStream = `{"type":"init","timestamp":"2025-10-10T10:00:00.000Z","session_id":"c0ffee","model":"gemini-2.5-pro"}
{"type":"message","timestamp":"2025-10-10T10:00:00.100Z","role":"user","content":"list the files"}
{"type":"tool_use","timestamp":"2025-10-10T10:00:01.000Z","tool_name":"run_shell_command","tool_id":"t1","parameters":{"command":"ls"}}
{"type":"tool_result","timestamp":"2025-10-10T10:00:01.500Z","tool_id":"t1","status":"success","output":"a.go"}
{"type":"message","timestamp":"2025-10-10T10:00:02.000Z","role":"assistant","content":"One file.","delta":true}
{"type":"result","timestamp":"2025-10-10T10:00:02.100Z","status":"success","stats":{"total_tokens":120}}
`

// TestDetectUnknown: what no format reads fails with one line naming the
// file, what it holds and what is read instead.
func TestDetectUnknown(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, content []byte) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ui, err := os.ReadFile("./cline/testdata/xml-task/ui_messages.json")
	if err != nil {
		t.Fatal(err)
	}
	random := make([]byte, 512)
	rand.New(rand.NewSource(1)).Read(random)
	var big strings.Builder
	big.WriteString("[")
	for i := range 5000 {
		if i > 0 {
			big.WriteString(",")
		}
		fmt.Fprintf(&big, `{"k":%d,"pad":"%s"}`, i, strings.Repeat("x", 20))
	}
	big.WriteString("]")
	empty := filepath.Join(dir, "folder")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		path    string
		want    string // the message after "PATH: "
		maybePi bool
	}{
		{"empty file", write("empty.json", nil), "empty file: " + reads, false},
		{"white space", write("blank.json", []byte("\n \n")), "only white space: " + reads, false},
		{"random bytes", write("random.bin", random), "binary data, not text: " + reads, false},
		{"text", write("notes.txt", []byte("hello\nworld\n")), "text, not JSON: " + reads, false},
		{"folder", empty, "a folder: neither a Cline task (api_conversation_history.json) nor an OpenHands session (events/<n>.json); name a session file (compact reads pi, claude-code, cline, codex, gemini-cli, openhands, request-body, swe-agent)", false},
		{"cline ui_messages.json alone", write("task/ui_messages.json", ui),
			"JSON array of 27 objects with keys ts, type, say: looks like Cline ui_messages.json; import needs api_conversation_history.json beside it", false},
		{"gemini stream-json", write("stream.jsonl", []byte(geminiStream)),
			"JSON Lines, the first line an object with keys type, timestamp, session_id: looks like Gemini CLI --output-format stream-json output, which compact does not read; import the run's chat recording instead (~/.gemini/tmp/<project>/chats/session-*.jsonl)", false},
		{"gemini stream-json without init", write("stream2.jsonl", []byte(strings.SplitN(geminiStream, "\n", 2)[1])),
			"JSON Lines, the first line an object with keys type, timestamp, role: looks like Gemini CLI --output-format stream-json output, which compact does not read; import the run's chat recording instead (~/.gemini/tmp/<project>/chats/session-*.jsonl)", false},
		{"array of unknown objects", write("arr.json", []byte(`[{"a":1,"b":2},{"a":3}]`)), "JSON array of 2 objects with keys a, b: " + reads, false},
		{"array of one object", write("one.json", []byte(`[{"a":1}]`)), "JSON array of 1 object with key a: " + reads, false},
		{"array of numbers", write("nums.json", []byte(`[1, 2, 3]`)), "JSON array of 3 values: " + reads, false},
		{"empty array", write("none.json", []byte(" [ ] ")), "empty JSON array: " + reads, false},
		{"array cut short", write("cut.json", []byte(`[{"a":1},{"a":`)), "JSON array that does not parse after 1 object: " + reads, false},
		{"array longer than the head", write("big.json", []byte(big.String())), "JSON array of 5000 objects with keys k, pad: " + reads, false},
		{"object of unknown shape", write("obj.json", []byte(`{"foo":1,"bar":[1],"baz":{},"qux":null}`)), "JSON object with keys foo, bar, baz: " + reads, false},
		{"object over several lines", write("pretty.json", []byte("{\n  \"foo\": 1,\n  \"bar\": 2\n}\n")), "JSON object over several lines with keys foo, bar: " + reads, false},
		{"key with a line break", write("nl.json", []byte(`{"a\nb":1}`)), "JSON object with key a?b: " + reads, false},
		{"json lines of unknown objects", write("lines.jsonl", []byte("{\"x\":1}\n{\"x\":2}\n")), "JSON Lines, the first line an object with key x: " + reads, false},
		{"pi entries without a header", write("nohead.jsonl", []byte(`{"type":"message","id":"a1","parentId":null,"message":{"role":"user","content":"hi"}}`+"\n")),
			`JSON object with keys type, id, parentId: starts like a pi session without a valid "session" header line (compact inspect names the line at fault)`, true},
		{"pi header after a byte order mark", write("bom.jsonl", []byte("\xef\xbb\xbf"+`{"type":"session","version":3,"id":"x","timestamp":"2025-01-01T00:00:00Z","cwd":"/"}`+"\n")),
			`JSON object with keys type, version, id: starts like a pi session without a valid "session" header line (compact inspect names the line at fault)`, true},
		{"pi session with a damaged header", write("damaged.jsonl", []byte(`{"type":"sess`+"\n"+`{"type":"message","id":"a1","parentId":null}`+"\n")),
			`JSON that does not parse on its first line: starts like a pi session without a valid "session" header line (compact inspect names the line at fault)`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Detect(tt.path)
			if err == nil {
				t.Fatalf("Detect = %q, want an error", f.Name)
			}
			if want := tt.path + ": " + tt.want; err.Error() != want {
				t.Errorf("Detect error\n got %s\nwant %s", err, want)
			}
			var u *UnknownError
			if !errors.Is(err, ErrUnknownFormat) || !errors.As(err, &u) {
				t.Fatalf("Detect error %v is not an *UnknownError wrapping ErrUnknownFormat", err)
			}
			if u.MaybePi != tt.maybePi {
				t.Errorf("MaybePi = %v, want %v", u.MaybePi, tt.maybePi)
			}
		})
	}
}

// TestDetectUIMessagesBesideHistory: ui_messages.json with the history
// beside it is the Cline task, which ReadFile reads from either file.
func TestDetectUIMessagesBesideHistory(t *testing.T) {
	path := "./cline/testdata/xml-task/ui_messages.json"
	f, err := Detect(path)
	if err != nil || f.Name != "cline" {
		t.Fatalf("Detect = %q, %v; want cline", f.Name, err)
	}
	tr, err := f.Read(path, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Entries) == 0 {
		t.Error("no entries read")
	}
}

// FuzzDetectHead: any head is either detected or described in one line
// wrapping ErrUnknownFormat, without a panic.
func FuzzDetectHead(f *testing.F) {
	for _, s := range []string{"", "[", "{", "[{", `[{"ts":1,"type":"say"}]`, geminiStream, "\x00\xff", `{"a":1}` + "\n" + `{"b":2}`, "[1,2", `{"type":"session"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, head []byte) {
		if len(head) > HeadSize {
			head = head[:HeadSize]
		}
		_, err := DetectHead(head, "f")
		if err == nil {
			return
		}
		if !errors.Is(err, ErrUnknownFormat) || strings.ContainsAny(err.Error(), "\n\r") || !strings.HasPrefix(err.Error(), "f: ") {
			t.Fatalf("DetectHead error %q", err)
		}
	})
}
