package geminicli

import (
	"testing"

	"github.com/compactkit/compact/internal/testing/readertest"
)

// TestDetectStreamJSON: the stream-json output of a headless run is told
// apart from the chat recordings and from other agents' JSON Lines.
func TestDetectStreamJSON(t *testing.T) {
	readertest.CheckDetect(t, DetectStreamJSON, []readertest.Head{
		{"init first", `{"type":"init","timestamp":"2025-10-10T10:00:00.000Z","session_id":"c0ffee","model":"gemini-2.5-pro"}` + "\n", true},
		{"message first", `{"type":"message","timestamp":"t","role":"user","content":"hi"}` + "\n", true},
		{"tool_use first", `{"type":"tool_use","timestamp":"t","tool_name":"ls","tool_id":"1","parameters":{}}`, true},
		{"tool_result first", `{"type":"tool_result","timestamp":"t","tool_id":"1","status":"success","output":""}`, true},
		{"error first", `{"type":"error","timestamp":"t","severity":"error","message":"quota"}`, true},
		{"result first", `{"type":"result","timestamp":"t","status":"success","stats":{}}`, true},
		{"recording", readertest.File(t, "testdata/session-2026-03-27-readme.json"), false},
		{"jsonl recording", readertest.File(t, "testdata/session-2026-04-23T12-52-0ab84937.jsonl"), false},
		{"codex envelope", `{"timestamp":"t","type":"message","payload":{"role":"user"}}`, false},
		{"no timestamp", `{"type":"init","session_id":"c0ffee"}`, false},
		{"unknown event", `{"type":"thought","timestamp":"t","text":"x"}`, false},
		{"json output", `{"response":"hi","stats":{}}`, false},
	}, Detect)
}

// FuzzDetectStreamJSON: any head is judged without a panic.
func FuzzDetectStreamJSON(f *testing.F) {
	f.Add([]byte(`{"type":"init","timestamp":"t","session_id":"s"}`))
	f.Add([]byte(`{"type":"message"`))
	f.Fuzz(func(t *testing.T, head []byte) { DetectStreamJSON(head) })
}
