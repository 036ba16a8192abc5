package main

import (
	"os"
	"path/filepath"
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
