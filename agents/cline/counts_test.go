package cline

import (
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/readertest"
)

// editTools are the tools of Cline and Roo Code that change a file.
var editTools = map[string]bool{"write_to_file": true, "replace_in_file": true, "apply_diff": true, "insert_content": true, "search_and_replace": true}

// editUseRe finds the path of each XML use of an editing tool.
var editUseRe = regexp.MustCompile(`<(?:write_to_file|replace_in_file|apply_diff|insert_content|search_and_replace)>\s*<path>([^<]*)</path>`)

// headerRe finds the tool name of an XML-protocol result header.
var headerRe = regexp.MustCompile(`^\[([A-Za-z0-9_:.-]+)(?: for [^\n]*?)?\] Result:`)

// The reader's tool calls and assistant messages match a plain scan of
// each task's api_conversation_history.json: native tool_use blocks by
// name, and the XML uses <tool>…</tool> written in assistant text for the
// tools the file's result headers name.
func TestCountsMatchFile(t *testing.T) {
	dirs := []string{"xml-task", "native-task", "roo-task", "real-roo-condensed", "real-roo-mixed-ops",
		"real-roo-2025-02", "real-cline-resume", "real-cline-todo"}
	readertest.RunCounts(t, ReadFile, dirs, func(t *testing.T, dir string) readertest.Scan {
		msgs := readertest.Arr(readertest.JSONFile(t, filepath.Join(dir, APIHistoryFile)))
		// The tools to look for: those the result headers name, and
		// the ones a task may end on before any header names them.
		tools := map[string]bool{"attempt_completion": true, "read_file": true, "write_to_file": true}
		for _, v := range msgs {
			m := readertest.Obj(v)
			if m["role"] != "user" {
				continue
			}
			for _, b := range readertest.Blocks(m["content"]) {
				if h := headerRe.FindStringSubmatch(readertest.Str(b["text"])); h != nil {
					tools[h[1]] = true
				}
			}
		}
		calls, assistants := map[string]int{}, 0
		modified := map[string]bool{}
		for _, v := range msgs {
			m := readertest.Obj(v)
			if m["role"] != "assistant" || m["isSummary"] == true || m["isTruncationMarker"] == true {
				continue
			}
			assistants++
			for _, b := range readertest.Blocks(m["content"]) {
				switch b["type"] {
				case "tool_use":
					calls[readertest.Str(b["name"])]++
					if editTools[readertest.Str(b["name"])] {
						modified[readertest.Str(readertest.Obj(b["input"])["path"])] = true
					}
				case "text":
					text := readertest.Str(b["text"])
					for tool := range tools {
						calls[tool] += strings.Count(text, "<"+tool+">")
					}
					for _, m := range editUseRe.FindAllStringSubmatch(text, -1) {
						modified[strings.TrimSpace(m[1])] = true
					}
				}
			}
		}
		for k, n := range calls {
			if n == 0 {
				delete(calls, k)
			}
		}
		var want []string
		for p := range modified {
			want = append(want, p)
		}
		sort.Strings(want)
		return readertest.Scan{Calls: calls, Roles: map[compact.Role]int{compact.RoleAssistant: assistants}, Check: func(t *testing.T, tr *compact.Transcript) {
			var ops compact.FileOps
			for _, e := range tr.Entries {
				if e.Message != nil {
					ops.AddMessage(e.Message)
				}
			}
			if _, got := ops.Lists(); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("modified files %q, the file's edits name %q", got, want)
			}
		}}
	})
}
