package compact

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// SliceLog is a Log kept in a slice in memory, with no file behind it: for
// agents that hold their conversation themselves, for tests, and for
// request-scoped work (the proxy builds one per request). It is not the
// MemoryLog of Engine.Memory, which archives summaries. The zero value is
// an empty log. A SliceLog is not safe for concurrent use.
//
// The entries Append names ("m1", "m2", ...) are indexed by their number
// in a slice, the others in a map: an append then costs the same whatever
// the length of the log, where inserting into a map of a hundred thousand
// ids misses the cache.
type SliceLog struct {
	entries []*Entry
	byID    map[string]*Entry // entries named from outside
	gen     []*Entry          // gen[k-1] is the entry Append named "m<k>", if any
	leaf    string
	// generatedForm is set once an entry named from outside has an id of
	// the form Append generates ("m" and digits): until then a generated
	// id cannot be taken and Append does not look it up.
	generatedForm bool
	// stamp formats the timestamps of appended entries.
	stamp stamper
}

// NewSliceLog returns a log holding entries, the leaf being the last one.
func NewSliceLog(entries ...*Entry) *SliceLog {
	m := &SliceLog{}
	for _, e := range entries {
		m.index(e, false)
	}
	return m
}

// index adds e, named by generatedID when generated.
func (m *SliceLog) index(e *Entry, generated bool) {
	m.entries = append(m.entries, e)
	m.leaf = e.ID
	if generated {
		m.gen = append(m.gen, e)
		return
	}
	if m.byID == nil {
		m.byID = make(map[string]*Entry)
	}
	m.byID[e.ID] = e
	if ofGeneratedForm(e.ID) {
		m.generatedForm = true
	}
}

// generatedID returns the next id of the form "m1", "m2", ... that no
// entry has, leaving a nil in gen for each one it steps over.
func (m *SliceLog) generatedID() string {
	var buf [24]byte // "m" and the number, built in one allocation
	for {
		id := string(strconv.AppendInt(append(buf[:0], 'm'), int64(len(m.gen)+1), 10))
		if !m.generatedForm {
			return id
		}
		if _, taken := m.byID[id]; !taken {
			return id
		}
		m.gen = append(m.gen, nil)
	}
}

// entry returns the entry named id, nil if none.
func (m *SliceLog) entry(id string) *Entry {
	if ofGeneratedForm(id) {
		if k, err := strconv.Atoi(id[1:]); err == nil && k >= 1 && k <= len(m.gen) {
			if e := m.gen[k-1]; e != nil && e.ID == id {
				return e
			}
		}
	}
	return m.byID[id]
}

// ofGeneratedForm reports whether id looks like one generatedID makes.
func ofGeneratedForm(id string) bool {
	if len(id) < 2 || id[0] != 'm' {
		return false
	}
	for i := 1; i < len(id); i++ {
		if id[i] < '0' || id[i] > '9' {
			return false
		}
	}
	return true
}

// Entries returns every entry, in the order added.
func (m *SliceLog) Entries() []*Entry { return m.entries }

// Path implements Log.
func (m *SliceLog) Path() []*Entry {
	if len(m.entries) == 0 {
		return nil
	}
	p, err := pathBy(m.entry, len(m.entries), m.entries[len(m.entries)-1], m.leaf)
	if err != nil {
		return nil
	}
	return p
}

// Branch moves the leaf to the entry id; the next append starts a new
// branch there.
func (m *SliceLog) Branch(id string) error {
	if m.entry(id) == nil {
		return fmt.Errorf("branch to %q: %w", id, ErrNoEntry)
	}
	m.leaf = id
	return nil
}

// Append implements Log.
func (m *SliceLog) Append(ctx context.Context, e *Entry) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	generated := e.ID == ""
	if generated {
		e.ID = m.generatedID()
	} else if m.entry(e.ID) != nil {
		return fmt.Errorf("append: entry id %q is already used", e.ID)
	}
	if e.ParentID == "" {
		e.ParentID = m.leaf
	}
	if e.Timestamp == "" {
		e.Timestamp = m.stamp.now()
	}
	m.index(e, generated)
	return nil
}

// AppendMessage appends a message entry and returns it.
func (m *SliceLog) AppendMessage(ctx context.Context, msg *Message) (*Entry, error) {
	e := &Entry{Kind: KindMessage, Message: msg}
	if err := m.Append(ctx, e); err != nil {
		return nil, err
	}
	return e, nil
}

// stamper writes the current time as time.RFC3339Nano does, in UTC,
// formatting the date and the time of day once per second: an agent
// appends many messages a second, and the layout-driven formatter took a
// fifth of an append. The zero value is ready to use.
type stamper struct {
	sec    int64  // the second prefix is for
	prefix []byte // "2006-01-02T15:04:05" of that second
	buf    [40]byte
}

// now returns the current time in UTC, as Format(time.RFC3339Nano).
func (s *stamper) now() string { return s.format(time.Now().UTC()) }

// format returns t, a time in UTC, as t.Format(time.RFC3339Nano).
func (s *stamper) format(t time.Time) string {
	if sec := t.Unix(); sec != s.sec || s.prefix == nil {
		s.sec, s.prefix = sec, t.AppendFormat(s.prefix[:0], "2006-01-02T15:04:05")
	}
	b := append(s.buf[:0], s.prefix...)
	if ns := t.Nanosecond(); ns != 0 {
		// Nine digits, the trailing zeros dropped, as RFC3339Nano does.
		var d [9]byte
		for i := 8; i >= 0; i-- {
			d[i] = byte('0' + ns%10)
			ns /= 10
		}
		n := 9
		for d[n-1] == '0' {
			n--
		}
		b = append(append(b, '.'), d[:n]...)
	}
	return string(append(b, 'Z'))
}
