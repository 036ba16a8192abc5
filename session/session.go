// Package session reads and writes pi coding-agent session files: JSONL,
// one entry per line after a "session" header, entries linked into a tree
// by id and parentId.
//
// Reading is lossless. Every entry keeps the exact bytes it was read from,
// so unknown entry types and unknown fields are written back unchanged;
// files of versions 1 and 2 are migrated in memory and rewritten only on
// request (Session.Migrate), through a temporary file, fsync and rename,
// keeping the file's mode and owner and writing through symbolic links.
// Members of a message or content block that compact.Message does not
// model (api, tool result details, thinking signatures, ...) are kept in
// its Extra maps, so EncodeMessage writes them back.
// Appending writes one complete line with a single write on an O_APPEND
// descriptor and fsyncs it; a write that fails part way (a full disk) is
// undone by truncating the file back. A last line cut short by a crash is
// reported and skipped on read, and the next append starts on a fresh line
// instead of gluing onto it. A cut-short line with lines after it (so also
// one an append has stepped over) is an error unless Options.Lenient, since
// entries may be lost around it. A line holding several complete entries
// (a lost newline) is read as those entries, with a warning. A file that
// looks like another agent's transcript or a JSON document fails with
// ErrNotSession, naming the format.
//
// Writers take an advisory lock on the file (flock, where the system has
// it) and check under it that the file is still the one read, at the size
// read; otherwise they fail with ErrChanged, and the caller reads the file
// again. The lock binds only the writers of this package: pi takes none,
// and attaches its next entry to the leaf it holds in memory, so an entry
// appended here while pi runs on the session ends up on a side branch.
//
// Every command starts by loading a session of a few megabytes, so entry
// lines are decoded by hand-written code (fast.go) rather than by a JSON
// library: one pass over each line builds the entry, its message, parts,
// tool calls, usage and Extra maps directly, with no intermediate structs
// and no second scan for the extras. Strings are not copied: they point
// into the buffer the file was read into, which is kept anyway for the
// raw lines, and Open unescapes the strings with escapes (most text, for
// its newlines) in place, into their own stored bytes, so the decoded
// text costs no memory beyond the file's size. The lines so changed are
// read back from the file, and checked against a CRC-32 taken before the
// change, when the session is written out (Migrate, Fork). Read cannot
// read its lines again, so it unescapes in place only the strings whose
// escapes are all ones JSON.stringify writes (every string pi writes):
// such a string's stored bytes are its decoded text escaped again, which
// is how the lines it changed are rebuilt; it copies the other escaped
// strings out. On amd64 the string scanner finds the bytes that end a
// run of plain text sixteen at a time with SSE2 (internal/swar).
// Entries, messages and parts are allocated in batches, and the lines of
// files from half a megabyte up are decoded on all cores. Token
// estimates are not computed while loading: each message computes its
// own on first use (compact.Message.Tokens), as pi estimates when it
// plans, so commands that never plan (context, tree, import) do not pay
// for them. The fast path takes only what it can decode
// exactly like the reference path, which decodes into wire structs with
// github.com/goccy/go-json and then scans the line for the extras; any
// other line (invalid JSON, a value of an unexpected type, a member name
// repeated or differing from a known one only in case, ...) goes through
// the reference path, which remains the definition of the format.
// Differential tests over the fixtures and random lines, and a fuzz
// target, hold the two paths to the same results. On a 2-core machine,
// timed in the same rounds as pi's own loader (scripts/bench-vs-pi.sh,
// BENCHMARKS.md), parsing and migrating pi's 974 KB and 2.4 MB fixtures
// in a benchmark loop took 0.91 and 1.30 ms against pi's 2.77 and 4.91
// ms (node 20), and loading them (reading the file, parsing, the path
// and its context) 1.36 and 1.89 ms against 4.87 and 9.53 ms, both
// decoded on two goroutines. No line of either fixture needs the
// reference path.
//
// The hand decoder is kept, rather than a maintained library, because
// none comes near it (bench/decoders, BENCHMARKS.md, "Session decoder:
// hand-written against maintained decoders"). Through ParseWith each
// library decodes the lines into the wire structs, mapped to the same
// entries; on the two real sessions, under load, the whole parse then
// takes 1.35-1.72x the hand decoder's CPU time with bytedance/sonic
// (ConfigDefault, ConfigFastest), 1.6x with goccy/go-json, about 2x with
// encoding/json/v2 (and its go-json-experiment prototype) and 3.5-3.9x
// with encoding/json, where replacing it needed at most 1.1x; the
// libraries allocate 8-18x the objects and raise the peak resident set
// from 1.9-2.5x the file size to 2.9-9.3x. minio/simdjson-go (v0.4.5,
// AVX2 and AVX-512) takes 1.55 ms for its tape of the 974 KB fixture
// alone, more than the whole hand parse (1.34 ms). With a
// JSON decoder that cost nothing, the parse through the wire structs
// (mapping them, the second scan for the extras, and the rest) would
// still take 0.7-0.9x of the hand decoder's time. goccy/go-json
// stays the reference path: the fastest library on a 50 MB session
// (1.18x) and among the fastest on the real ones, pure Go.
package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
)

