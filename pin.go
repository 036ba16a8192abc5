package compact

import (
	"context"
	"fmt"
	"strings"
)

// Pinned messages.
//
// A pinned message is never summarized away: when a compaction replaces
// the history before its kept part, the pinned messages of that history
// stay in the context word for word, right after the summary and in their
// order. The planner counts them first in the kept budget, and the cheap
// strategies never edit them (pinning a message a strategy had shortened
// shows it whole again).
//
// A pin is recorded as a label entry (pi's own "label" entry type, so pi
// reads and keeps it) whose label is PinLabel, or "pinned: L" when the
// entry already carried the label L; unpinning records the label L again
// (or clears it). Only label entries on the path count, so a pin belongs
// to the branch it was made on.
//
// A tool call and its results are one unit: pinning either pins the
// assistant message holding the call and every result of its calls, so
// the context never holds a result without its call.

// PinLabel is the label that marks an entry as pinned.
const PinLabel = "pinned"

// pinPrefix starts the label of a pinned entry that had a label before.
const pinPrefix = PinLabel + ": "

// IsPinLabel reports whether label marks its entry as pinned.
func IsPinLabel(label string) bool {
	return label == PinLabel || strings.HasPrefix(label, pinPrefix)
}

// pinnedLabel is the label that pins an entry whose label is old.
func pinnedLabel(old string) string {
	if old == "" || IsPinLabel(old) {
		return PinLabel
	}
	return pinPrefix + old
}

// unpinnedLabel is the label an entry gets back when unpinned.
func unpinnedLabel(cur string) string {
	return strings.TrimPrefix(strings.TrimPrefix(cur, PinLabel), ": ")
}

// Labels returns the label of every labelled entry as the label entries
// on path set them, the later entry winning; an empty label clears.
func Labels(path []*Entry) map[string]string {
	labels := map[string]string{}
	for _, e := range path {
		if e.Kind != KindLabel {
			continue
		}
		m := e.Metadata()
		if m.Label == "" {
			delete(labels, m.TargetID)
		} else {
			labels[m.TargetID] = m.Label
		}
	}
	return labels
}

// Pinned returns the ids of the entries on path that are pinned, tool
// calls and their results counted together (see PinGroup); nil when none
// is.
func Pinned(path []*Entry) map[string]bool {
	return pinnedFrom(path, Labels(path))
}

// pinnedFrom expands the pin labels among labels into their groups.
func pinnedFrom(path []*Entry, labels map[string]string) map[string]bool {
	var set map[string]bool
	var index map[string]int
	for target, label := range labels {
		if !IsPinLabel(label) {
			continue
		}
		if index == nil {
			index = make(map[string]int, len(path))
			for i, e := range path {
				index[e.ID] = i
			}
			set = map[string]bool{}
		}
		i, ok := index[target]
		if !ok || !path[i].IsContextMessage() {
			continue
		}
		for _, j := range pinGroup(path, i) {
			set[path[j].ID] = true
		}
	}
	return set
}

// PinGroup returns the ids of the entries pinned together with the entry
// id on path, in path order: the entry itself, or, for an assistant
// message with tool calls or a tool result, the assistant message and the
// results of all its calls. It fails with an error wrapping ErrNoEntry
// when id is not on path, and ErrNotMessage when the entry puts no
// message into the context.
func PinGroup(path []*Entry, id string) ([]string, error) {
	for i, e := range path {
		if e.ID != id {
			continue
		}
		if !e.IsContextMessage() {
			return nil, fmt.Errorf("entry %s is a %s entry: %w", id, e.Kind, ErrNotMessage)
		}
		g := pinGroup(path, i)
		ids := make([]string, len(g))
		for k, j := range g {
			ids[k] = path[j].ID
		}
		return ids, nil
	}
	return nil, fmt.Errorf("entry %q is not on the current branch: %w", id, ErrNoEntry)
}

// pinGroup returns the path indices of the group of the context message
// at index i.
func pinGroup(path []*Entry, i int) []int {
	m := path[i].Message
	call := i
	if m.Role == RoleToolResult {
		// The assistant message holding the call, before the result.
		call = -1
		for j := i - 1; j >= 0 && call < 0; j-- {
			e := path[j]
			if !e.IsContextMessage() || e.Message.Role != RoleAssistant {
				continue
			}
			for _, tc := range e.Message.ToolCalls() {
				if tc.ID == m.ToolCallID {
					call = j
					break
				}
			}
		}
		if call < 0 {
			return []int{i} // an orphan result: it stands alone
		}
	}
	calls := path[call].Message.ToolCalls()
	if path[call].Message.Role != RoleAssistant || len(calls) == 0 {
		return []int{i}
	}
	ids := make(map[string]bool, len(calls))
	for _, tc := range calls {
		ids[tc.ID] = true
	}
	group := []int{call}
	for j := call + 1; j < len(path); j++ {
		e := path[j]
		if !e.IsContextMessage() {
			continue
		}
		if e.Message.Role != RoleToolResult {
			break
		}
		if ids[e.Message.ToolCallID] {
			group = append(group, j)
		}
	}
	return group
}

// Pin pins the message entry id of log's current path, with its tool
// call or results (see PinGroup), by appending one label entry. Pinning
// a pinned entry writes nothing.
func Pin(ctx context.Context, log Log, id string) error {
	path := log.Path()
	if _, err := PinGroup(path, id); err != nil {
		return err
	}
	labels := Labels(path)
	if IsPinLabel(labels[id]) {
		return nil
	}
	return log.Append(ctx, &Entry{Kind: KindLabel, Meta: &EntryMeta{TargetID: id, Label: pinnedLabel(labels[id])}})
}

// Unpin undoes the pins that hold the entry id of log's current path: for
// each entry of its group carrying a pin label, it appends a label entry
// giving back the label the entry had before (or clearing it). It reports
// whether anything was pinned.
func Unpin(ctx context.Context, log Log, id string) (bool, error) {
	path := log.Path()
	group, err := PinGroup(path, id)
	if err != nil {
		return false, err
	}
	labels := Labels(path)
	any := false
	for _, g := range group {
		if !IsPinLabel(labels[g]) {
			continue
		}
		any = true
		if err := log.Append(ctx, &Entry{Kind: KindLabel, Meta: &EntryMeta{TargetID: g, Label: unpinnedLabel(labels[g])}}); err != nil {
			return false, err
		}
	}
	return any, nil
}
