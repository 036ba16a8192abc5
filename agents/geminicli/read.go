package geminicli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/compactkit/compact"
)

// Format is the format name of this package's transcripts.
const Format = "gemini-cli"

// Read parses a Gemini CLI chat recording (session-*.jsonl, or the older
// session-*.json) or checkpoint (checkpoint-*.json) held in memory. name
// is used in errors and warnings.
func Read(data []byte, name string) (*compact.Transcript, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("%s:1: empty file", name)
	}
	if trimmed[0] == '[' {
		return readCheckpoint(data, name)
	}
	if trimmed[0] != '{' {
		return nil, fmt.Errorf("%s:1: not a JSON object or array", name)
	}
	f := newFold(name)
	if json.Valid(trimmed) {
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(trimmed, &probe); err == nil {
			if _, ok := probe["history"]; ok {
				if _, rec := probe["sessionId"]; !rec {
					return readCheckpoint(data, name)
				}
			}
		}
		if err := f.readLegacy(data); err != nil {
			return nil, err
		}
	} else if err := f.readJSONL(data); err != nil {
		return nil, err
	}
	return build(f), nil
}

// ReadFile reads the recording or checkpoint at path. A file that records
// no start time (a checkpoint) takes its modification time.
func ReadFile(path string) (*compact.Transcript, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := Read(data, path)
	if err != nil {
		return nil, err
	}
	if t.Timestamp == "" {
		if fi, err := os.Stat(path); err == nil {
			t.Timestamp = fi.ModTime().UTC().Format("2006-01-02T15:04:05.000Z")
		}
	}
	return t, nil
}

// build turns a replayed recording into the transcript's entries: the
// session's metadata first (a custom entry "gemini-cli:session"), then the
// messages, compressions and other records in file order.
func build(f *fold) *compact.Transcript {
	t := &compact.Transcript{Format: Format, Unknown: f.unknown, Warnings: f.warnings}
	c := &converter{name: f.name, t: t, calls: map[string]string{}, answered: map[string]bool{}, used: map[string]bool{}}
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(f.meta[k], &s)
		return s
	}
	t.SessionID, t.Timestamp = str("sessionId"), str("startTime")
	var dirs []string
	if json.Unmarshal(f.meta["directories"], &dirs) == nil && len(dirs) > 0 {
		t.Cwd = dirs[0] // the workspace directories a subagent recording names
	}
	root := ""
	if len(f.meta) > 0 {
		root = c.id("session")
		var buf bytes.Buffer
		buf.WriteByte('{')
		for i, k := range f.metaKeys {
			if i > 0 {
				buf.WriteByte(',')
			}
			key, _ := json.Marshal(k)
			buf.Write(key)
			buf.WriteByte(':')
			buf.Write(f.meta[k])
		}
		buf.WriteByte('}')
		t.Entries = append(t.Entries, &compact.Entry{ID: root, Kind: compact.KindCustom, Timestamp: t.Timestamp, Meta: &compact.EntryMeta{CustomType: Format + ":session", Data: buf.Bytes()}})
	}
	var nextKept []*compact.Entry // compactions waiting for the next entry as first kept
	add := func(e *compact.Entry) {
		for _, w := range nextKept {
			w.Compaction.FirstKeptID = e.ID
		}
		nextKept = nil
		t.Entries = append(t.Entries, e)
	}
	for _, ev := range f.events {
		switch {
		case ev.slot != nil:
			s := ev.slot
			entries, err := c.messageEntries(s.rec)
			if err != nil {
				c.warn("%s:%d: message %s: %v (kept as stored)", f.name, s.rec.line, s.rec.id, err)
				t.Unknown["invalid message"]++
				entries = []*compact.Entry{{ID: c.id(s.rec.id), Kind: compact.KindCustom, Timestamp: s.rec.timestamp, Meta: &compact.EntryMeta{CustomType: Format + ":invalid", Data: s.rec.raw}}}
			}
			if s.branch {
				parent := root
				if s.parent != nil {
					parent = s.parent.last
				}
				if parent == "" && len(t.Entries) > 0 {
					// No metadata entry to branch from: start a root.
					t.Entries = append(t.Entries, &compact.Entry{ID: c.id("branch"), Kind: compact.KindCustom, Timestamp: s.rec.timestamp, Meta: &compact.EntryMeta{CustomType: Format + ":branch", Data: json.RawMessage(`{}`)}})
					parent = t.Entries[len(t.Entries)-1].ID
				}
				entries[0].ParentID = parent
			}
			for _, e := range entries {
				add(e)
			}
			s.first, s.last = entries[0].ID, entries[len(entries)-1].ID
		case ev.comp != nil:
			e := c.compaction(ev.comp)
			for i := len(t.Entries) - 1; i >= 0; i-- {
				if m := t.Entries[i].Message; m != nil && m.Role == compact.RoleAssistant && m.Usage != nil {
					e.Compaction.TokensBefore = m.Usage.ContextTokens()
					break
				}
			}
			t.Entries = append(t.Entries, e)
			if ev.comp.firstKept == nil {
				nextKept = append(nextKept, e)
			}
		case ev.custom != nil:
			add(&compact.Entry{ID: c.id(fmt.Sprintf("line-%d", ev.custom.line)), Kind: compact.KindCustom, Meta: &compact.EntryMeta{CustomType: Format + ":" + ev.custom.kind, Data: ev.custom.raw}})
		}
	}
	for _, e := range t.Entries {
		if m := e.Message; m != nil && m.Role == compact.RoleAssistant && m.Model != "" {
			t.Model, t.Provider = m.Model, m.Provider
			break
		}
	}
	if len(t.Unknown) == 0 {
		t.Unknown = nil
	}
	return t
}

// compaction returns the entry of a compression: its summary is the text
// of the new messages written before the first kept one (Gemini CLI's
// <state_snapshot> and the model's acknowledgement), with their records
// in Details.
func (c *converter) compaction(comp *compression) *compact.Entry {
	var texts []string
	var recs []any
	ts := ""
	for _, r := range comp.summary {
		if ts == "" {
			ts = r.timestamp
		}
		if parts, err := decodeParts(r.fields["content"]); err == nil {
			for _, p := range parts {
				if q, ok := contentPart(p); ok && q.Type == compact.PartText && strings.TrimSpace(q.Text) != "" {
					texts = append(texts, q.Text)
				}
			}
		}
		var v any
		if json.Unmarshal(r.raw, &v) == nil {
			recs = append(recs, v)
		}
	}
	summary := strings.Join(texts, "\n\n")
	if summary == "" {
		summary = fmt.Sprintf("[Gemini CLI dropped %d messages from the history.]", comp.dropped)
	}
	cp := &compact.Compaction{Summary: summary,
		Details: map[string]any{"source": Format, "reason": "compression", "dropped": comp.dropped, "line": comp.line}}
	if len(recs) > 0 {
		cp.Details["summaryMessages"] = recs
	}
	if comp.firstKept != nil {
		cp.FirstKeptID = comp.firstKept.first
	}
	return &compact.Entry{ID: c.id(fmt.Sprintf("compression-%d", comp.line)), Kind: compact.KindCompaction, Timestamp: ts, Compaction: cp}
}