// Session is a session file loaded in memory. It implements compact.Log:
// Path is the branch ending at the current leaf, Append writes to the file.
// A Session is not safe for concurrent use.
type Session struct {
	name       string
	file       string // "" when read from a reader: appends stay in memory
	size       int64  // file size when read, to detect concurrent writers
	opts       Options
	header     Header
	headerRaw  []byte
	headerLine int
	records    []*record
	// pos maps an id to its record in records: the one index of the
	// entries (a second map from id to entry would cost some 50 bytes
	// per entry for what records[pos[id]] gives).
	pos      map[string]int
	leaf     string
	labels   map[string]string
	warnings []string
	skipped  []int
	tornLine int
	v1       bool
	v1Index  []v1Ref
	// lines is the number of lines in the file (the last one possibly
	// without a newline); an appended entry lands on line lines+1.
	lines int
	// nextIndex is the version 1 file index (header at 0) of the next
	// appended entry.
	nextIndex int
	// endsWithNewline is false when the file's last byte is not a newline
	// (a torn write): the next append then starts with one.
	endsWithNewline bool
	now             func() time.Time
	// data is the file's bytes when Open unescaped strings in place
	// (parseOwned); inPlace counts the records whose lines changed. held
	// is where Read unescaped strings in place instead (see parse), by
	// address: the lines changed are rebuilt from it (storedLines).
	data    []byte
	inPlace int
	held    []heldSpan
	// ops are the file calls writes make; nil means the real ones.
	// Tests set it to inject faults.
	ops fileOps
}

// Name returns the file name the session was read from.
func (s *Session) Name() string { return s.name }

// Header returns the session header as stored.
func (s *Session) Header() Header { return s.header }

// Warnings returns the warnings produced while reading and writing.
func (s *Session) Warnings() []string { return s.warnings }

// TornLine returns the line number of a line cut short by an interrupted
// write, 0 if none.
func (s *Session) TornLine() int { return s.tornLine }

// SkippedLines returns the malformed lines skipped in lenient mode.
func (s *Session) SkippedLines() []int { return s.skipped }

// NeedsMigration reports whether the file is older than CurrentVersion.
func (s *Session) NeedsMigration() bool { return s.header.Version < CurrentVersion }

// Entries returns every entry in file order (the header excluded). The
// entries are shared with the session; do not modify them.
func (s *Session) Entries() []*compact.Entry {
	out := make([]*compact.Entry, len(s.records))
	for i, r := range s.records {
		out[i] = r.entry
	}
	return out
}

// Len returns the number of entries, len(Entries()) without the copy.
func (s *Session) Len() int { return len(s.records) }

// Entry returns the entry with the given id, or nil.
func (s *Session) Entry(id string) *compact.Entry {
	if i, ok := s.pos[id]; ok {
		return s.records[i].entry
	}
	return nil
}

