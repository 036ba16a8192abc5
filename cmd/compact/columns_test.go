package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// The tables of compact inspect keep their numbers under the headings
// whatever the length of a tool's or a role's name: an MCP tool's name,
// the compactionSummary role, a Cline tool such as attempt_completion.
func TestInspectColumnsAligned(t *testing.T) {
	withTool := func(tool string) string {
		var b strings.Builder
		b.WriteString(`{"type":"session","version":3,"id":"11111111-2222-4333-8444-555555555555","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/tmp"}` + "\n")
		b.WriteString(`{"type":"message","id":"a0000001","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"open a pull request","timestamp":1735689601000}}` + "\n")
		fmt.Fprintf(&b, `{"type":"message","id":"a0000002","parentId":"a0000001","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"t1","name":%q,"arguments":{}}],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":900,"output":100,"cacheRead":0,"cacheWrite":0,"totalTokens":1000},"stopReason":"toolUse","timestamp":1735689602000}}`+"\n", tool)
		fmt.Fprintf(&b, `{"type":"message","id":"a0000003","parentId":"a0000002","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"t1","toolName":%q,"content":[{"type":"text","text":"done"}],"isError":false,"timestamp":1735689603000}}`+"\n", tool)
		path := filepath.Join(t.TempDir(), "tool.jsonl")
		writeFile(t, path, b.String())
		return path
	}
	tests := []struct {
		name, file, row string
	}{
		{"MCP tool", withTool("mcp__github__create_pull_request_review"), "mcp__github__create_pull_request_review"},
		{"Cline tool", withTool("attempt_completion"), "attempt_completion"},
		{"short tool", withTool("bash"), "bash"},
		{"compaction summary role", fixture(t, "before-compaction.jsonl"), "compactionSummary"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := newCLI(t).ok("inspect", tc.file)
			found := false
			for _, table := range []string{"by role", "by tool"} {
				i := strings.Index(out, "\n"+table+" ")
				if i < 0 {
					t.Fatalf("no table %q in:\n%s", table, out)
				}
				lines := strings.Split(out[i+1:], "\n")
				head := utf8.RuneCountInString(lines[0])
				for _, l := range lines[1:] {
					if l == "" {
						break
					}
					found = found || strings.HasPrefix(l, "  "+tc.row+" ")
					if n := utf8.RuneCountInString(l); n != head {
						t.Errorf("%s: row %q is %d wide, the heading %q %d", table, l, n, lines[0], head)
					}
				}
			}
			if !found {
				t.Errorf("no row for %q in:\n%s", tc.row, out)
			}
		})
	}
}
