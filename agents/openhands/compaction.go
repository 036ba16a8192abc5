package openhands

import (
	"encoding/json"
	"fmt"

	"github.com/compactkit/compact"
)

// openCompaction is a compaction whose first kept entry is resolved once
// every entry is known: the first entry after event id after.
type openCompaction struct {
	entry *compact.Entry
	after int64
	index int // entry index of the compaction
}

// condensation maps a condensation action onto a compaction entry.
func (c *builder) condensation(ev *event) error {
	var args struct {
		IDs     []int64 `json:"forgotten_event_ids"`
		Start   *int64  `json:"forgotten_events_start_id"`
		End     *int64  `json:"forgotten_events_end_id"`
		Summary *string `json:"summary"`
		Offset  *int    `json:"summary_offset"`
	}
	if err := json.Unmarshal(ev.f["args"], &args); err != nil {
		return fmt.Errorf(".args: %v", err)
	}
	details := map[string]any{"source": Format}
	last := int64(-1)
	switch {
	case args.IDs != nil:
		for _, id := range args.IDs {
			last = max(last, id)
		}
		details["forgottenEventIds"] = args.IDs
	case args.Start != nil && args.End != nil:
		last = *args.End
		details["forgottenEventsStartId"] = *args.Start
		details["forgottenEventsEndId"] = *args.End
	default:
		return fmt.Errorf(".args: neither forgotten_event_ids nor forgotten_events_start_id and _end_id")
	}
	if args.Offset != nil {
		details["summaryOffset"] = *args.Offset
	}
	summary := ""
	if args.Summary != nil {
		summary = *args.Summary
	}
	c.compaction(ev, summary, last, details)
	return nil
}

// compaction appends a compaction entry whose first kept entry is the
// first one after event id after (-1: the first after the compaction).
func (c *builder) compaction(ev *event, summary string, after int64, details map[string]any) {
	comp := &compact.Compaction{Summary: summary, Details: details}
	if c.lastUsage != nil {
		comp.TokensBefore = c.lastUsage.ContextTokens()
	}
	e := &compact.Entry{Kind: compact.KindCompaction, Compaction: comp}
	c.add(ev, e)
	if after < 0 && ev.hasID {
		after = ev.id
	}
	c.compactions = append(c.compactions, &openCompaction{entry: e, after: after, index: len(c.t.Entries) - 1})
}

// resolveCompactions sets each compaction's FirstKeptID: the first
// message entry, in file order, of an event after the last forgotten
// one.
func (c *builder) resolveCompactions() {
	if len(c.compactions) == 0 {
		return
	}
	byEntry := make(map[string]int64, len(c.ids))
	for evID, entryID := range c.ids {
		byEntry[entryID] = evID
	}
	for _, oc := range c.compactions {
		for i, e := range c.t.Entries {
			evID, ok := byEntry[e.ID]
			if !ok || evID <= oc.after || i == oc.index || !e.IsContextMessage() {
				continue
			}
			oc.entry.Compaction.FirstKeptID = e.ID
			break
		}
	}
}
