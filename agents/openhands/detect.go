package openhands

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"

	"github.com/compactkit/compact/internal/jsonrec"
)

// Detect reports whether head, the first bytes of a file (possibly cut
// anywhere), is an OpenHands event stream: a JSON array whose first
// element is an event, or a single event (one file of a session's events
// folder), or an evaluation or resolver output.jsonl (DetectOutput). An
// event is an object with an "action" or "observation" and a "source" or
// "id"; a head cut before those keys counts when it starts with the id,
// timestamp and source that begin every event.
func Detect(head []byte) bool {
	if DetectOutput(head) {
		return true
	}
	head = bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
	if len(head) > 0 && head[0] == '[' {
		head = bytes.TrimLeft(head[1:], " \t\r\n")
	}
	var seen []string
	kind, other := false, false
	jsonrec.Keys(head, func(key string, first byte) bool {
		switch key {
		case "action", "observation":
			kind = first == '"'
		case "role", "type", "kind", "messages", "history", "trajectory":
			other = true
			return false
		}
		seen = append(seen, key)
		return true
	})
	if other {
		return false
	}
	has := func(k string) bool {
		for _, s := range seen {
			if s == k {
				return true
			}
		}
		return false
	}
	if kind {
		return has("source") || has("id")
	}
	// Cut before the action or observation key: the keys every event
	// starts with, in their order, and an object that does not end.
	var whole json.RawMessage
	complete := json.NewDecoder(bytes.NewReader(head)).Decode(&whole) == nil
	return !complete && len(seen) >= 3 && seen[0] == "id" && seen[1] == "timestamp" && seen[2] == "source"
}

// DetectDir reports whether the folder at path is a session's events
// folder, or a session folder holding one: a folder with at least one
// numbered event file (<n>.json) that Detect accepts. ReadFile reads
// such a folder.
func DetectDir(path string) bool {
	if sub := filepath.Join(path, "events"); isDir(sub) {
		path = sub
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if e.IsDir() || !isEventFile(e.Name()) {
			continue
		}
		f, err := os.Open(filepath.Join(path, e.Name()))
		if err != nil {
			return false
		}
		head := make([]byte, 64<<10)
		n, _ := io.ReadFull(f, head)
		f.Close()
		return Detect(head[:n])
	}
	return false
}

// DetectOutput reports whether head, the first bytes of a file (up to 64
// KiB, possibly cut anywhere), is the output.jsonl of an OpenHands
// evaluation or resolver run: JSON Lines whose first line is an object
// that starts, in the order OpenHands writes them, with instance_id then
// test_result (an evaluation's EvalOutput), or with issue then
// issue_type (a resolver's ResolverOutput). Only the keys are read, so a
// first line cut inside a long value is judged by the keys before the
// cut.
func DetectOutput(head []byte) bool {
	head = bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
	var keys []string
	jsonrec.Keys(head, func(key string, _ byte) bool {
		keys = append(keys, key)
		return len(keys) < 2
	})
	if len(keys) < 2 {
		return false
	}
	return keys[0] == "instance_id" && keys[1] == "test_result" ||
		keys[0] == "issue" && keys[1] == "issue_type"
}
