package claudecode

import (
	"encoding/json"
	"fmt"

	"github.com/compactkit/compact/internal/jsonrec"
)

// record is one line of a transcript with the fields the reader routes
// on decoded; fields holds every member as stored.
type record struct {
	line   int
	raw    []byte
	fields map[string]json.RawMessage

	typ           string
	subtype       string
	uuid          string
	parent        string
	logicalParent string
	timestamp     string
	sidechain     bool
}

// parseRecords splits data into lines and decodes each non-empty one
// (jsonrec.Lines: a last line cut short is dropped with a warning, any
// other bad line is an error naming the line).
func parseRecords(data []byte, name string) (recs []*record, warnings []string, err error) {
	return jsonrec.Lines(data, name, decodeRecord)
}

// decodeRecord decodes one line.
func decodeRecord(line []byte, n int) (*record, error) {
	fields, err := jsonrec.LineObject(line)
	if err != nil {
		return nil, err
	}
	r := &record{line: n, raw: line, fields: fields}
	get := func(key string, dst *string) {
		if err == nil {
			*dst, err = jsonrec.OptString(fields, key)
		}
	}
	get("type", &r.typ)
	get("subtype", &r.subtype)
	get("uuid", &r.uuid)
	get("parentUuid", &r.parent)
	get("logicalParentUuid", &r.logicalParent)
	get("timestamp", &r.timestamp)
	if err != nil {
		return nil, err
	}
	if r.typ == "" {
		return nil, fmt.Errorf("field type: missing")
	}
	if r.sidechain, err = jsonrec.OptBool(fields, "isSidechain"); err != nil {
		return nil, err
	}
	return r, nil
}
