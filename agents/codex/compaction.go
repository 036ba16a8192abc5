package codex

import (
	"encoding/json"
	"fmt"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
	"github.com/compactkit/compact/openai"
)

// compacted turns a compacted line into a compaction entry.
func (b *builder) compacted(r *record) error {
	b.close()
	p := r.payload
	summary, err := jsonrec.OptString(p, "message")
	if err != nil {
		return fmt.Errorf("field payload%w", jsonrec.Below(err))
	}
	c := &compact.Compaction{Summary: summary, Details: map[string]any{"source": Format}}
	if raw, ok := p["replacement_history"]; ok && !jsonrec.IsNull(raw) {
		var items []map[string]json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return fmt.Errorf("field payload.replacement_history: want an array, have %s", jsonrec.Abbrev(raw))
		}
		if summary == "" && len(items) > 0 {
			lastItem := items[len(items)-1]
			switch t, _ := jsonrec.OptString(lastItem, "type"); t {
			case "message":
				parts, _, err := openai.ResponsesContent(lastItem["content"])
				if err != nil {
					return fmt.Errorf("field payload.replacement_history[%d].content%w", len(items)-1, err)
				}
				m := compact.Message{Content: parts}
				c.Summary = m.Text()
			case "compaction", "compaction_summary":
				// The server's summary, encrypted: nothing to read.
				c.Details["encrypted"] = true
			}
		}
		c.Details["replacementHistory"] = plain(raw)
	}
	for k, v := range jsonrec.Extras(p, "message", "replacement_history") {
		c.Details[k] = plain(v)
	}
	if b.seen != nil {
		c.TokensBefore = b.seen.total
	}
	b.add(&compact.Entry{Kind: compact.KindCompaction, Compaction: c}, r)
	return nil
}
