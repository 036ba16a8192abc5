package geminicli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/compactkit/compact/internal/jsonrec"
)

// msgRecord is one MessageRecord of a recording, as last written.
type msgRecord struct {
	line      int
	raw       json.RawMessage
	fields    map[string]json.RawMessage
	id, typ   string
	timestamp string
}

// decodeMsgRecord decodes a message record; where names it in errors.
func decodeMsgRecord(raw json.RawMessage, line int) (*msgRecord, error) {
	raw = compactJSON(raw)
	r := &msgRecord{line: line, raw: raw}
	if err := json.Unmarshal(raw, &r.fields); err != nil || r.fields == nil {
		return nil, fmt.Errorf("not an object")
	}
	for k, dst := range map[string]*string{"id": &r.id, "type": &r.typ, "timestamp": &r.timestamp} {
		v, ok := r.fields[k]
		if !ok || string(v) == "null" {
			continue
		}
		if err := json.Unmarshal(v, dst); err != nil {
			return nil, fmt.Errorf("field %s: not a string", k)
		}
	}
	if r.id == "" {
		return nil, fmt.Errorf("field id: missing")
	}
	return r, nil
}

// slot is one message of the conversation: its position is where its id
// was first written, its content the last record written with that id
// (Gemini CLI appends a message again whenever it grows: tokens, tool
// calls, results).
type slot struct {
	rec *msgRecord
	// parent is the slot this one continues from when it starts a new
	// branch after a rewind (nil with branch set: the start).
	parent *slot
	branch bool
	// last is the id of the last entry made from the slot.
	last string
	// first is the id of its first entry.
	first string
}

// compression is a history rewrite that replaced earlier messages with
// new ones: Gemini CLI's chat compression (a <state_snapshot> summary and
// the model's acknowledgement, then the kept turns).
type compression struct {
	line      int
	summary   []*msgRecord // the new messages before the first kept one
	firstKept *slot        // nil when none was kept
	dropped   int
}

// event is one item of the conversation in file order: a message slot, a
// compression or a record kept as a custom entry.
type event struct {
	slot   *slot
	comp   *compression
	custom *customRecord
}

type customRecord struct {
	kind string
	line int
	raw  json.RawMessage
}

// fold replays the records of a recording the way Gemini CLI's loader
// does (messages by id, $rewindTo, $set with or without a messages
// checkpoint, metadata lines) and keeps what the replay would drop as
// branches and compactions.
type fold struct {
	name     string
	events   []event
	live     []*slot
	byID     map[string]*slot
	meta     map[string]json.RawMessage
	metaKeys []string
	// pending marks that the next new slot starts a branch from parent.
	pending       bool
	pendingParent *slot
	unknown       map[string]int
	warnings      []string
}

func newFold(name string) *fold {
	return &fold{name: name, byID: map[string]*slot{}, meta: map[string]json.RawMessage{}, unknown: map[string]int{}}
}

// setMeta merges metadata members (last value wins, first position kept).
func (f *fold) setMeta(m map[string]json.RawMessage) {
	for k, v := range m {
		if k == "messages" {
			continue
		}
		if _, ok := f.meta[k]; !ok {
			f.metaKeys = append(f.metaKeys, k)
		}
		f.meta[k] = v
	}
}

// message adds or updates a message record.
func (f *fold) message(r *msgRecord) {
	if s := f.byID[r.id]; s != nil {
		s.rec = r
		return
	}
	s := &slot{rec: r}
	if f.pending {
		s.branch, s.parent = true, f.pendingParent
		f.pending = false
	}
	f.live = append(f.live, s)
	f.byID[r.id] = s
	f.events = append(f.events, event{slot: s})
}

// rewind drops the live messages from id on; the next message starts a
// branch from the one before them. An id not found drops everything, as
// Gemini CLI's loader does.
func (f *fold) rewind(id string) {
	idx := -1
	for i, s := range f.live {
		if s.rec.id == id {
			idx = i
			break
		}
	}
	if idx < 0 {
		idx = 0
	}
	f.cut(idx)
}

// cut drops the live slots from idx on.
func (f *fold) cut(idx int) {
	if idx >= len(f.live) {
		return
	}
	for _, s := range f.live[idx:] {
		delete(f.byID, s.rec.id)
	}
	f.pending = true
	f.pendingParent = nil
	if idx > 0 {
		f.pendingParent = f.live[idx-1]
	}
	f.live = f.live[:idx]
}