// has reports whether an entry has the id.
func (s *Session) has(id string) bool {
	_, ok := s.pos[id]
	return ok
}

// Index returns the position of the entry in Entries (0 for the first
// entry), or -1. pi's version 1 firstKeptEntryIndex counts the header
// too, and so is one more for files without skipped lines.
func (s *Session) Index(id string) int {
	if i, ok := s.pos[id]; ok {
		return i
	}
	return -1
}

// Line returns the 1-based line number of an entry in the file, 0 for an
// unknown id or an entry appended to a session read from a reader.
func (s *Session) Line(id string) int {
	if i, ok := s.pos[id]; ok {
		return s.records[i].line
	}
	return 0
}

// Leaf returns the id of the current leaf: the last entry, unless Branch
// moved it. It is "" for a session without entries.
func (s *Session) Leaf() string { return s.leaf }

// Branch moves the leaf to the entry id. The next Append becomes a child
// of that entry, starting a new branch; nothing is written.
func (s *Session) Branch(id string) error {
	if !s.has(id) {
		return fmt.Errorf("%s: branch to %q: %w", s.name, id, compact.ErrNoEntry)
	}
	s.leaf = id
	return nil
}

// Path returns the entries from the root to the current leaf. It
// implements compact.Log.
func (s *Session) Path() []*compact.Entry {
	p, _ := s.PathTo(s.leaf)
	return p
}

// PathTo returns the entries from the root to the entry id.
func (s *Session) PathTo(id string) ([]*compact.Entry, error) {
	if len(s.records) == 0 {
		return nil, nil
	}
	if id == "" {
		id = s.leaf
	}
	i, ok := len(s.records)-1, true
	if id != "" {
		if i, ok = s.pos[id]; !ok {
			return nil, fmt.Errorf("%s: entry %q: %w", s.name, id, compact.ErrNoEntry)
		}
	}
	// Count the path first, so that it is allocated once at its size (a
	// path of a large session is most of its entries).
	n := 0
	for j := i; ; j = int(s.records[j].parent) {
		// A path longer than the number of entries has met an entry twice.
		if n >= len(s.records) {
			return nil, fmt.Errorf("%s: entry %q: parent links form a cycle", s.name, s.records[j].entry.ID)
		}
		n++
		if s.records[j].parent < 0 {
			break
		}
	}
	path := make([]*compact.Entry, n)
	for j := i; n > 0; j = int(s.records[j].parent) {
		n--
		path[n] = s.records[j].entry
	}
	return path, nil
}

// Context returns what the model sees at the current leaf. When no entry
// names the model, the version 1 header's model is used.
func (s *Session) Context() *compact.Context {
	c := compact.BuildContext(s.Path())
	if c.Model == "" {
		c.Provider, c.Model = s.header.Provider, s.header.ModelID
	}
	return c
}

// Label returns the label of an entry, "" if none.
func (s *Session) Label(id string) string { return s.labels[id] }

// Labels returns every labelled entry id with its label.
func (s *Session) Labels() map[string]string {
	out := make(map[string]string, len(s.labels))
	for k, v := range s.labels {
		out[k] = v
	}
	return out
}

func (s *Session) timestamp() string {
	now := time.Now
	if s.now != nil {
		now = s.now
	}
	return jsonrec.Stamp(now())
}

// ErrChanged is the error of a write refused because the session file
// changed since it was read: another process appended to it, or put
// another file in its place. Writing anyway would attach the new entry to
// a stale leaf, off the path the other writer continues. Read the file
// again and plan anew; test for it with errors.Is.
var ErrChanged = errors.New("the file changed")

// ErrTornEnd is part of an append's error when the file ends with an
// incomplete line and the session was read without Options.Lenient:
// appending would move that line into the middle of the file, which then
// reads only in lenient mode.
var ErrTornEnd = errors.New("the file ends with an incomplete line")

// ErrNewerVersion is part of an append's error when the file's header
// names a session format version newer than CurrentVersion: such a file
// is read as well as its entries allow, but an entry written in the
// older format could mean something else to the pi that wrote it, so
// nothing is appended to it.
var ErrNewerVersion = errors.New("written in a newer session format")

