package compact

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// Memory is a Log kept in memory: for agents that hold their conversation
// in a slice, for tests, and for request-scoped work. The zero value is an
// empty log. Memory is not safe for concurrent use.
type Memory struct {
	entries []*Entry
	byID    map[string]*Entry
	leaf    string
	next    int
}

// NewMemory returns a log holding entries, the leaf being the last one.
func NewMemory(entries ...*Entry) *Memory {
	m := &Memory{}
	for _, e := range entries {
		m.index(e)
	}
	return m
}

func (m *Memory) index(e *Entry) {
	if m.byID == nil {
		m.byID = make(map[string]*Entry)
	}
	m.entries = append(m.entries, e)
	m.byID[e.ID] = e
	m.leaf = e.ID
}

// Entries returns every entry, in the order added.
func (m *Memory) Entries() []*Entry { return m.entries }

// Path implements Log.
func (m *Memory) Path() []*Entry {
	if len(m.entries) == 0 {
		return nil
	}
	p, err := PathByID(m.byID, m.entries[len(m.entries)-1], m.leaf)
	if err != nil {
		return nil
	}
	return p
}

// Branch moves the leaf to the entry id; the next append starts a new
// branch there.
func (m *Memory) Branch(id string) error {
	if _, ok := m.byID[id]; !ok {
		return fmt.Errorf("branch to %q: %w", id, ErrNoEntry)
	}
	m.leaf = id
	return nil
}

// Append implements Log.
func (m *Memory) Append(ctx context.Context, e *Entry) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if e.ID == "" {
		for {
			m.next++
			id := "m" + strconv.Itoa(m.next)
			if _, taken := m.byID[id]; !taken {
				e.ID = id
				break
			}
		}
	} else if _, taken := m.byID[e.ID]; taken {
		return fmt.Errorf("append: entry id %q is already used", e.ID)
	}
	if e.ParentID == "" {
		e.ParentID = m.leaf
	}
	if e.Timestamp == "" {
		e.Timestamp = time.Now().UTC().Format(time.RFC3339Nano)
	}
	m.index(e)
	return nil
}

// AppendMessage appends a message entry and returns it.
func (m *Memory) AppendMessage(ctx context.Context, msg *Message) (*Entry, error) {
	e := &Entry{Kind: KindMessage, Message: msg}
	if err := m.Append(ctx, e); err != nil {
		return nil, err
	}
	return e, nil
}
