package session

import (
	"cmp"
	"fmt"
	"slices"
	"unsafe"
)

// This file migrates a session read from an older format version to the
// current one in memory (the file itself is never rewritten here).

// v1Ref is a version 1 entry waiting for its id: its record and its
// position in the file.
type v1Ref struct {
	rec   *record
	index int
}

// migrate brings version 1 and 2 entries to version 3 in memory: ids and
// parent links for entries that have none, firstKeptEntryIndex resolved to
// an id, and the hookMessage role renamed (done while decoding).
//
// Ids given to version 1 entries are derived from the session id and the
// entry's position, so every read of the file gives the same ids and an
// entry appended later can refer to them.
func (s *Session) migrate() error {
	// Each step applies only to the versions pi migrates with it: ids,
	// parent links and firstKeptEntryIndex for version 1, the hookMessage
	// role for versions 1 and 2. Newer files are left as stored, so that
	// writing them back gives the same bytes.
	for _, r := range s.records {
		if s.header.Version >= 2 {
			r.assignedParent = false
			r.keptIndex = false
		}
		if s.header.Version >= CurrentVersion {
			r.hookRole = false
		}
	}
	if s.header.Version >= 2 {
		s.v1Index = nil
		return nil
	}
	var taken idSet
	missing := 0
	for _, r := range s.records {
		if r.entry.ID == "" {
			missing++
			continue
		}
		if taken.stored == nil {
			taken.stored = make(map[string]bool)
		}
		taken.stored[r.entry.ID] = true
	}
	taken.derived = newSet32(missing)
	// The derived ids share one buffer, written once and never again.
	var ids []byte
	prefix := idPrefix(s.header.ID)
	prev := ""
	for _, r := range s.records {
		e := r.entry
		if e.ID == "" {
			if cap(ids)-len(ids) < 8 {
				ids = make([]byte, 0, 8*len(s.records))
			}
			id, v := derivedID(prefix, r.fileIndex, &taken)
			n := len(ids)
			ids = append(ids, id[:]...)
			e.ID = unsafe.String(&ids[n], 8)
			taken.derived.add(v)
			r.assignedID = true
		}
		if r.assignedParent {
			e.ParentID = prev
		}
		prev = e.ID
	}
	for _, ref := range s.v1Index {
		// Records read from the file are in file index order.
		i, found := slices.BinarySearchFunc(s.records, ref.index, func(r *record, index int) int { return cmp.Compare(r.fileIndex, index) })
		if !found {
			return &LineError{File: s.name, Line: ref.rec.line,
				Err: fmt.Errorf("%w: field firstKeptEntryIndex: %d names no entry", ErrMalformed, ref.index)}
		}
		ref.rec.entry.Compaction.FirstKeptID = s.records[i].entry.ID
	}
	s.v1 = true
	return nil
}
