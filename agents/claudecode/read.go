package claudecode

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
)

// Format is the name of this format in compact.Transcript.Format and on
// the command line.
const Format = "claude-code"

// Read parses a whole Claude Code transcript held in memory; name is used
// in errors and warnings. A record that is not a JSON object, or whose
// fields have the wrong kind of value, is an error "name:LINE: field X:
// ..."; a last line cut short is a warning. Records of unknown types are
// kept as custom entries and counted in Transcript.Unknown.
func Read(data []byte, name string) (*compact.Transcript, error) {
	return jsonrec.ReadRecords(data, name, decodeRecord, newBuilder(name).build)
}

// ReadFile reads the transcript at path. Subagent transcripts in the
// <session>/subagents folder beside it are not merged (see SubagentFiles).
func ReadFile(path string) (*compact.Transcript, error) {
	return jsonrec.ReadFile(path, "claude-code", Read)
}

// SubagentFiles returns the subagent transcripts Claude Code wrote for the
// session file at path (<session>/subagents/agent-*.jsonl), sorted; none
// is not an error. Each is a conversation of its own, read with ReadFile.
func SubagentFiles(path string) ([]string, error) {
	dir := strings.TrimSuffix(path, filepath.Ext(path))
	files, err := filepath.Glob(filepath.Join(dir, "subagents", "agent-*.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("claude-code: %s: %w", path, err)
	}
	sort.Strings(files)
	return files, nil
}