// Appendable returns the error Append would fail with before writing
// anything because of the file itself: a file in a newer format than this
// package writes (ErrNewerVersion), a file that cannot be written
// (read-only, wrapping fs.ErrPermission), or an incomplete last line in a
// session read without Options.Lenient (ErrTornEnd). It writes nothing.
// Commands call it before spending a model call on an entry they could
// not append.
func (s *Session) Appendable() error {
	if s.file == "" {
		return nil
	}
	if v := s.header.Version; v > CurrentVersion {
		return fmt.Errorf("%s:%d: append: %w (version %d; compact writes version %d): nothing is appended to it; inspect, context, tree and report still read it",
			s.name, s.headerLine, ErrNewerVersion, v, CurrentVersion)
	}
	fi, err := os.Stat(s.file)
	if err != nil {
		return fmt.Errorf("%s: append: %w", s.name, err)
	}
	if err := checkWritable(fi); err != nil {
		return fmt.Errorf("%s: append: %w", s.name, err)
	}
	// Opening for appending writes nothing; it finds what the mode alone
	// does not tell (another owner, a read-only mount).
	f, err := os.OpenFile(s.file, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("%s: append: %w", s.name, err)
	}
	f.Close()
	if s.tornLine == 0 || s.opts.Lenient {
		return nil
	}
	// The append would start on a fresh line and leave the cut line in
	// the middle of the file, where reading it needs Options.Lenient:
	// ask for that choice instead of making it.
	return fmt.Errorf("%s:%d: append: %w (an interrupted write?); an entry appended now would leave it in the middle "+
		"of the file, readable only with --lenient: use --lenient to append anyway, or remove that line first", s.name, s.tornLine, ErrTornEnd)
}

// Append writes e as a child of the current leaf and makes it the leaf.
// Empty ID, ParentID and Timestamp are filled in.
//
// The line is written with one write on an O_APPEND descriptor and
// fsynced before Append returns, under the write lock (see lock.go),
// which it waits for until ctx is done. With the lock held it checks that
// the file is still the one read, at the size read, and fails with
// ErrChanged otherwise, rather than guessing the leaf; it refuses a file
// whose mode allows no writing. A write or fsync that fails (a full disk)
// is undone by truncating the file back to its former size, so a failed
// Append leaves the file as it was, and the error says so; when it cannot
// be undone, the error wraps ErrPartialLine. A file that ends with an
// incomplete line is appended to only in lenient mode (ErrTornEnd). On
// error nothing was
// recorded in memory and e is left as it was given.
func (s *Session) Append(ctx context.Context, e *compact.Entry) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	orig := *e
	defer func() {
		if err != nil {
			e.ID, e.ParentID, e.Timestamp = orig.ID, orig.ParentID, orig.Timestamp
		}
	}()
	if e.ID == "" {
		e.ID = newID(s.has)
	} else if s.has(e.ID) {
		return fmt.Errorf("%s: append: entry id %q is already used", s.name, e.ID)
	}
	if e.ParentID == "" {
		e.ParentID = s.leaf
	} else if !s.has(e.ParentID) {
		return fmt.Errorf("%s: append: parent %q: %w", s.name, e.ParentID, compact.ErrNoEntry)
	}
	if e.Timestamp == "" {
		e.Timestamp = s.timestamp()
	}
	keptIndex := -1
	if s.v1 && e.Kind == compact.KindCompaction && e.Compaction != nil {
		// Version 1 readers (pi's migration) resolve the kept entry by
		// its index, the header counted.
		if i, ok := s.pos[e.Compaction.FirstKeptID]; ok {
			keptIndex = s.records[i].fileIndex
		}
	}
	line, err := encodeEntry(e, keptIndex)
	if err != nil {
		return fmt.Errorf("%s: append %s entry: %w", s.name, e.Kind, err)
	}
	rec := &record{entry: e, raw: line, fileIndex: s.nextIndex, keptIndex: keptIndex >= 0, parent: s.parentOf(e)}
	if s.file != "" {
		if err := s.Appendable(); err != nil {
			return err
		}
		if err := s.appendLine(ctx, line); err != nil {
			return err
		}
		rec.line = s.lines
	}
	s.nextIndex++
	s.records = append(s.records, rec)
	s.pos[e.ID] = len(s.records) - 1
	s.leaf = e.ID
	s.noteLabel(e)
	return nil
}

