package session

import (
	"fmt"
	"strconv"

	"github.com/compactkit/compact"
)

// This file indexes a session's entries: ids derived for entries that
// have none, the parent of each entry, and the checks that the tree has
// no cycle.

// FNV-1a, which derivedID hashes with.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// idPrefix returns the state of derivedID's hash after the session id and
// the zero byte that follows it, the same for every entry of a session.
func idPrefix(sessionID string) uint64 {
	h := uint64(fnvOffset)
	for i := 0; i < len(sessionID); i++ {
		h = (h ^ uint64(sessionID[i])) * fnvPrime
	}
	return h * fnvPrime // the zero byte
}

// idSet is the set of ids that migrate has met: the ids stored in the
// file, by string (a version 1 file, the only kind migrate gives ids to,
// normally stores none), and the ids derived so far, by the number their
// eight hex digits spell, which hashes faster than the string.
type idSet struct {
	stored  map[string]bool
	derived set32
}

// has reports whether the derived id id, whose digits spell v, is taken.
func (t *idSet) has(id [8]byte, v uint32) bool {
	return t.derived.has(v) || t.stored[string(id[:])]
}

// set32 is a set of hash values: open addressing in a table of at least
// twice as many slots as values, indexed by the value's low bits (the
// values are hashes already), with linear probing. A map[uint32] did
// the same at twice the cost, half of it making and clearing its table.
type set32 struct {
	slots []uint32 // a value, or empty
	zero  bool     // whether 0, which marks an empty slot, is in the set
	n     int
}

const empty32 = 0

// newSet32 returns a set with room for n values before it grows.
func newSet32(n int) set32 {
	size := 16
	for size < 2*n {
		size *= 2
	}
	return set32{slots: make([]uint32, size)}
}

func (s *set32) has(v uint32) bool {
	if v == empty32 {
		return s.zero
	}
	mask := uint32(len(s.slots) - 1)
	for i := v & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case v:
			return true
		case empty32:
			return false
		}
	}
}

func (s *set32) add(v uint32) {
	if v == empty32 {
		s.zero = true
		return
	}
	if 2*(s.n+1) > len(s.slots) {
		old, zero := s.slots, s.zero
		*s = newSet32(2 * (s.n + 1))
		s.zero = zero
		for _, w := range old {
			if w != empty32 {
				s.insert(w)
			}
		}
	}
	s.insert(v)
}

// insert puts v, not empty32, in the set, which has room for it.
func (s *set32) insert(v uint32) {
	mask := uint32(len(s.slots) - 1)
	for i := v & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case v:
			return
		case empty32:
			s.slots[i] = v
			s.n++
			return
		}
	}
}

// derivedID returns an 8-hex-digit id for the entry at fileIndex of the
// session whose idPrefix is prefix, unique among taken, and the number
// its digits spell: the low 32 bits of the FNV-1a hash of the session id,
// a zero byte and the decimal index, followed by a zero byte and a
// decimal salt from the second try on.
func derivedID(prefix uint64, fileIndex int, taken *idSet) (id [8]byte, v uint32) {
	var num [20]byte
	for salt := 0; ; salt++ {
		h := prefix
		for _, c := range strconv.AppendInt(num[:0], int64(fileIndex), 10) {
			h = (h ^ uint64(c)) * fnvPrime
		}
		if salt > 0 {
			h *= fnvPrime
			for _, c := range strconv.AppendInt(num[:0], int64(salt), 10) {
				h = (h ^ uint64(c)) * fnvPrime
			}
		}
		v = uint32(h)
		const digits = "0123456789abcdef"
		for i, w := 7, v; i >= 0; i, w = i-1, w>>4 {
			id[i] = digits[w&15]
		}
		if !taken.has(id, v) {
			return id, v
		}
	}
}

