package geminicli

import (
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/readertest"
)

// The reader's tool calls and model messages match a plain scan of each
// real recording: the toolCalls of its gemini messages by name (a message
// the JSONL file writes again as it grows counted once, as last written).
func TestCountsMatchFile(t *testing.T) {
	files := []string{"session-2026-03-27-readme.json", "session-2026-04-23T12-52-0ab84937.jsonl"}
	readertest.RunCounts(t, ReadFile, files, func(t *testing.T, path string) readertest.Scan {
		var msgs []map[string]any
		if strings.HasSuffix(path, ".jsonl") {
			last, order := map[string]map[string]any{}, []string{}
			for _, r := range readertest.JSONLines(t, path) {
				id := readertest.Str(r["id"])
				if id == "" || r["type"] == nil {
					continue
				}
				if last[id] == nil {
					order = append(order, id)
				}
				last[id] = r
			}
			for _, id := range order {
				msgs = append(msgs, last[id])
			}
		} else {
			for _, m := range readertest.Arr(readertest.Obj(readertest.JSONFile(t, path))["messages"]) {
				msgs = append(msgs, readertest.Obj(m))
			}
		}
		calls, replies := map[string]int{}, 0
		for _, m := range msgs {
			if m["type"] != "gemini" {
				continue
			}
			replies++
			for _, c := range readertest.Arr(m["toolCalls"]) {
				calls[readertest.Str(readertest.Obj(c)["name"])]++
			}
		}
		return readertest.Scan{Calls: calls, Roles: map[compact.Role]int{compact.RoleAssistant: replies}}
	})
}