func (s *Session) appendLine(ctx context.Context, line []byte) error {
	f, err := os.OpenFile(s.file, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("%s: append: %w", s.name, err)
	}
	defer f.Close() // also releases the lock
	ops := s.fileOps()
	if err := ops.lock(ctx, f); err != nil {
		return fmt.Errorf("%s: append: %w", s.name, err)
	}
	if err := s.checkUnchanged(f); err != nil {
		return fmt.Errorf("%s: append: %w", s.name, err)
	}
	buf := make([]byte, 0, len(line)+2)
	if !s.endsWithNewline {
		buf = append(buf, '\n')
	}
	buf = append(buf, line...)
	buf = append(buf, '\n')
	n, err := ops.write(f, buf)
	what := "writing"
	if err == nil && n < len(buf) {
		err = io.ErrShortWrite
	}
	if err == nil {
		what = "fsync"
		err = ops.sync(f)
	}
	if err != nil {
		written := int64(len(buf))
		if what == "writing" {
			written = int64(max(n, 0))
		}
		note, undoErr := s.undoAppend(f, ops, written)
		if undoErr != nil {
			return fmt.Errorf("%s: append: %s %d bytes: %w; %w", s.name, what, len(buf), bare(err), undoErr)
		}
		return fmt.Errorf("%s: append: %s %d bytes: %w; %s", s.name, what, len(buf), bare(err), note)
	}
	// The line is on disk: an error closing the file changes nothing
	// about that, so it is not reported as a failed append.
	s.wrote(buf)
	return nil
}

// ErrPartialLine is part of an append's error when the failed write could
// not be undone: the file may then end with a partial line. Readers skip
// such a line with a warning, and the next append starts on a new line,
// but the file is not as it was.
var ErrPartialLine = errors.New("the file may end with a partial line")

// undoAppend cuts the file back to the size it had before a failed
// append, so that a partial line (a full disk) or a line whose fsync
// failed does not stay behind for the next writer to glue onto; written
// is how much of the line reached the file. It returns what it did, for
// the error message, or an error wrapping ErrPartialLine when it could
// not: when truncating fails, or when the file grew by more than the
// line (a writer that takes no lock appended after it, and truncating
// would cut that off). The session's size is then left as it was, so its
// next Append refuses with ErrChanged rather than write after an unknown
// tail.
func (s *Session) undoAppend(f *os.File, ops fileOps, written int64) (string, error) {
	partial := func(why string, args ...any) error {
		return fmt.Errorf("%s: %w, which readers skip with a warning", fmt.Sprintf(why, args...), ErrPartialLine)
	}
	fi, err := f.Stat()
	if err != nil {
		return "", partial("not truncating the file back to its %d bytes, as its size is unknown (%v)", s.size, bare(err))
	}
	if fi.Size() != s.size+written {
		return "", partial("not truncating the file back to its %d bytes, as another process wrote after the line (%d bytes now)", s.size, fi.Size())
	}
	if err := ops.truncate(f, s.size); err != nil {
		return "", partial("truncating the file back to its %d bytes failed too (%v)", s.size, bare(err))
	}
	if err := ops.sync(f); err != nil {
		return fmt.Sprintf("the file was truncated back to its %d bytes, unchanged, though syncing that failed too (%v)", s.size, bare(err)), nil
	}
	return fmt.Sprintf("the file was truncated back to its %d bytes, unchanged", s.size), nil
}

