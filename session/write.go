package session

import (
	"bytes"
	"crypto/rand"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/compactkit/compact"
)

// newID returns a fresh 8-hex-digit entry id not in taken.
func newID(taken map[string]*compact.Entry) string {
	var b [4]byte
	for {
		if _, err := rand.Read(b[:]); err != nil {
			panic(err) // crypto/rand does not fail on supported platforms
		}
		id := fmt.Sprintf("%x", b[:])
		if _, ok := taken[id]; !ok {
			return id
		}
	}
}

// newUUID returns a random version 4 UUID.
func newUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// field is one member of a JSON object, kept in stored order.
type field struct {
	key string // the name, decoded
	// rawKey is the name as stored, quotes included; nil for a member
	// added here. Writing it back as stored, rather than quoting key
	// again, keeps names whose bytes are not valid UTF-8 unchanged.
	rawKey []byte
	val    stdjson.RawMessage
}

// splitObject returns the members of a JSON object in order, values as
// stored. It fails on anything but exactly one valid JSON object.
func splitObject(raw []byte) ([]field, error) {
	if !stdjson.Valid(raw) {
		return nil, errors.New("invalid JSON")
	}
	sc := scanner{b: raw}
	if sc.peek() != '{' {
		return nil, errors.New("not a JSON object")
	}
	var out []field
	sc.i++
	for sc.peek() != '}' {
		start := sc.i
		body, escaped := sc.key()
		rawKey := raw[start:sc.i:sc.i]
		key := string(body)
		if escaped {
			if err := stdjson.Unmarshal(rawKey, &key); err != nil {
				return nil, err
			}
		}
		if sc.peek() != ':' {
			return nil, errors.New("invalid JSON object")
		}
		sc.i++
		val := sc.value()
		if sc.bad {
			return nil, errors.New("invalid JSON object")
		}
		out = append(out, field{key: key, rawKey: rawKey, val: val})
		if sc.peek() == ',' {
			sc.i++
		}
	}
	return out, nil
}

func joinObject(fields []field) []byte {
	var o object
	for _, f := range fields {
		if f.rawKey != nil {
			o.rawKeyed(f.rawKey, f.val)
		} else {
			o.raw(f.key, f.val)
		}
	}
	b, _ := o.bytes()
	return b
}

// setField sets the member key to val. An existing member keeps its
// place; repeats of it are dropped, since JSON readers (pi's included)
// take the last of repeated members, which would undo the change. A new
// member goes after the member named after, or last.
//
// Go's decoders also match member names regardless of case ("ID" fills
// the id field). When the object holds such a variant of key, the member
// goes last, so that this package reads back what it wrote; the variant
// stays, as pi treats it as an unknown field.
func setField(fields []field, key string, val []byte, after string) []field {
	for _, f := range fields {
		if f.key != key && strings.EqualFold(f.key, key) {
			return append(dropField(fields, key), field{key: key, val: val})
		}
	}
	for i := range fields {
		if fields[i].key == key {
			fields[i].val = val
			out := fields[:i+1]
			for _, f := range fields[i+1:] {
				if f.key != key {
					out = append(out, f)
				}
			}
			return out
		}
	}
	pos := len(fields)
	for i := range fields {
		if fields[i].key == after {
			pos = i + 1
		}
	}
	fields = append(fields, field{})
	copy(fields[pos+1:], fields[pos:])
	fields[pos] = field{key: key, val: val}
	return fields
}

func dropField(fields []field, key string) []field {
	out := fields[:0]
	for _, f := range fields {
		if f.key != key {
			out = append(out, f)
		}
	}
	return out
}

// currentLine returns the entry's line in the current format: the stored
// bytes, patched with what migration added.
func (r *record) currentLine() ([]byte, error) {
	if !r.assignedID && !r.assignedParent && !r.keptIndex && !r.hookRole {
		return r.raw, nil
	}
	fields, err := splitObject(r.raw)
	if err != nil {
		return nil, err
	}
	if r.assignedID {
		fields = setField(fields, "id", quote(r.entry.ID), "type")
	}
	if r.assignedParent {
		parent := []byte("null")
		if r.entry.ParentID != "" {
			parent = quote(r.entry.ParentID)
		}
		fields = setField(fields, "parentId", parent, "id")
	}
	if r.keptIndex {
		fields = dropField(fields, "firstKeptEntryIndex")
		fields = setField(fields, "firstKeptEntryId", quote(r.entry.Compaction.FirstKeptID), "summary")
	}
	if r.hookRole {
		for i := range fields {
			if fields[i].key != "message" {
				continue
			}
			msg, err := splitObject(fields[i].val)
			if err != nil {
				return nil, err
			}
			msg = setField(msg, "role", quote(string(compact.RoleCustom)), "")
			fields[i].val = joinObject(msg)
		}
	}
	return joinObject(fields), nil
}

