package codex

import (
	"encoding/json"
	"fmt"

	"github.com/compactkit/compact/internal/jsonrec"
)

// record is one line of a rollout: its type, timestamp and payload
// decoded, every member kept as stored.
type record struct {
	line   int
	raw    []byte
	fields map[string]json.RawMessage

	typ       string
	timestamp string
	// payload is the payload object; for the bare lines of early
	// rollouts it is the line itself.
	payload map[string]json.RawMessage
	// ptype is payload.type.
	ptype string
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
	if r.typ, err = jsonrec.OptString(fields, "type"); err != nil {
		return nil, err
	}
	if r.timestamp, err = jsonrec.OptString(fields, "timestamp"); err != nil {
		return nil, err
	}
	if _, ok := fields["payload"]; ok {
		p, ok, err := jsonrec.OptObject(fields, "payload")
		if err != nil {
			return nil, err
		}
		if !ok {
			p = map[string]json.RawMessage{}
		}
		r.payload = p
		if r.ptype, err = jsonrec.OptString(p, "type"); err != nil {
			return nil, fmt.Errorf("field payload%w", jsonrec.Below(err))
		}
		return r, nil
	}
	// An early rollout's bare line: the item is the line.
	r.payload, r.ptype = fields, r.typ
	return r, nil
}