// checkpoint applies a $set of the whole message list. Without new
// messages it is a sync of contents (tool output masking) or, when it
// drops the last messages, a rollback (kept as a branch); otherwise it is
// a compression: the new messages before the first kept one are its
// summary, and new messages after it continue the conversation.
func (f *fold) checkpoint(list []*msgRecord, line int, raw json.RawMessage) {
	inList := map[string]bool{}
	var fresh, kept []*msgRecord
	firstKept := -1
	for i, r := range list {
		inList[r.id] = true
		if f.byID[r.id] != nil {
			kept = append(kept, r)
			if firstKept < 0 {
				firstKept = i
			}
		} else {
			fresh = append(fresh, r)
		}
	}
	dropped := 0
	firstDropped := -1
	for i, s := range f.live {
		if !inList[s.rec.id] {
			dropped++
			if firstDropped < 0 {
				firstDropped = i
			}
		}
	}
	switch {
	case len(fresh) == 0 && dropped == 0:
		f.events = append(f.events, event{custom: &customRecord{kind: "history-sync", line: line, raw: raw}})
		return
	case len(fresh) == 0 && firstDropped == len(f.live)-dropped:
		f.cut(firstDropped)
		return
	}
	c := &compression{line: line, dropped: dropped}
	var after []*msgRecord
	for i, r := range list {
		switch {
		case f.byID[r.id] != nil:
		case firstKept < 0 || i < firstKept:
			c.summary = append(c.summary, r)
		default:
			after = append(after, r)
		}
	}
	if len(c.summary) == 0 && len(after) > 0 && firstKept < 0 {
		c.summary, after = after, nil
	}
	var live []*slot
	for _, r := range kept {
		live = append(live, f.byID[r.id])
	}
	if len(live) > 0 {
		c.firstKept = live[0]
	}
	for _, s := range f.live {
		if !inList[s.rec.id] {
			delete(f.byID, s.rec.id)
		}
	}
	f.live = live
	f.events = append(f.events, event{comp: c})
	for _, r := range after {
		f.message(r)
	}
}

// readJSONL folds the lines of a session-*.jsonl file, split and read as
// every JSON Lines reader does (jsonrec.Records): a last line cut short
// is dropped with a warning, any other bad line is an error naming it.
func (f *fold) readJSONL(data []byte) error {
	_, warnings, err := jsonrec.Records(data, f.name, func(r jsonrec.Record) (struct{}, error) {
		return struct{}{}, f.record(r.Fields, r.Raw, r.Line)
	})
	f.warnings = append(f.warnings, warnings...)
	return err
}

// record applies one line of a recording.
func (f *fold) record(obj map[string]json.RawMessage, raw json.RawMessage, line int) error {
	str := func(k string) (string, bool) {
		var s string
		v, ok := obj[k]
		return s, ok && json.Unmarshal(v, &s) == nil
	}
	if id, ok := str("$rewindTo"); ok {
		f.rewind(id)
		return nil
	}
	if _, ok := str("id"); ok {
		r, err := decodeMsgRecord(raw, line)
		if err != nil {
			return err
		}
		f.message(r)
		return nil
	}
	if set, ok := obj["$set"]; ok && len(set) > 0 && set[0] == '{' {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(set, &m); err != nil {
			return fmt.Errorf("field $set: %w", err)
		}
		f.setMeta(m)
		if msgs, ok := m["messages"]; ok {
			list, err := f.messageList(msgs, line)
			if err != nil {
				return fmt.Errorf("field $set.messages: %w", err)
			}
			f.checkpoint(list, line, raw)
		}
		return nil
	}
	_, hasSession := str("sessionId")
	_, hasProject := str("projectHash")
	if hasSession && hasProject {
		f.setMeta(obj)
		if msgs, ok := obj["messages"]; ok {
			list, err := f.messageList(msgs, line)
			if err != nil {
				return fmt.Errorf("field messages: %w", err)
			}
			for _, r := range list {
				f.message(r)
			}
		}
		return nil
	}
	f.unknown["record"]++
	f.events = append(f.events, event{custom: &customRecord{kind: "record", line: line, raw: raw}})
	return nil
}

