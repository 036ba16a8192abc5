package claudecode

import (
	"fmt"

	"github.com/compactkit/compact/internal/jsonrec"
)

// record is one line of a transcript with the fields the reader routes
// on decoded.
type record struct {
	jsonrec.Record

	typ           string
	subtype       string
	uuid          string
	parent        string
	logicalParent string
	timestamp     string
	sidechain     bool
}

// decodeRecord decodes the members of one line the reader routes on.
func decodeRecord(line jsonrec.Record) (*record, error) {
	r := &record{Record: line}
	var err error
	get := func(key string, dst *string) {
		if err == nil {
			*dst, err = jsonrec.OptString(r.Fields, key)
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
	if r.sidechain, err = jsonrec.OptBool(r.Fields, "isSidechain"); err != nil {
		return nil, err
	}
	return r, nil
}
