package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestModelThroughAnotherProvider: a Cline task whose assistant messages
// name claude_4_5_opus with providerId "openai" (an OpenAI-compatible
// endpoint serving a Claude model) shows the model as Anthropic's, with
// its window, and says which road it took; it is not called an OpenAI
// model.
func TestModelThroughAnotherProvider(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "api_conversation_history.json"), `[
{"role":"user","content":[{"type":"text","text":"<task>\nFix the bug in main.go\n</task>"}]},
{"role":"assistant","content":[{"type":"text","text":"Reading it.\n<read_file>\n<path>main.go</path>\n</read_file>"}],"modelInfo":{"modelId":"claude_4_5_opus","providerId":"openai","mode":"act"}},
{"role":"user","content":[{"type":"text","text":"[read_file for 'main.go'] Result:"},{"type":"text","text":"package main"}]}
]`)
	c := newCLI(t)
	out := c.ok("inspect", dir)
	contains(t, "inspect", out,
		"model     claude_4_5_opus (anthropic, through openai, from the session)",
		"window    200,000 tokens (from the registry)")
	var r struct {
		Provider, Via string
		Window        int
	}
	c.okJSON(&r, "inspect", "--json", dir)
	if r.Provider != "anthropic" || r.Via != "openai" || r.Window != 200000 {
		t.Errorf("inspect --json: provider %q via %q window %d, want anthropic via openai, 200000", r.Provider, r.Via, r.Window)
	}

	// A session whose provider is the model's maker says nothing more.
	writeFile(t, filepath.Join(dir, "api_conversation_history.json"), strings.ReplaceAll(string(readFile(t, filepath.Join(dir, "api_conversation_history.json"))), `"providerId":"openai"`, `"providerId":"anthropic"`))
	out = c.ok("inspect", dir)
	contains(t, "inspect", out, "model     claude_4_5_opus (anthropic, from the session)")
}
