package jsonrec

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// IDs hands out the ids of entries read from a file that gives its
// records none of its own (Codex rollouts, SWE-agent trajectories). Each
// id is derived from where the entry sits in the file and the bytes it
// was read from, so that reading the same file again, in this process or
// the next, gives every entry the same id: an id printed by "compact
// context" then names the same entry for --leaf, fork --at and pin. An
// entry whose position and bytes are unchanged keeps its id when the
// file grows. The zero value is ready to use.
type IDs struct {
	taken map[string]bool
}

// Take marks id as in use, so that Derive never returns it; readers pass
// the ids the file itself gives. It reports whether id was free.
func (s *IDs) Take(id string) bool {
	if s.taken == nil {
		s.taken = make(map[string]bool)
	}
	if s.taken[id] {
		return false
	}
	s.taken[id] = true
	return true
}

// Derive returns a new id, eight hex digits as pi writes them, made from
// pos, the entry's place in the file ("line 12", "history 3"), and
// content, the bytes it was read from. Entries with the same pos and
// content (several read from one line) get distinct ids in the order
// they are derived, as do the rare ones whose digests collide.
func (s *IDs) Derive(pos string, content []byte) string {
	for n := 0; ; n++ {
		h := sha256.New()
		h.Write([]byte(pos))
		h.Write([]byte{0})
		h.Write(content)
		if n > 0 {
			h.Write([]byte{0})
			h.Write([]byte(strconv.Itoa(n)))
		}
		var sum [sha256.Size]byte
		id := hex.EncodeToString(h.Sum(sum[:0])[:4])
		if s.Take(id) {
			return id
		}
	}
}
