package claudecode

import (
	"encoding/json"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
)

// compaction turns the summary record of a compaction into a compaction
// entry, with the metadata of its boundary record.
func (b *builder) compaction(r *record, summary string) error {
	c := &compact.Compaction{Summary: summary, Details: map[string]any{"source": Format}}
	boundary := b.boundaries[r.parent]
	if boundary == nil {
		boundary = b.lastBoundary
	}
	if boundary != nil {
		if meta, ok, err := jsonrec.OptObject(boundary.Fields, "compactMetadata"); err == nil && ok {
			if trigger, _ := jsonrec.OptString(meta, "trigger"); trigger != "" {
				c.Details["reason"], c.Details["trigger"] = reasonOf(trigger), trigger
			}
			c.TokensBefore, _ = jsonrec.OptInt(meta, "preTokens")
			c.TokensAfter, _ = jsonrec.OptInt(meta, "postTokens")
		}
		if boundary.uuid != "" {
			c.Details["boundaryUuid"] = boundary.uuid
		}
		b.lastBoundary = nil
	}
	// The summary record's own fields, as plain values.
	var rest map[string]any
	if raw, err := json.Marshal(jsonrec.Extras(r.Fields, "message")); err == nil {
		_ = json.Unmarshal(raw, &rest)
	}
	if len(rest) > 0 {
		c.Details["record"] = rest
	}
	it := &item{e: &compact.Entry{Kind: compact.KindCompaction, Timestamp: r.timestamp, Compaction: c},
		recs: []*record{r}, parentUUID: effectiveParent(r), alwaysMain: r.uuid == ""}
	b.add(it, r)
	return nil
}

// reasonOf maps the trigger of a compact_boundary to the compaction
// reason the other packages read: Claude Code's "auto" (it compacted on
// its own near the end of the window) is compact.ReasonThreshold,
// "manual" (/compact) compact.ReasonManual; another word is kept as is.
func reasonOf(trigger string) string {
	switch trigger {
	case "auto":
		return string(compact.ReasonThreshold)
	case "manual":
		return string(compact.ReasonManual)
	}
	return trigger
}
