package session

import (
	"bufio"
	"bytes"
	stdjson "encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
)

// EncodeTranscript writes t as a pi session file of the current version:
// a header line (t's session id, or a new one, its start time and
// working directory), then one line per entry in the order given.
// A model named by t comes first, as a model_change entry. Entries
// without an id get one derived from their place in t and their content
// (jsonrec.IDs), the same each time the same transcript is encoded, so
// that ids of a file read again stay valid; entries without a parent are chained to
// the entry before them (the first stays the root), and entries without
// a timestamp take the one before them. Nothing in t is changed. Kinds
// that cannot be written (a message entry without a message) are an error
// naming the entry.
func EncodeTranscript(w io.Writer, t *compact.Transcript) error {
	bw := bufio.NewWriter(w)
	var header object
	header.str("type", "session")
	header.val("version", CurrentVersion)
	id := t.SessionID
	if id == "" {
		id = newUUID()
	}
	header.str("id", id)
	ts := t.Timestamp
	if ts == "" {
		for _, e := range t.Entries {
			if e.Timestamp != "" {
				ts = e.Timestamp
				break
			}
		}
	}
	if ts == "" {
		ts = jsonrec.Stamp(time.Now())
	}
	header.str("timestamp", ts)
	header.str("cwd", t.Cwd)
	line, err := header.bytes()
	if err != nil {
		return err
	}
	bw.Write(line)
	bw.WriteByte('\n')

	var ids jsonrec.IDs
	for _, e := range t.Entries {
		if e.ID != "" {
			ids.Take(e.ID)
		}
	}
	entries := t.Entries
	if t.Model != "" && (len(entries) == 0 || entries[0].Kind != compact.KindModelChange) {
		provider := t.Provider
		if provider == "" {
			provider = "unknown"
		}
		mc := &compact.Entry{Kind: compact.KindModelChange, Meta: &compact.EntryMeta{Provider: provider, ModelID: t.Model}}
		entries = append([]*compact.Entry{mc}, entries...)
	}
	last, lastTS := "", ts
	for i, e := range entries {
		c := *e
		if c.ID == "" {
			content, err := encodeEntry(&c, -1)
			if err != nil {
				return fmt.Errorf("entry %d (%s): %w", i+1, c.Kind, err)
			}
			c.ID = ids.Derive("entry "+strconv.Itoa(i), content)
		}
		if c.ParentID == "" && i > 0 {
			c.ParentID = last
		}
		if c.Timestamp == "" {
			c.Timestamp = lastTS
		}
		line, err := encodeEntry(&c, -1)
		if err != nil {
			return fmt.Errorf("entry %d (%s %s): %w", i+1, c.Kind, c.ID, err)
		}
		if bytes.ContainsAny(line, "\n\r") {
			// A raw value kept as stored (a custom entry's data, an
			// extra field, tool arguments) was pretty-printed: one
			// entry must stay one line.
			var flat bytes.Buffer
			if err := stdjson.Compact(&flat, line); err != nil {
				return fmt.Errorf("entry %d (%s %s): %w", i+1, c.Kind, c.ID, err)
			}
			line = flat.Bytes()
		}
		bw.Write(line)
		bw.WriteByte('\n')
		last, lastTS = c.ID, c.Timestamp
	}
	return bw.Flush()
}

// FromTranscript returns t as a session held in memory: the session that
// EncodeTranscript's file would read as. It has no file, so Append
// records entries in memory only. name is used in errors and warnings.
func FromTranscript(t *compact.Transcript, name string, opts Options) (*Session, error) {
	var buf bytes.Buffer
	if err := EncodeTranscript(&buf, t); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return parse(buf.Bytes(), name, opts)
}

// SaveAs writes the session, as WriteTo does, to a new file at path, the
// way Fork writes its file: a temporary file beside it, synced, then
// linked into place, so that an interruption leaves no partial file. It
// refuses a path that exists (the error wraps fs.ErrExist). It is how a
// session made with FromTranscript becomes a file; s is not changed and
// does not become that file.
func (s *Session) SaveAs(path string) error {
	if err := writeAtomic(s.fileOps(), path, s.WriteTo, true, nil, nil); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