// checkUnchanged makes sure, with the lock held, that the open file f is
// still the file the session was read from, at the size it was read at,
// and that its mode allows writing.
func (s *Session) checkUnchanged(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return bare(err)
	}
	if err := checkWritable(fi); err != nil {
		return err
	}
	now, err := os.Stat(s.file)
	if err != nil {
		return bare(err)
	}
	if !os.SameFile(fi, now) {
		return fmt.Errorf("%w since it was read: another file was put in its place; read it again", ErrChanged)
	}
	if fi.Size() != s.size {
		return fmt.Errorf("%w since it was read (%d bytes then, %d now); read it again", ErrChanged, s.size, fi.Size())
	}
	return nil
}

// checkWritable refuses a file whose mode grants write permission to
// nobody. A process that may write anyway (root) refuses as well: a
// read-only session file is one its owner wants left alone.
func checkWritable(fi os.FileInfo) error {
	if perm := fi.Mode().Perm(); perm&0o222 == 0 {
		return fmt.Errorf("the file is read-only (mode %04o): %w", perm, fs.ErrPermission)
	}
	return nil
}

// wrote accounts for bytes added to the end of the file: its size, its
// line count and whether it ends with a newline.
func (s *Session) wrote(b []byte) {
	s.size += int64(len(b))
	for _, c := range b {
		if s.endsWithNewline && c != '\n' {
			s.lines++
		}
		s.endsWithNewline = c == '\n'
	}
}

// AppendMessage appends a message entry and returns it.
func (s *Session) AppendMessage(ctx context.Context, m *compact.Message) (*compact.Entry, error) {
	e := &compact.Entry{Kind: compact.KindMessage, Message: m}
	if err := s.Append(ctx, e); err != nil {
		return nil, err
	}
	return e, nil
}

// SetLabel appends a label entry naming the target; an empty label clears
// it.
func (s *Session) SetLabel(ctx context.Context, targetID, label string) error {
	if !s.has(targetID) {
		return fmt.Errorf("%s: label %q: %w", s.name, targetID, compact.ErrNoEntry)
	}
	return s.Append(ctx, &compact.Entry{Kind: compact.KindLabel, Meta: &compact.EntryMeta{TargetID: targetID, Label: label}})
}

// Node is an entry in the session tree.
type Node struct {
	Entry    *compact.Entry
	Label    string
	Children []*Node
}

// Tree returns the session's entries as a forest: normally one root. Each
// entry appears exactly once, so walking the forest always ends. An entry
// whose parent is missing is a root. A parent id names the last entry with
// that id (files read in lenient mode may repeat ids). Parent links that
// loop (possible only in lenient mode) are cut at the loop's first entry
// in file order, which becomes a root. Children are in file order.
func (s *Session) Tree() []*Node {
	n := len(s.records)
	parent := make([]int, n)
	for i, r := range s.records {
		parent[i] = -1
		if j := int(r.parent); j >= 0 && j != i {
			parent[i] = j
		}
	}
	cutCycles(parent)
	nodes := make([]Node, n)
	var roots []*Node
	for i, r := range s.records {
		nodes[i] = Node{Entry: r.entry, Label: s.labels[r.entry.ID]}
	}
	for i := range nodes {
		if p := parent[i]; p >= 0 {
			nodes[p].Children = append(nodes[p].Children, &nodes[i])
		} else {
			roots = append(roots, &nodes[i])
		}
	}
	return roots
}

// cutCycles makes the parent links (indexes, -1 for none) a forest: in
// each loop, the link of the member with the lowest index is removed.
// Every index is visited a bounded number of times.
func cutCycles(parent []int) {
	const (
		unseen = iota
		open
		done
	)
	state := make([]uint8, len(parent))
	var chain []int
	for i := range parent {
		chain = chain[:0]
		j := i
		for j >= 0 && state[j] == unseen {
			state[j] = open
			chain = append(chain, j)
			j = parent[j]
		}
		if j >= 0 && state[j] == open {
			// j is on the chain just walked: the loop is j, parent[j], ...
			low := j
			for k := parent[j]; k != j; k = parent[k] {
				low = min(low, k)
			}
			parent[low] = -1
		}
		for _, c := range chain {
			state[c] = done
		}
	}
}

// sortedKeys returns a map's keys in order.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