// messageList decodes an array of message records found on one line.
func (f *fold) messageList(raw json.RawMessage, line int) ([]*msgRecord, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("not an array")
	}
	out := make([]*msgRecord, 0, len(items))
	for i, it := range items {
		r, err := decodeMsgRecord(it, line)
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i+1, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// readLegacy folds a session-*.json file: one ConversationRecord object.
// Its members are read in order with their positions, so that an error in
// a message names the line where that message starts.
func (f *fold) readLegacy(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("%s:1: not a JSON object", f.name)
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return fmt.Errorf("%s:%d: %w", f.name, jsonrec.Line(data, int(dec.InputOffset())), err)
		}
		key, _ := t.(string)
		if key != "messages" {
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return fmt.Errorf("%s:%d: field %s: %w", f.name, jsonrec.Line(data, int(dec.InputOffset())), key, err)
			}
			f.setMeta(map[string]json.RawMessage{key: compactJSON(v)})
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return fmt.Errorf("%s:%d: field messages: not an array", f.name, jsonrec.Line(data, int(dec.InputOffset())))
		}
		for n := 1; dec.More(); n++ {
			start := jsonrec.SkipSpace(data, dec.InputOffset())
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return fmt.Errorf("%s:%d: message %d: %w", f.name, jsonrec.Line(data, int(start)), n, err)
			}
			r, err := decodeMsgRecord(raw, jsonrec.Line(data, int(start)))
			if err != nil {
				return fmt.Errorf("%s:%d: message %d: %w", f.name, jsonrec.Line(data, int(start)), n, err)
			}
			f.message(r)
		}
		if _, err := dec.Token(); err != nil {
			return fmt.Errorf("%s:%d: field messages: %w", f.name, jsonrec.Line(data, int(dec.InputOffset())), err)
		}
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("%s:%d: %w", f.name, jsonrec.Line(data, int(dec.InputOffset())), err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%s:%d: data after the object", f.name, jsonrec.Line(data, int(dec.InputOffset())))
	}
	return nil
}

// compactJSON returns raw without insignificant white space (recordings
// written with JSON.stringify(value, null, 2) indent every value; the
// values are passed on into single-line records).
func compactJSON(raw json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil || buf.Len() == len(raw) {
		return raw
	}
	return buf.Bytes()
}

// tokens is Gemini CLI's TokensSummary: the usage metadata of the call.
type tokens struct {
	Input    int `json:"input"`
	Output   int `json:"output"`
	Cached   int `json:"cached"`
	Thoughts int `json:"thoughts"`
	Tool     int `json:"tool"`
	Total    int `json:"total"`
}

// toolCall is a ToolCallRecord.
type toolCall struct {
	fields map[string]json.RawMessage
	id     string
	name   string
	status string
}

// part is one Gemini API Part ({text}, {inlineData}, {functionCall},
// {functionResponse}, ...), decoded into its members.
type part struct {
	fields map[string]json.RawMessage
	raw    json.RawMessage
}

func (p part) has(k string) bool {
	v, ok := p.fields[k]
	return ok && string(v) != "null"
}

func (p part) str(k string) string {
	var s string
	_ = json.Unmarshal(p.fields[k], &s)
	return s
}

// kind names the part by its data member, for counting unknown parts.
func (p part) kind() string {
	for _, k := range []string{"text", "inlineData", "functionCall", "functionResponse", "fileData", "executableCode", "codeExecutionResult"} {
		if p.has(k) {
			return k
		}
	}
	for k := range p.fields {
		return k
	}
	return "empty"
}

// decodeParts reads a PartListUnion: a string, one Part, or an array of
// Parts and strings. A string becomes a text part.
func decodeParts(raw json.RawMessage) ([]part, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []part{textOnly(s)}, nil
	case '{':
		var f map[string]json.RawMessage
		if err := json.Unmarshal(raw, &f); err != nil {
			return nil, err
		}
		return []part{{fields: f, raw: raw}}, nil
	case '[':
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, err
		}
		out := make([]part, 0, len(items))
		for i, it := range items {
			ps, err := decodeParts(it)
			if err != nil || len(ps) != 1 || (len(it) > 0 && it[0] == '[') {
				return nil, fmt.Errorf("part %d: not a part or a string", i)
			}
			out = append(out, ps[0])
		}
		return out, nil
	}
	return nil, fmt.Errorf("not a string, a part or an array of parts")
}

func textOnly(s string) part {
	v, _ := json.Marshal(s)
	return part{fields: map[string]json.RawMessage{"text": v}}
}

// functionResponse is the Gemini API's record of a tool's output.
type functionResponse struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

// functionCall is the Gemini API's record of a tool call.
type functionCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}
