package session

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unsafe"

	"github.com/compactkit/compact"
)

// newID returns a fresh 8-hex-digit entry id that taken does not report.
func newID(taken func(id string) bool) string {
	var b [4]byte
	for {
		if _, err := rand.Read(b[:]); err != nil {
			panic(err) // crypto/rand does not fail on supported platforms
		}
		id := fmt.Sprintf("%x", b[:])
		if !taken(id) {
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

// currentLine returns the entry's line in the current format: its stored
// bytes (see Session.storedLines), patched with what migration added.
func (r *record) currentLine(stored []byte) ([]byte, error) {
	if !r.assignedID && !r.assignedParent && !r.keptIndex && !r.hookRole {
		return stored, nil
	}
	fields, err := splitObject(stored)
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
	stored, err := s.storedLines()
	if err != nil {
		return 0, err
	}
	for _, r := range s.records {
		line, err := r.currentLine(stored(r))
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
// reports whether the file was rewritten. It writes a temporary file in
// the same directory, fsyncs it and renames it over the original, so a
// crash leaves either the old or the new file.
//
// It refuses, leaving the file as it is, when lines were skipped on read
// (rewriting would drop them) and when the file's mode allows no writing.
// It holds the write lock (see lock.go) throughout, and fails with
// ErrChanged when the file changed since it was read, or changed (size,
// modification time or identity) while the new file was being written:
// the rename would drop whatever was written meanwhile. The new file gets
// the mode and, where possible, the owner and group of the old one; when
// the owner cannot be kept, Migrate fails rather than change it. A
// symbolic link is followed: its target is rewritten and the link stays.
// Temporary files of earlier runs that were killed before their rename
// (.NAME.tmp-DIGITS beside the file, locked by no process) are removed.
// Errors name the file or its directory, never the temporary file.
func (s *Session) Migrate() (bool, error) {
	if s.file == "" {
		return false, fmt.Errorf("%s: migrate: the session was not read from a file", s.name)
	}
	if !s.NeedsMigration() {
		return false, nil
	}
	if len(s.skipped) > 0 || s.tornLine > 0 {
		return false, fmt.Errorf("%s: refusing to rewrite: %s would be dropped", s.name, s.lostLines())
	}
	if err := s.rewriteFile(); err != nil {
		return false, fmt.Errorf("%s: migrate: %w", s.name, err)
	}
	reread, err := Open(s.file, s.opts)
	if err != nil {
		return true, fmt.Errorf("migrate: re-reading the rewritten file: %w", err)
	}
	ops, now := s.ops, s.now
	*s = *reread
	s.ops, s.now = ops, now
	return true, nil
}

// rewriteFile replaces the session's file (the target of a symbolic link)
// with the session in the current format, under the write lock.
func (s *Session) rewriteFile() error {
	target, err := filepath.EvalSymlinks(s.file)
	if err != nil {
		return bare(err)
	}
	f, err := os.OpenFile(target, os.O_WRONLY, 0)
	if err != nil {
		return bare(err)
	}
	defer f.Close() // also releases the lock
	if err := s.fileOps().lock(context.Background(), f); err != nil {
		return err
	}
	if err := s.checkUnchanged(f); err != nil {
		return err
	}
	before, err := f.Stat()
	if err != nil {
		return bare(err)
	}
	removeStaleTemps(target)
	unchanged := func() error {
		now, err := os.Stat(target)
		if err != nil {
			return bare(err)
		}
		if !os.SameFile(before, now) || now.Size() != before.Size() || !now.ModTime().Equal(before.ModTime()) {
			return fmt.Errorf("%w while it was being rewritten (another process wrote to it), so it was left as it is; read it again", ErrChanged)
		}
		return nil
	}
	return writeAtomic(s.fileOps(), target, s.WriteTo, false, before, unchanged)
}

// tempPrefix is how the names of writeAtomic's temporary files for path
// start; random digits follow.
func tempPrefix(path string) string { return "." + filepath.Base(path) + ".tmp-" }

// removeStaleTemps removes the temporary files that writeAtomic left
// beside path when a run was killed before its rename: regular files
// named tempPrefix(path) and digits that no process holds locked
// (writeAtomic locks its temporary file for as long as it exists). The
// caller holds the lock on path, so no other Migrate of the same file is
// under way. A writer of an older version, which locked nothing, would at
// worst fail at its rename. Failures are ignored: a file left behind only
// wastes space. On systems without locks nothing is removed.
func removeStaleTemps(path string) {
	if !locking {
		return
	}
	dir, prefix := filepath.Dir(path), tempPrefix(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, prefix) || !allDigits(name[len(prefix):]) || !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(dir, name)
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		if free, err := tryLock(f); err == nil && free {
			os.Remove(p)
		}
		f.Close()
	}
}

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// opsWriter writes to f through ops.
type opsWriter struct {
	ops fileOps
	f   *os.File
}

func (w opsWriter) Write(b []byte) (int, error) { return w.ops.write(w.f, b) }

// WriteFileAtomic writes data to path through a temporary file beside it,
// fsync and rename, so that path holds either its old content or all of
// the new one, never a part. The file gets mode 0644 (readable by
// everyone) whatever the mode of a file it replaces. It is how the
// session writers put a file in place, for any file a command writes
// whole (a report page, say). Errors name path or its directory, never
// the temporary file.
func WriteFileAtomic(path string, data []byte) error {
	write := func(w io.Writer) (int64, error) {
		n, err := w.Write(data)
		return int64(n), err
	}
	return writeAtomic(osOps{}, path, write, false, nil, nil)
}

// writeAtomic writes a file through a temporary file in its directory,
// fsync and rename, making its calls through ops. With exclusive set it
// fails if the target exists. like, when not nil, is the file being
// replaced: the new file gets its mode, owner and group (mode 0644
// otherwise). check, when not nil, runs just before the rename and can
// still call it off. The temporary file is locked while it exists (see
// removeStaleTemps) and removed on failure. Errors name path or its
// directory, never the temporary file.
func writeAtomic(ops fileOps, path string, write func(io.Writer) (int64, error), exclusive bool, like os.FileInfo, check func() error) error {
	dir := filepath.Dir(path)
	if exclusive {
		if _, err := os.Lstat(path); err == nil {
			return fmt.Errorf("%w; not overwriting it", fs.ErrExist)
		}
	}
	tmp, err := ops.createTemp(dir, tempPrefix(path)+"*")
	if err != nil {
		return fmt.Errorf("creating a new file in the directory %s: %w", dir, bare(err))
	}
	tmpName := tmp.Name()
	ok := false
	defer func() {
		tmp.Close()
		if !ok {
			os.Remove(tmpName)
		}
	}()
	if _, err := tryLock(tmp); err != nil {
		return fmt.Errorf("locking the new file in %s: %w", dir, bare(err))
	}
	failed := func(what string, err error) error {
		return fmt.Errorf("%s the new file in %s: %w", what, dir, bare(err))
	}
	if _, err := write(opsWriter{ops, tmp}); err != nil {
		return failed("writing", err)
	}
	perm := os.FileMode(0o644)
	if like != nil {
		perm = like.Mode().Perm()
		if err := keepOwner(tmp, like); err != nil {
			return fmt.Errorf("giving the new file in %s the owner of %s: %w", dir, path, err)
		}
	}
	if err := tmp.Chmod(perm); err != nil {
		return failed("setting the mode of", err)
	}
	if err := ops.sync(tmp); err != nil {
		return failed("syncing", err)
	}
	if check != nil {
		if err := check(); err != nil {
			return err
		}
	}
	if exclusive {
		// Link fails if the target appeared meanwhile; rename would not.
		if err := os.Link(tmpName, path); err != nil {
			return fmt.Errorf("creating %s: %w", path, bare(err))
		}
		os.Remove(tmpName)
	} else if err := os.Rename(tmpName, path); err != nil {
		return fmt.Errorf("renaming the new file over %s: %w", path, bare(err))
	}
	ok = true
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// keepOwner gives f the owner and group of like when they differ.
func keepOwner(f *os.File, like os.FileInfo) error {
	uid, gid, ok := fileOwner(like)
	if !ok {
		return nil
	}
	fi, err := f.Stat()
	if err != nil {
		return bare(err)
	}
	if u, g, ok := fileOwner(fi); ok && u == uid && g == gid {
		return nil
	}
	if err := f.Chown(uid, gid); err != nil {
		return fmt.Errorf("uid %d, gid %d: %w", uid, gid, bare(err))
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

	stored, err := s.storedLines()
	if err != nil {
		return nil, err
	}
	inPath := make(map[string]bool, len(path))
	var lines [][]byte
	last := ""
	for _, e := range path {
		if e.Kind == compact.KindLabel {
			continue // re-created below from the resolved labels, as pi does
		}
		rec := s.records[s.pos[e.ID]]
		line, err := rec.currentLine(stored(rec))
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
	added := make(map[string]bool)
	taken := func(id string) bool { return s.has(id) || added[id] }
	for _, target := range sortedKeys(s.labels) {
		if !inPath[target] {
			continue
		}
		le := &compact.Entry{Kind: compact.KindLabel, ID: newID(taken), ParentID: last, Timestamp: s.timestamp(), Meta: &compact.EntryMeta{TargetID: target, Label: s.labels[target]}}
		added[le.ID] = true
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
	if err := writeAtomic(s.fileOps(), out, write, true, nil, nil); err != nil {
		return nil, fmt.Errorf("%s: fork: %w", out, err)
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

// storedLines returns the function giving each record's line as the file
// stores it. Open unescapes strings in place, into the lines themselves
// (see parseOwned), so the lines it changed are read back from the file,
// whose first bytes must still be the ones read: each such line is
// checked against the checksum taken before it changed, and a difference
// is ErrChanged. Read unescapes in place only strings it can escape back
// (see parse): the lines it changed are rebuilt (rebuiltLine). Other
// lines are the bytes held.
func (s *Session) storedLines() (func(*record) []byte, error) {
	held := func(r *record) []byte { return r.raw }
	switch {
	case s.inPlace == 0:
		return held, nil
	case s.data == nil:
		return s.rebuiltLine, nil
	}
	f, err := os.Open(s.file)
	if err != nil {
		return nil, fmt.Errorf("%s: reading the stored lines again: %w", s.name, bare(err))
	}
	defer f.Close()
	again := make([]byte, len(s.data))
	if _, err := io.ReadFull(f, again); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: %w since it was read: it is shorter than the %d bytes read; read it again", s.name, ErrChanged, len(s.data))
		}
		return nil, fmt.Errorf("%s: reading the stored lines again: %w", s.name, bare(err))
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(s.data)))
	at := func(r *record) []byte {
		off := int(uintptr(unsafe.Pointer(unsafe.SliceData(r.raw))) - base)
		return again[off : off+len(r.raw) : off+len(r.raw)]
	}
	for _, r := range s.records {
		if r.inPlace && crc32.ChecksumIEEE(at(r)) != r.crc {
			return nil, fmt.Errorf("%s: %w since it was read: line %d differs; read it again", s.name, ErrChanged, r.line)
		}
	}
	return func(r *record) []byte {
		if r.inPlace {
			return at(r)
		}
		return r.raw
	}, nil
}

// rebuiltLine returns the stored bytes of r's line, read by Read: a copy
// of the line with each string Read unescaped into it escaped again over
// its decoded text (see fastDecoder.rebuild).
func (s *Session) rebuiltLine(r *record) []byte {
	if !r.inPlace {
		return r.raw
	}
	line := bytes.Clone(r.raw)
	base := uintptr(unsafe.Pointer(unsafe.SliceData(r.raw)))
	i, _ := slices.BinarySearchFunc(s.held, base, func(h heldSpan, p uintptr) int { return cmp.Compare(h.at(), p) })
	var scratch []byte
	for _, h := range s.held[i:] {
		off := h.at() - base
		if off >= uintptr(len(line)) {
			break
		}
		scratch = restoreStored(line[off:], r.raw[off:int(off)+h.n], scratch)
	}
	return line
}
