package codex

import (
	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
)

// Format is the name of this format in compact.Transcript.Format and on
// the command line.
const Format = "codex"

// Read parses a whole Codex rollout held in memory; name is used in
// errors and warnings. A line that is not a JSON object, or whose fields
// have the wrong kind of value, is an error "name:LINE: field X: ..."; a
// last line cut short is a warning. Lines of unknown types are kept as
// custom entries and counted in Transcript.Unknown.
func Read(data []byte, name string) (*compact.Transcript, error) {
	return jsonrec.ReadRecords(data, name, decodeRecord, newBuilder(name).build)
}

// ReadFile reads the rollout at path.
func ReadFile(path string) (*compact.Transcript, error) {
	return jsonrec.ReadFile(path, "codex", Read)
}
