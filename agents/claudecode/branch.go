package claudecode

import (
	"fmt"

	"github.com/compactkit/compact"
)

// parentItem returns the item of its parent record when that comes
// before it, else nil.
func (b *builder) parentItem(it *item) *item {
	p := b.byUUID[it.parentUUID]
	if p == nil || p.index >= it.index {
		return nil
	}
	return p
}

// link decides the main line and sets every entry's parent (see the
// package doc, Branches), then the kept entry of each compaction.
func (b *builder) link(recs []*record) {
	eligible := func(r *record) bool { return r.uuid != "" && (!r.sidechain || b.sideAsMain) }
	byUUID := make(map[string]*record, len(recs))
	// A compact boundary whose logical parent was never written (auto
	// compactions do that) follows the record before it in the file.
	before := make(map[*record]*record)
	var leaf *record
	for _, r := range recs {
		if eligible(r) {
			if r.subtype == "compact_boundary" && r.parent == "" {
				before[r] = leaf
			}
			byUUID[r.uuid] = r
			leaf = r
		}
	}
	parentOf := func(r *record) *record {
		if p := byUUID[effectiveParent(r)]; p != nil {
			return p
		}
		return before[r]
	}
	marked := make(map[*record]bool)
	var root *record
	for r := leaf; r != nil && !marked[r]; r = parentOf(r) {
		marked[r] = true
		root = r
	}
	if root != nil {
		if pu := effectiveParent(root); pu != "" && parentOf(root) == nil {
			b.t.Warnings = append(b.t.Warnings, fmt.Sprintf("%s:%d: parent %q of the first record of the conversation is not in the file", b.name, root.Line, pu))
		}
	}
	for _, it := range b.items {
		on := it.alwaysMain
		for _, r := range it.recs {
			if marked[r] {
				on = true
			}
		}
		if p := b.parentItem(it); !on && it.resultOnly && p != nil && p.onMain {
			on = true
		}
		it.onMain = on
	}
	// Only the first entry of a transcript can be a root, so the root of
	// the main line moves to the front when an abandoned branch starts
	// before it; entries without a parent then hang from it.
	for i, it := range b.items {
		if it.onMain {
			if i > 0 {
				copy(b.items[1:i+1], b.items[:i])
				b.items[0] = it
				for j, x := range b.items {
					x.index = j
				}
			}
			break
		}
	}
	prevMain := ""
	if len(b.items) > 0 && b.items[0].onMain {
		prevMain = b.items[0].e.ID
	}
	for i, it := range b.items {
		switch p := b.parentItem(it); {
		case i == 0:
			it.e.ParentID = ""
		case it.onMain:
			it.e.ParentID = prevMain
			prevMain = it.e.ID
		case p != nil:
			it.e.ParentID = p.e.ID
		default:
			it.e.ParentID = prevMain
		}
	}
	for i, it := range b.items {
		if it.e.Kind != compact.KindCompaction {
			continue
		}
		for _, next := range b.items[i+1:] {
			if next.onMain {
				it.e.Compaction.FirstKeptID = next.e.ID
				break
			}
		}
	}
}
