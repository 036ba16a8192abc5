package geminicli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/compactkit/compact"
)

// compaction returns the entry of a compression: its summary is the text
// of the new messages written before the first kept one (Gemini CLI's
// <state_snapshot> and the model's acknowledgement), with their records
// in Details.
func (c *builder) compaction(comp *compression) *compact.Entry {
	var texts []string
	var recs []any
	ts := ""
	for _, r := range comp.summary {
		if ts == "" {
			ts = r.timestamp
		}
		if parts, err := decodeParts(r.fields["content"]); err == nil {
			for _, p := range parts {
				if q, ok := contentPart(p); ok && q.Type == compact.PartText && strings.TrimSpace(q.Text) != "" {
					texts = append(texts, q.Text)
				}
			}
		}
		var v any
		if json.Unmarshal(r.raw, &v) == nil {
			recs = append(recs, v)
		}
	}
	summary := strings.Join(texts, "\n\n")
	if summary == "" {
		summary = fmt.Sprintf("[Gemini CLI dropped %d messages from the history.]", comp.dropped)
	}
	cp := &compact.Compaction{Summary: summary,
		Details: map[string]any{"source": Format, "reason": "compression", "dropped": comp.dropped, "line": comp.line}}
	if len(recs) > 0 {
		cp.Details["summaryMessages"] = recs
	}
	if comp.firstKept != nil {
		cp.FirstKeptID = comp.firstKept.first
	}
	return &compact.Entry{ID: c.id(fmt.Sprintf("compression-%d", comp.line)), Kind: compact.KindCompaction, Timestamp: ts, Compaction: cp}
}
