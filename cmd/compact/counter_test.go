package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInspectCounter: for an OpenAI model the messages after the last
// reported usage are counted with its tokenizer, and inspect says so; for
// other models they are estimated.
func TestInspectCounter(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(file, []byte(`{"type":"session","version":3,"id":"s1","timestamp":"2026-11-23T07:00:00.000Z","cwd":"/tmp"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-11-23T07:00:01.000Z","message":{"role":"user","content":"tiktoken is great!","timestamp":1}}
`), 0o644)
	c := newCLI(t)
	for _, tc := range []struct {
		model, counter, line string
		tokens               int
	}{
		{"gpt-4o", "o200k_base", "counted exactly with o200k_base", 0},
		{"gpt-4", "cl100k_base", "counted exactly with cl100k_base", 3 + 6},
		{"claude-sonnet-4-5", "estimate", "estimated", 5},
	} {
		out := c.ok("inspect", "--model", tc.model, file)
		contains(t, "inspect --model "+tc.model, out, tc.line)
		var rep struct {
			Context struct {
				Tokens  int    `json:"tokens"`
				Counter string `json:"counter"`
			} `json:"context"`
		}
		c.okJSON(&rep, "--json", "inspect", "--model", tc.model, file)
		if rep.Context.Counter != tc.counter || (tc.tokens > 0 && rep.Context.Tokens != tc.tokens) {
			t.Errorf("%s: counter %q, %d tokens; want %q, %d", tc.model, rep.Context.Counter, rep.Context.Tokens, tc.counter, tc.tokens)
		}
	}
}

// TestContextCounter: compact context counts the messages after the last
// usage report with the tokenizer of the session's OpenAI model, and
// estimates them for other models.
func TestContextCounter(t *testing.T) {
	write := func(model string) string {
		file := filepath.Join(t.TempDir(), "s.jsonl")
		os.WriteFile(file, []byte(`{"type":"session","version":3,"id":"s1","timestamp":"2026-11-23T07:00:00.000Z","cwd":"/tmp"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-11-23T07:00:01.000Z","message":{"role":"user","content":"hello","timestamp":1}}
{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-11-23T07:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hi"}],"provider":"openai","model":"`+model+`","usage":{"input":100,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":105},"stopReason":"stop","timestamp":2}}
{"type":"message","id":"a3","parentId":"a2","timestamp":"2026-11-23T07:00:03.000Z","message":{"role":"user","content":"tiktoken is great!","timestamp":3}}
`), 0o644)
		return file
	}
	c := newCLI(t)
	for _, tc := range []struct {
		model, counter string
		trailing       int
	}{
		{"gpt-4", "cl100k_base", 3 + 6},
		{"claude-sonnet-4-5", "estimate", 5},
	} {
		file := write(tc.model)
		var rep contextReport
		c.okJSON(&rep, "--json", "context", file)
		if rep.Counter != tc.counter || rep.Context.TrailingTokens != tc.trailing || rep.Context.Tokens != 105+tc.trailing {
			t.Errorf("%s: counter %q, context %+v; want %q and %d trailing tokens after 105", tc.model, rep.Counter, rep.Context, tc.counter, tc.trailing)
		}
		out := c.ok("context", file)
		if (tc.counter != "estimate") != strings.Contains(out, "("+tc.counter+" after the last usage report)") {
			t.Errorf("%s: the first line does not say how it counted: %s", tc.model, strings.SplitN(out, "\n", 2)[0])
		}
	}
}
