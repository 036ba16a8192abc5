package session

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

func intp(n int) *int { return &n }

func raw(s string) json.RawMessage { return json.RawMessage(s) }

// Messages of every role encode to JSON that reads back, from a session
// file, as an equal Message: directly and through Append.
func TestEncodeMessageRoundTrip(t *testing.T) {
	text := func(s string) compact.Part { return compact.Part{Type: compact.PartText, Text: s} }
	cases := []struct {
		name string
		msg  *compact.Message
		want *compact.Message // nil: msg itself
		// has lists substrings the JSON must contain.
		has []string
	}{
		{"user text", &compact.Message{Role: compact.RoleUser, Content: []compact.Part{text("hello")}, Timestamp: 1735689600000},
			nil, []string{`"role":"user"`, `"content":[{"type":"text","text":"hello"}]`, `"timestamp":1735689600000`}},
		{"user text and image", &compact.Message{Role: compact.RoleUser, Content: []compact.Part{text("look"),
			{Type: compact.PartImage, Image: &compact.Image{MimeType: "image/png", Data: "iVBORw0KGgo="}}}, Timestamp: 2},
			nil, []string{`{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}`}},
		{"user without content or timestamp", &compact.Message{Role: compact.RoleUser}, nil, []string{`"content":[]`}},
		{"characters JSON must not mangle", &compact.Message{Role: compact.RoleUser,
			Content: []compact.Part{text("<a href=\"x\">&</a>\n\ttab é 🙂 \u2028 \\")}},
			nil, []string{`<a href=\"x\">&</a>\n\ttab é 🙂`}},
		{"assistant", &compact.Message{Role: compact.RoleAssistant, Content: []compact.Part{
			{Type: compact.PartThinking, Thinking: "let me think"},
			text("I will read it."),
			{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: "toolu_1", Name: "read", Arguments: raw(`{"path":"a.go","limit":10}`)}},
		}, Usage: &compact.Usage{Input: 100, Output: 20, CacheRead: 5000, CacheWrite: 30, Total: 5150},
			StopReason: compact.StopToolUse, Provider: "anthropic", Model: "claude-opus-4-5", Timestamp: 3},
			nil, []string{`"usage":{"input":100,"output":20,"cacheRead":5000,"cacheWrite":30,"totalTokens":5150}`, `"stopReason":"toolUse"`,
				`{"type":"toolCall","id":"toolu_1","name":"read","arguments":{"path":"a.go","limit":10}}`}},
		{"assistant error", &compact.Message{Role: compact.RoleAssistant, StopReason: compact.StopError, Provider: "openai", Model: "gpt-5", Usage: &compact.Usage{}, Meta: &compact.MessageMeta{ErrorMessage: "overloaded"}},
			nil, []string{`"errorMessage":"overloaded"`, `"content":[]`}},
		{"assistant with stored extras", &compact.Message{Role: compact.RoleAssistant, Content: []compact.Part{
			{Type: compact.PartThinking, Thinking: "t", Extra: map[string]json.RawMessage{"thinkingSignature": raw(`"c2ln"`)}},
			{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: "c", Name: "bash", Arguments: raw(`{}`)},
				Extra: map[string]json.RawMessage{"partialJson": raw(`"{}"`)}},
		}, Usage: &compact.Usage{Input: 1, Output: 2, Total: 3}, StopReason: compact.StopEnd, Model: "m", Provider: "p",
			Extra: map[string]json.RawMessage{"api": raw(`"anthropic-messages"`),
				"usage": raw(`{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"total":0.01}}`)}},
			// A usage kept in Extra (as before Usage.Stored) is written,
			// and read back into Usage.Stored.
			&compact.Message{Role: compact.RoleAssistant, Content: []compact.Part{
				{Type: compact.PartThinking, Thinking: "t", Extra: map[string]json.RawMessage{"thinkingSignature": raw(`"c2ln"`)}},
				{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: "c", Name: "bash", Arguments: raw(`{}`)},
					Extra: map[string]json.RawMessage{"partialJson": raw(`"{}"`)}},
			}, Usage: &compact.Usage{Input: 1, Output: 2, Total: 3,
				Stored: `{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"total":0.01}}`},
				StopReason: compact.StopEnd, Model: "m", Provider: "p",
				Extra: map[string]json.RawMessage{"api": raw(`"anthropic-messages"`)}},
			[]string{`"api":"anthropic-messages"`, `"cost":{"total":0.01}`, `"thinkingSignature":"c2ln"`}},
		{"assistant with a stored usage", &compact.Message{Role: compact.RoleAssistant, Content: []compact.Part{text("x")},
			Usage: &compact.Usage{Input: 5, Output: 6, Total: 11,
				Stored: `{"input":5,"output":6,"cacheRead":0,"cacheWrite":0,"totalTokens":11,"cost":{"input":0.5,"total":1}}`},
			StopReason: compact.StopEnd, Model: "m", Provider: "p"},
			nil, []string{`"cost":{"input":0.5,"total":1}`}},
		{"assistant whose stored usage no longer agrees", &compact.Message{Role: compact.RoleAssistant, Content: []compact.Part{text("x")},
			Usage: &compact.Usage{Input: 7, Output: 6, Total: 13,
				Stored: `{"input":5,"output":6,"cacheRead":0,"cacheWrite":0,"totalTokens":11,"cost":{"input":0.5,"total":1}}`},
			StopReason: compact.StopEnd, Model: "m", Provider: "p"},
			&compact.Message{Role: compact.RoleAssistant, Content: []compact.Part{text("x")},
				Usage: &compact.Usage{Input: 7, Output: 6, Total: 13}, StopReason: compact.StopEnd, Model: "m", Provider: "p"},
			[]string{`"usage":{"input":7,"output":6,"cacheRead":0,"cacheWrite":0,"totalTokens":13}`}},
		{"assistant tool call without arguments", &compact.Message{Role: compact.RoleAssistant, Content: []compact.Part{
			{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: "c", Name: "ls"}}}},
			&compact.Message{Role: compact.RoleAssistant, Content: []compact.Part{
				{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: "c", Name: "ls", Arguments: raw(`{}`)}}}},
			[]string{`"arguments":{}`}},
		{"tool result", &compact.Message{Role: compact.RoleToolResult, ToolCallID: "toolu_1", ToolName: "bash",
			Content: []compact.Part{text("exit 1")}, IsError: true, Timestamp: 4,
			Meta: &compact.MessageMeta{Details: raw(`{"exitCode":1,"truncation":null}`)}},
			nil, []string{`"toolCallId":"toolu_1"`, `"content":[{"type":"text","text":"exit 1"}],"details":{"exitCode":1,"truncation":null},"isError":true`}},
		// Details kept in Extra, as messages built before
		// MessageMeta.Details held them, are written and read back into
		// Details.
		{"tool result with details in Extra", &compact.Message{Role: compact.RoleToolResult, ToolCallID: "toolu_1", ToolName: "bash",
			Content: []compact.Part{text("exit 1")}, Extra: map[string]json.RawMessage{"details": raw(`{"exitCode":1}`)}},
			&compact.Message{Role: compact.RoleToolResult, ToolCallID: "toolu_1", ToolName: "bash",
				Content: []compact.Part{text("exit 1")}, Meta: &compact.MessageMeta{Details: raw(`{"exitCode":1}`)}},
			[]string{`"details":{"exitCode":1}`}},
		{"tool result ok", &compact.Message{Role: compact.RoleToolResult, ToolCallID: "t2", ToolName: "read",
			Content: []compact.Part{text("file body"), {Type: compact.PartImage, Image: &compact.Image{MimeType: "image/jpeg", Data: "/9j/"}}}},
			nil, []string{`"isError":false`}},
		{"bash", &compact.Message{Role: compact.RoleBash, Timestamp: 5, Meta: &compact.MessageMeta{Command: "go test ./...", Output: "ok", ExitCode: intp(0)}},
			nil, []string{`"command":"go test ./..."`, `"exitCode":0`, `"cancelled":false`, `"truncated":false`}},
		{"bash cancelled, no exit code, excluded", &compact.Message{Role: compact.RoleBash, Meta: &compact.MessageMeta{Command: "sleep 9", Cancelled: true, ExcludeFromContext: true}},
			nil, []string{`"exitCode":null`, `"cancelled":true`, `"excludeFromContext":true`}},
		{"bash with stored extras", &compact.Message{Role: compact.RoleBash, Extra: map[string]json.RawMessage{"truncated": raw(`true`), "fullOutputPath": raw(`"/tmp/out.txt"`)}, Meta: &compact.MessageMeta{Command: "cat big", Output: "…", ExitCode: intp(2)}},
			nil, []string{`"truncated":true`, `"fullOutputPath":"/tmp/out.txt"`}},
		{"custom", &compact.Message{Role: compact.RoleCustom, Content: []compact.Part{text("remember")}, Timestamp: 6, Meta: &compact.MessageMeta{CustomType: "reminder"}},
			nil, []string{`"customType":"reminder"`, `"display":true`}},
		{"custom hidden with details", &compact.Message{Role: compact.RoleCustom, Content: []compact.Part{text("y")}, Extra: map[string]json.RawMessage{"display": raw(`false`), "details": raw(`{"a":[1]}`)}, Meta: &compact.MessageMeta{CustomType: "x"}},
			nil, []string{`"display":false`, `"details":{"a":[1]}`}},
		{"compaction summary role", compact.TextMessage(compact.RoleCompactionSummary, "summary text"), nil, []string{`"role":"compactionSummary"`}},
		{"branch summary role", compact.TextMessage(compact.RoleBranchSummary, "branch text"), nil, []string{`"role":"branchSummary"`}},
		{"unknown part type", &compact.Message{Role: compact.RoleAssistant, Content: []compact.Part{
			{Type: "redacted_thinking", Extra: map[string]json.RawMessage{"data": raw(`"opaque"`)}},
			{Type: "citation", Text: "cited", Extra: map[string]json.RawMessage{"url": raw(`"https://example.com"`)}}}},
			nil, []string{`{"type":"redacted_thinking","data":"opaque"}`, `{"type":"citation","text":"cited","url":"https://example.com"}`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := c.want
			if want == nil {
				want = c.msg
			}
			enc, err := EncodeMessage(c.msg)
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(enc) {
				t.Fatalf("invalid JSON: %s", enc)
			}
			for _, h := range c.has {
				if !strings.Contains(string(enc), h) {
					t.Errorf("JSON lacks %s:\n%s", h, enc)
				}
			}
			line := `{"type":"message","id":"00000001","parentId":null,"timestamp":"t","message":` + string(enc) + `}`
			s, err := Read(strings.NewReader(v3Header+"\n"+line+"\n"), "synthetic", Options{})
			if err != nil {
				t.Fatalf("Read: %v\n%s", err, enc)
			}
			// Loading leaves estimates to their first use. Both are
			// computed here, so the comparison checks that the message
			// read back estimates as the one written.
			want.Tokens()
			if got := s.Entries()[0].Message; got.Tokens() < 0 || !reflect.DeepEqual(got, want) {
				t.Errorf("read back\n got %#v\nwant %#v\nJSON %s", got, want, enc)
			}

			// The same through Append and a re-read of the file.
			p := writeSession(t, v3Header)
			fs := mustOpen(t, p, Options{})
			e, err := fs.AppendMessage(bg, c.msg)
			if err != nil {
				t.Fatal(err)
			}
			if got := mustOpen(t, p, Options{}).Entry(e.ID).Message; got.Tokens() < 0 || !reflect.DeepEqual(got, want) {
				t.Errorf("appended and re-read\n got %#v\nwant %#v", got, want)
			}
		})
	}
}

// Messages that cannot be written are refused, not written half-way.
func TestEncodeMessageErrors(t *testing.T) {
	cases := []struct {
		name string
		msg  *compact.Message
		want string
	}{
		{"tool call part without call", &compact.Message{Role: compact.RoleAssistant, Content: []compact.Part{{Type: compact.PartToolCall}}}, "without a tool call"},
		{"invalid arguments", &compact.Message{Role: compact.RoleAssistant, Content: []compact.Part{
			{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: "c", Name: "n", Arguments: raw(`{"a":`)}}}}, "arguments"},
		{"invalid extra", &compact.Message{Role: compact.RoleUser, Extra: map[string]json.RawMessage{"x": raw(`{`)}}, "field x"},
		{"invalid part extra", &compact.Message{Role: compact.RoleUser, Content: []compact.Part{
			{Type: compact.PartText, Text: "a", Extra: map[string]json.RawMessage{"y": raw(`nope`)}}}}, "field y"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if enc, err := EncodeMessage(c.msg); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("EncodeMessage = %s, %v; want an error mentioning %q", enc, err, c.want)
			}
		})
	}
}
