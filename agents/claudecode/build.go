package claudecode

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
)

// item is one entry being built, with what the branch pass needs.
type item struct {
	e *compact.Entry
	// recs are the records the entry came from (several for a joined
	// response).
	recs []*record
	// parentUUID is the record the first one hangs from.
	parentUUID string
	// custom entries and messages without a uuid are always chained on
	// the main line.
	alwaysMain bool
	// resultOnly marks tool results, which follow their call's message
	// onto the main line.
	resultOnly bool
	onMain     bool
	index      int
}

// builder turns records into entries.
type builder struct {
	name  string
	t     *compact.Transcript
	items []*item
	// byUUID maps a record uuid to the last item made from it.
	byUUID map[string]*item
	// responses maps an API message id to its assistant item.
	responses map[string]*item
	// calls maps a tool_use id to its tool name.
	calls map[string]string
	// uuids holds every record uuid, so generated ids avoid them.
	uuids map[string]bool
	ids   map[string]bool
	// boundaries maps compact_boundary uuids to their records; lastBoundary
	// is the latest one seen.
	boundaries   map[string]*record
	lastBoundary *record
	// sideAsMain is set for a subagent file, whose records are all
	// sidechain records.
	sideAsMain bool
}

func newBuilder(name string) *builder {
	return &builder{
		name:       name,
		t:          &compact.Transcript{Format: Format},
		byUUID:     make(map[string]*item),
		responses:  make(map[string]*item),
		calls:      make(map[string]string),
		uuids:      make(map[string]bool),
		ids:        make(map[string]bool),
		boundaries: make(map[string]*record),
	}
}

// knownTypes are the record types this package reads on purpose.
var knownTypes = map[string]bool{
	"user": true, "assistant": true, "system": true, "summary": true,
	"file-history-snapshot": true, "progress": true, "queue-operation": true,
	"custom-title": true,
}

// build converts the records of a file and links the entries made.
func (b *builder) build(recs []*record) (*compact.Transcript, error) {
	main, conv := false, false
	for _, r := range recs {
		if r.uuid != "" {
			b.uuids[r.uuid] = true
		}
		if r.typ == "user" || r.typ == "assistant" {
			conv = true
			if !r.sidechain {
				main = true
			}
		}
	}
	b.sideAsMain = conv && !main
	for _, r := range recs {
		if b.t.SessionID == "" {
			b.t.SessionID, _ = jsonrec.OptString(r.Fields, "sessionId")
		}
		if b.t.Cwd == "" {
			b.t.Cwd, _ = jsonrec.OptString(r.Fields, "cwd")
		}
		if b.t.Timestamp == "" {
			b.t.Timestamp = r.timestamp
		}
		if err := b.record(r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", b.name, r.Line, err)
		}
	}
	b.link(recs)
	b.t.Entries = make([]*compact.Entry, len(b.items))
	for i, it := range b.items {
		b.t.Entries[i] = it.e
	}
	// Extras named as a pi field are kept as "claudeCode.<name>".
	jsonrec.SafeExtras(b.t, "claudeCode")
	return b.t, nil
}

// record converts one record.
func (b *builder) record(r *record) error {
	if r.sidechain && !b.sideAsMain {
		b.custom(r, "sidechain")
		return nil
	}
	switch r.typ {
	case "user":
		return b.user(r)
	case "assistant":
		return b.assistant(r)
	case "system":
		if r.subtype == "compact_boundary" {
			if r.uuid != "" {
				b.boundaries[r.uuid] = r
			}
			b.lastBoundary = r
		}
	}
	if !knownTypes[r.typ] {
		if b.t.Unknown == nil {
			b.t.Unknown = make(map[string]int)
		}
		b.t.Unknown[r.typ]++
	}
	b.custom(r, r.typ)
	return nil
}

// custom keeps r as a custom entry.
func (b *builder) custom(r *record, kind string) {
	it := &item{e: &compact.Entry{Kind: compact.KindCustom, Timestamp: r.timestamp, Meta: &compact.EntryMeta{CustomType: Format + ":" + kind, Data: r.Copy()}},
		recs: []*record{r}, parentUUID: r.parent, alwaysMain: true}
	b.add(it, r)
}

// add appends it, giving its entry an id, and records it as the item of r.
func (b *builder) add(it *item, r *record) {
	it.e.ID = b.newID(r)
	it.index = len(b.items)
	b.items = append(b.items, it)
	if r.uuid != "" {
		b.byUUID[r.uuid] = it
	}
}

// newID returns r's uuid when it is free, else "<uuid>-N" or "line-N".
func (b *builder) newID(r *record) string {
	base := r.uuid
	if base == "" {
		base = "line-" + strconv.Itoa(r.Line)
		if !b.ids[base] && !b.uuids[base] {
			b.ids[base] = true
			return base
		}
	} else if !b.ids[base] {
		b.ids[base] = true
		return base
	}
	for n := 2; ; n++ {
		id := base + "-" + strconv.Itoa(n)
		if !b.ids[id] && !b.uuids[id] {
			b.ids[id] = true
			return id
		}
	}
}

// message starts a message item for r.
func (b *builder) message(r *record, m *compact.Message) *item {
	m.Timestamp = jsonrec.Millis(r.timestamp)
	return &item{e: &compact.Entry{Kind: compact.KindMessage, Timestamp: r.timestamp, Message: m},
		recs: []*record{r}, parentUUID: effectiveParent(r), alwaysMain: r.uuid == ""}
}

// effectiveParent is the record r follows: its parent, or across a
// compact boundary its logical parent.
func effectiveParent(r *record) string {
	if r.parent == "" {
		return r.logicalParent
	}
	return r.parent
}

// recordExtra returns the record's own fields for Message.Extra: all but
// type, message and timestamp, which the message models.
func recordExtra(r *record) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(r.Fields))
	for k, v := range r.Fields {
		switch k {
		case "type", "message", "timestamp":
			continue
		}
		out[k] = v
	}
	return out
}
