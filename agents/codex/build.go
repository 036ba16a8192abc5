package codex

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
)

// builder turns rollout lines into entries.
type builder struct {
	name string
	t    *compact.Transcript
	// ids gives each entry its id, from the line it starts at.
	ids jsonrec.IDs

	model    string
	provider string
	// calls maps a call_id to its tool name.
	calls map[string]string

	// resp is the assistant message of the response being read, open
	// until the next input; last is the latest response, open or not.
	resp    *compact.Message
	last    *compact.Message
	aborted bool
	// applied is the last token usage put on a message; pending one
	// that came before the response it measured.
	applied *tokenUsage
	pending *tokenUsage
	// seen is the latest count read, for a compaction's TokensBefore.
	seen *tokenUsage

	// turns holds the index in Entries of each user prompt still in the
	// history, for thread rollbacks; reparent, when set, is the parent of
	// the next entry (the point a rollback returned to).
	turns    []int
	reparent string
}

func newBuilder(name string) *builder {
	// Codex's default model provider is "openai"; session_meta names
	// another when one is configured.
	return &builder{name: name, t: &compact.Transcript{Format: Format}, calls: make(map[string]string), provider: "openai"}
}

// add appends an entry starting at r, with an id derived from r's line
// number and bytes: the same on every read of the file.
func (b *builder) add(e *compact.Entry, r *record) {
	if e.ID == "" {
		e.ID = b.ids.Derive("line "+strconv.Itoa(r.Line), r.Raw)
	}
	if e.Timestamp == "" {
		e.Timestamp = r.timestamp
	}
	if b.reparent != "" {
		e.ParentID, b.reparent = b.reparent, ""
	}
	b.t.Entries = append(b.t.Entries, e)
}

// rollback drops the last n user turns from the history: the entry after
// it hangs from the entry before the first prompt dropped, so the dropped
// turns stay in the file, off the path. The first prompt of the file can
// not be dropped this way (only the first entry may be a root).
func (b *builder) rollback(n int) {
	if n <= 0 || len(b.turns) == 0 {
		return
	}
	keep := max(len(b.turns)-n, 0)
	cut := b.turns[keep]
	b.turns = b.turns[:keep]
	if cut > 0 {
		b.reparent = b.t.Entries[cut-1].ID
	}
}

// custom keeps r as a custom entry "codex:<kind>".
func (b *builder) custom(r *record, kind string) {
	b.add(&compact.Entry{Kind: compact.KindCustom, Meta: &compact.EntryMeta{CustomType: Format + ":" + kind, Data: r.Copy()}}, r)
}

func (b *builder) unknown(kind string) {
	if b.t.Unknown == nil {
		b.t.Unknown = make(map[string]int)
	}
	b.t.Unknown[kind]++
}

// build converts the lines in order and finishes the transcript.
func (b *builder) build(recs []*record) (*compact.Transcript, error) {
	for _, r := range recs {
		if err := b.record(r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", b.name, r.Line, err)
		}
	}
	b.finish()
	return b.t, nil
}

// record converts one line.
func (b *builder) record(r *record) error {
	if b.t.Timestamp == "" {
		b.t.Timestamp = r.timestamp
	}
	if _, bare := r.Fields["payload"]; !bare {
		return b.bare(r)
	}
	switch r.typ {
	case "session_meta":
		return b.sessionMeta(r)
	case "turn_context":
		model, err := jsonrec.OptString(r.payload, "model")
		if err != nil {
			return fmt.Errorf("field payload%w", jsonrec.Below(err))
		}
		b.setModel(model)
		if b.t.Cwd == "" {
			b.t.Cwd, _ = jsonrec.OptString(r.payload, "cwd")
		}
		b.custom(r, r.typ)
		return nil
	case "response_item":
		return b.item(r)
	case "event_msg":
		if err := b.event(r); err != nil {
			return err
		}
		b.custom(r, r.typ)
		return nil
	case "compacted":
		return b.compacted(r)
	case "inter_agent_communication", "inter_agent_communication_metadata", "world_state":
		// Messages between agents and workspace baselines of newer
		// versions: kept, not modelled.
		b.custom(r, r.typ)
		return nil
	}
	b.unknown(r.typ)
	b.custom(r, r.typ)
	return nil
}

// bare handles a line of an early rollout, which has no envelope.
func (b *builder) bare(r *record) error {
	switch {
	case r.typ == "":
		if _, ok := r.Fields["record_type"]; ok {
			b.custom(r, "state")
			return nil
		}
		if _, ok := r.Fields["id"]; ok && len(b.t.Entries) == 0 {
			return b.sessionMeta(r)
		}
	case isItemType(r.typ):
		return b.item(r)
	}
	kind := r.typ
	if kind == "" {
		kind = "untyped"
	}
	b.unknown(kind)
	b.custom(r, kind)
	return nil
}

// sessionMeta reads the session's id, directory, start and provider.
func (b *builder) sessionMeta(r *record) error {
	p := r.payload
	for key, dst := range map[string]*string{"id": &b.t.SessionID, "cwd": &b.t.Cwd, "timestamp": &b.t.Timestamp, "model_provider": &b.provider} {
		v, err := jsonrec.OptString(p, key)
		if err != nil {
			return fmt.Errorf("field payload%w", jsonrec.Below(err))
		}
		if v != "" && (*dst == "" || dst == &b.provider || dst == &b.t.Timestamp && len(b.t.Entries) == 0) {
			*dst = v
		}
	}
	if model, err := jsonrec.OptString(p, "model"); err == nil {
		b.setModel(model)
	}
	b.custom(r, "session_meta")
	return nil
}

func (b *builder) setModel(model string) {
	if model == "" {
		return
	}
	b.model = model
	if b.t.Model == "" {
		b.t.Model = model
	}
}

// open returns the assistant message of the current response, starting
// one at r when none is open.
func (b *builder) open(r *record) *compact.Message {
	if b.resp != nil {
		return b.resp
	}
	m := &compact.Message{Role: compact.RoleAssistant, Provider: b.provider, Model: b.model, Timestamp: jsonrec.Millis(r.timestamp)}
	b.add(&compact.Entry{Kind: compact.KindMessage, Message: m}, r)
	b.resp, b.last, b.aborted = m, m, false
	if b.pending != nil {
		b.apply(m, b.pending)
		b.pending = nil
	}
	return m
}

// close ends the current response and sets its stop reason.
func (b *builder) close() {
	m := b.resp
	if m == nil {
		return
	}
	switch {
	case b.aborted:
		m.StopReason = compact.StopAborted
	case len(m.ToolCalls()) > 0:
		m.StopReason = compact.StopToolUse
	default:
		m.StopReason = compact.StopEnd
	}
	b.resp = nil
}

// finish closes the last response and gives the entry after each
// compaction an id for its FirstKeptID.
func (b *builder) finish() {
	b.close()
	jsonrec.SafeExtras(b.t, Format)
	if b.t.Provider == "" && b.t.Model != "" {
		b.t.Provider = b.provider
	}
	for i, e := range b.t.Entries {
		if e.Kind != compact.KindCompaction || i+1 >= len(b.t.Entries) {
			continue
		}
		e.Compaction.FirstKeptID = b.t.Entries[i+1].ID
	}
}

// plain decodes raw JSON into plain Go values (for Compaction.Details).
func plain(raw json.RawMessage) any {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	return v
}
