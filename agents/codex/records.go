package codex

import (
	"encoding/json"
	"fmt"

	"github.com/compactkit/compact/internal/jsonrec"
)

// record is one line of a rollout: its type, timestamp and payload
// decoded.
type record struct {
	jsonrec.Record

	typ       string
	timestamp string
	// payload is the payload object; for the bare lines of early
	// rollouts it is the line itself.
	payload map[string]json.RawMessage
	// ptype is payload.type.
	ptype string
}

// decodeRecord decodes the envelope of one line.
func decodeRecord(line jsonrec.Record) (*record, error) {
	r := &record{Record: line}
	fields := r.Fields
	var err error
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