// noteLabel applies a label entry to the labels: it sets the target's
// label, or removes it when the label is empty. Other entries change
// nothing. Reading a file (index) and appending to it (Append) keep the
// labels by this one rule.
func (s *Session) noteLabel(e *compact.Entry) {
	if e.Kind != compact.KindLabel {
		return
	}
	if m := e.Metadata(); m.Label != "" {
		s.labels[m.TargetID] = m.Label
	} else {
		delete(s.labels, m.TargetID)
	}
}

// index builds the id map, the leaf and the labels, and checks ids.
func (s *Session) index() error {
	s.pos = make(map[string]int, len(s.records))
	s.labels = make(map[string]string)
	// unique is true while no id is used twice: every record is then the
	// one its id names, which spares looking ids up below.
	unique := true
	for i, r := range s.records {
		e := r.entry
		if e.ID == "" {
			return &LineError{File: s.name, Line: r.line, Err: fmt.Errorf("%w: field id: missing", ErrMalformed)}
		}
		// One map operation: an id used before leaves the map's size
		// as it was (and the later entry wins).
		n := len(s.pos)
		if s.pos[e.ID] = i; len(s.pos) == n {
			err := &LineError{File: s.name, Line: r.line, Err: fmt.Errorf("%w: field id: %q is used by an earlier entry", ErrMalformed, e.ID)}
			if !s.opts.Lenient {
				return err
			}
			s.warn(err.Error() + " (the later entry wins)")
			unique = false
		}
		s.leaf = e.ID
		s.noteLabel(e)
	}
	for i, r := range s.records {
		if c := r.entry.Compaction; c != nil && c.FirstKeptID != "" {
			if _, ok := s.pos[c.FirstKeptID]; !ok {
				// pi keeps nothing then: the summary stands for all that
				// came before the compaction. Worth saying, not refusing.
				s.warn(fmt.Sprintf("%s:%d: compaction entry %q keeps from entry %q, which the file does not hold: nothing before the compaction is in the context, only its summary",
					s.name, r.line, r.entry.ID, c.FirstKeptID))
			}
		}
		// An entry's parent is most often the entry before it.
		if unique && i > 0 && r.entry.ParentID != "" && s.records[i-1].entry.ID == r.entry.ParentID {
			r.parent = int32(i - 1)
			continue
		}
		r.parent = s.parentOf(r.entry)
	}
	return s.checkCycles(unique)
}

// parentOf returns the index in records of e's parent, -1 if none.
func (s *Session) parentOf(e *compact.Entry) int32 {
	if e.ParentID == "" {
		return -1
	}
	if j, ok := s.pos[e.ParentID]; ok {
		return int32(j)
	}
	return -1
}

// checkCycles fails when parent links loop (an entry that is its own
// ancestor): pi walks parent links without a guard and would hang on such
// a file, and no path through the loop has a root. In lenient mode the
// loop is only reported. unique says that no id is used twice.
func (s *Session) checkCycles(unique bool) error {
	const (
		unseen = iota
		open
		done
	)
	// An id stands for the record s.pos gives, the last one with the id,
	// as in Entry.
	state := make([]uint8, len(s.records))
	var chain []int
	for i, r := range s.records {
		chain = chain[:0]
		j, ok := i, true
		if !unique {
			j, ok = s.pos[r.entry.ID]
		}
		for ok && state[j] == unseen {
			state[j] = open
			chain = append(chain, j)
			p := s.records[j].parent
			j, ok = int(p), p >= 0
		}
		if ok && state[j] == open {
			line, id := s.records[j].line, s.records[j].entry.ID
			err := &LineError{File: s.name, Line: line, Err: fmt.Errorf("%w: field parentId: the parent links from entry %q form a cycle", ErrMalformed, id)}
			if !s.opts.Lenient {
				return err
			}
			s.warn(err.Error())
		}
		for _, c := range chain {
			state[c] = done
		}
	}
	return nil
}

func (s *Session) warn(msg string) {
	s.warnings = append(s.warnings, msg)
	if s.opts.Warn != nil {
		s.opts.Warn(msg)
	}
}
