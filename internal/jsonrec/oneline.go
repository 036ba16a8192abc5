package jsonrec

import (
	"bytes"
	"encoding/json"

	"github.com/compactkit/compact"
)

// OneLine rewrites, in place, every raw JSON value of t that spans lines
// (custom entry data, message and part extras, tool call arguments) in
// its compact form. A pi session is JSON Lines and session.EncodeTranscript
// writes raw values as they are, so a value kept from a pretty-printed
// file (a .traj is written with indent=2) would otherwise break its line.
// Only white space between tokens is removed; the value is the same.
func OneLine(t *compact.Transcript) {
	for _, e := range t.Entries {
		if e.Meta != nil {
			e.Meta.Data = oneLine(e.Meta.Data)
		}
		m := e.Message
		if m == nil {
			continue
		}
		extrasOneLine(m.Extra)
		for i := range m.Content {
			p := &m.Content[i]
			extrasOneLine(p.Extra)
			if p.ToolCall != nil {
				p.ToolCall.Arguments = oneLine(p.ToolCall.Arguments)
			}
		}
	}
}

func extrasOneLine(m map[string]json.RawMessage) {
	for k, v := range m {
		m[k] = oneLine(v)
	}
}

func oneLine(raw json.RawMessage) json.RawMessage {
	if !bytes.ContainsAny(raw, "\r\n") {
		return raw
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}