// WriteTo writes the whole session in the current format: the header
// (with version 3) and every entry, each as stored or as migrated. Entries
// of unknown types and unknown fields are written back as they were read.
func (s *Session) WriteTo(w io.Writer) (int64, error) {
	if len(s.skipped) > 0 || s.tornLine > 0 {
		return 0, fmt.Errorf("%s: refusing to rewrite: %s would be dropped", s.name, s.lostLines())
	}
	var buf bytes.Buffer
	header := s.headerRaw
	if s.header.Version < CurrentVersion {
		fields, err := splitObject(header)
		if err != nil {
			return 0, &LineError{File: s.name, Line: s.headerLine, Err: err}
		}
		fields = setField(fields, "version", []byte("3"), "type")
		header = joinObject(fields)
	}
	buf.Write(header)
	buf.WriteByte('\n')
	for _, r := range s.records {
		line, err := r.currentLine()
		if err != nil {
			return 0, &LineError{File: s.name, Line: r.line, Err: err}
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	n, err := w.Write(buf.Bytes())
	return int64(n), err
}

func (s *Session) lostLines() string {
	if s.tornLine > 0 {
		return fmt.Sprintf("the incomplete line %d", s.tornLine)
	}
	return fmt.Sprintf("%d malformed line(s) (first: line %d)", len(s.skipped), s.skipped[0])
}

// Migrate rewrites the file in the current format when it is older. It
// writes a temporary file in the same directory, fsyncs it and renames it
// over the original, so a crash leaves either the old or the new file. It
// reports whether the file was rewritten. It refuses when lines were
// skipped on read, since rewriting would drop them.
func (s *Session) Migrate() (bool, error) {
	if s.file == "" {
		return false, fmt.Errorf("%s: migrate: the session was not read from a file", s.name)
	}
	if !s.NeedsMigration() {
		return false, nil
	}
	unchanged := func() error {
		st, err := os.Stat(s.file)
		if err != nil {
			return err
		}
		if st.Size() != s.size {
			return fmt.Errorf("%s: migrate: the file changed since it was read (%d bytes then, %d now); read it again", s.name, s.size, st.Size())
		}
		return nil
	}
	if err := unchanged(); err != nil {
		return false, err
	}
	if err := writeAtomic(s.file, s.WriteTo, false, unchanged); err != nil {
		return false, err
	}
	reread, err := Open(s.file, s.opts)
	if err != nil {
		return true, fmt.Errorf("migrate: re-reading the rewritten file: %w", err)
	}
	*s = *reread
	return true, nil
}

// writeAtomic writes a file through a temporary file, fsync and rename.
// With exclusive set it fails if the target exists. check, when not nil,
// runs just before the rename and can still call it off.
func writeAtomic(path string, write func(io.Writer) (int64, error), exclusive bool, check func() error) error {
	dir := filepath.Dir(path)
	if exclusive {
		if _, err := os.Lstat(path); err == nil {
			return fmt.Errorf("%s: already exists; not overwriting it", path)
		}
	}
	perm := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		perm = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := write(tmp); err != nil {
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if check != nil {
		if err := check(); err != nil {
			return err
		}
	}
	if exclusive {
		// Link fails if the target appeared meanwhile; rename would not.
		if err := os.Link(tmp.Name(), path); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		os.Remove(tmp.Name())
	} else if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	ok = true
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Fork writes a new session file at out holding the path from the root to
// the entry id, with the labels of those entries, under a new header whose
// parentSession names this session's file. It refuses to overwrite out.
func (s *Session) Fork(id, out string) (*Session, error) {
	path, err := s.PathTo(id)
	if err != nil {
		return nil, err
	}
	if len(path) == 0 {
		return nil, fmt.Errorf("%s: fork: the session has no entries", s.name)
	}
	parent := s.file
	if parent != "" {
		if abs, err := filepath.Abs(parent); err == nil {
			parent = abs
		}
	}
	var header object
	header.str("type", "session")
	header.val("version", CurrentVersion)
	header.str("id", newUUID())
	header.str("timestamp", s.timestamp())
	header.str("cwd", s.header.Cwd)
	if parent != "" {
		header.str("parentSession", parent)
	}
	headerLine, _ := header.bytes()

	inPath := make(map[string]bool, len(path))
	var lines [][]byte
	last := ""
	for _, e := range path {
		if e.Kind == compact.KindLabel {
			continue // re-created below from the resolved labels, as pi does
		}
		rec := s.records[s.pos[e.ID]]
		line, err := rec.currentLine()
		if err != nil {
			return nil, &LineError{File: s.name, Line: rec.line, Err: err}
		}
		if e.ParentID != last {
			// The parent was a label entry left out: link the entry to
			// the nearest entry kept, or the path would break here.
			if line, err = withParent(line, last); err != nil {
				return nil, &LineError{File: s.name, Line: rec.line, Err: err}
			}
		}
		lines = append(lines, line)
		inPath[e.ID] = true
		last = e.ID
	}
	taken := make(map[string]*compact.Entry, len(s.byID))
	for k, v := range s.byID {
		taken[k] = v
	}
	for _, target := range sortedKeys(s.labels) {
		if !inPath[target] {
			continue
		}
		le := &compact.Entry{Kind: compact.KindLabel, ID: newID(taken), ParentID: last, Timestamp: s.timestamp(),
			TargetID: target, Label: s.labels[target]}
		taken[le.ID] = le
		line, err := encodeEntry(le, -1)
		if err != nil {
			return nil, err
		}
		lines = append(lines, line)
		last = le.ID
	}
	write := func(w io.Writer) (int64, error) {
		var buf bytes.Buffer
		buf.Write(headerLine)
		buf.WriteByte('\n')
		for _, l := range lines {
			buf.Write(l)
			buf.WriteByte('\n')
		}
		n, err := w.Write(buf.Bytes())
		return int64(n), err
	}
	if err := writeAtomic(out, write, true, nil); err != nil {
		return nil, err
	}
	return Open(out, s.opts)
}

// withParent returns the entry line with its parentId set to parent (null
// for "").
func withParent(line []byte, parent string) ([]byte, error) {
	fields, err := splitObject(line)
	if err != nil {
		return nil, err
	}
	val := []byte("null")
	if parent != "" {
		val = quote(parent)
	}
	return joinObject(setField(fields, "parentId", val, "id")), nil
}
