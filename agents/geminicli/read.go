package geminicli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
)

// Format is the format name of this package's transcripts.
const Format = "gemini-cli"

// Read parses a Gemini CLI chat recording (session-*.jsonl, or the older
// session-*.json) or checkpoint (checkpoint-*.json) held in memory. name
// is used in errors and warnings.
func Read(data []byte, name string) (*compact.Transcript, error) {
	t, err := read(data, name)
	if err != nil {
		return nil, err
	}
	// Extras named as a pi field are kept as "gemini-cli.<name>".
	jsonrec.SafeExtras(t, Format)
	return t, nil
}

func read(data []byte, name string) (*compact.Transcript, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("%s:1: empty file", name)
	}
	if trimmed[0] == '[' {
		return readCheckpoint(data, name)
	}
	if trimmed[0] != '{' {
		return nil, fmt.Errorf("%s:1: not a JSON object or array", name)
	}
	f := newFold(name)
	if json.Valid(trimmed) {
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(trimmed, &probe); err == nil {
			if _, ok := probe["history"]; ok {
				if _, rec := probe["sessionId"]; !rec {
					return readCheckpoint(data, name)
				}
			}
		}
		if err := f.readLegacy(data); err != nil {
			return nil, err
		}
	} else if err := f.readJSONL(data); err != nil {
		return nil, err
	}
	return build(f), nil
}

// ReadFile reads the recording or checkpoint at path. A file that records
// no start time (a checkpoint) takes its modification time.
func ReadFile(path string) (*compact.Transcript, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := Read(data, path)
	if err != nil {
		return nil, err
	}
	if t.Timestamp == "" {
		if fi, err := os.Stat(path); err == nil {
			t.Timestamp = jsonrec.Stamp(fi.ModTime())
		}
	}
	return t, nil
}
