// Package bolt is the proxy's state store for a single machine: one file
// on disk, written through go.etcd.io/bbolt.
//
// bbolt is a B+tree key/value store in pure Go (no cgo, one small
// dependency) that keeps everything in a single memory-mapped file and
// commits each write transaction atomically and durably, with one writer
// at a time and any number of readers. That is what a proxy on one
// machine needs: state that survives a restart, without a server to run.
// Several proxy replicas sharing state need a network store instead; that
// is another package behind the same store.Store interface (Redis).
//
// The file holds four buckets: the records (key → the Record's JSON,
// sealed with an HMAC when Options.RecordKey is set), the
// time of each record's last use, an index of (last use, key) pairs in
// time order, and a small meta bucket (format version, total size of the
// records). The index makes expiry and eviction touch only the records
// they remove.
package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	bbolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/compactkit/compact/proxy/store"
)

// Defaults of the Options that are not limits (see store.DefaultTTL
// and store.DefaultMaxBytes for those).
const (
	// DefaultLockTimeout is how long Open waits for a file that another
	// process holds open.
	DefaultLockTimeout = time.Second
	// DefaultSweepEvery is the period of the background purge of expired
	// records.
	DefaultSweepEvery = time.Hour
)

// touchResolution is the resolution of recorded uses: a Get within this
// long of the record's last recorded use does not write it again, so most
// reads of a busy conversation cost no write transaction.
const touchResolution = time.Second

// formatVersion is the layout of the file, stored in the meta bucket.
const formatVersion = "1"

// ErrLocked is wrapped by Open when another process holds the file.
var ErrLocked = errors.New("state file is in use by another process")

// ErrDamaged is wrapped by Open when the file fails its consistency check,
// and by every call on a Store whose file turned out damaged while it was
// open (bbolt panics on a corrupt page; the Store turns that into this
// error and refuses further calls, so the proxy passes its requests
// through uncompacted and /readyz reports the store). The message says
// how to get out: move the file aside or use another one.
var ErrDamaged = errors.New("damaged")

var (
	bucketRecords = []byte("records")
	bucketUsed    = []byte("used")
	bucketIndex   = []byte("index")
	bucketMeta    = []byte("meta")
	metaVersion   = []byte("version")
	metaBytes     = []byte("bytes")
)

// Options configures a Store. The zero value is ready to use.
type Options struct {
	// MaxBytes bounds the total size of the stored records (the lengths of
	// their JSON encodings, not the file size: bbolt reuses freed pages
	// but never shrinks its file). A Put that goes beyond it evicts the
	// least recently used records, where a Get that finds a record and a
	// Put both count as uses; the record just written is never evicted,
	// so one record larger than MaxBytes is kept alone. 0 means
	// store.DefaultMaxBytes (256 MiB); negative means no limit.
	MaxBytes int64
	// TTL is how long a record lives after its last use. An expired record
	// is never returned; it is deleted by the Get that finds it, by the
	// next Put, or by the periodic sweep. 0 means store.DefaultTTL
	// (7 days); negative means records never expire. Uses are recorded
	// with a resolution of one second.
	TTL time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// LockTimeout is how long Open waits for a file held by another
	// process before it fails with ErrLocked; 0 means DefaultLockTimeout.
	LockTimeout time.Duration
	// SweepEvery is the period of the background sweep that deletes
	// expired records; 0 means DefaultSweepEvery, negative means no sweep
	// (expired records are then deleted only by Get and Put).
	SweepEvery time.Duration
	// Logger receives the errors of the background sweep; nil discards
	// them.
	Logger *slog.Logger
	// RecordKey, when set, authenticates every record (see
	// store.SealRecord): a record that fails the check reads as absent.
	// nil means records are not authenticated.
	RecordKey []byte
}

// Store is a store.Store kept in one bbolt file. It is safe for
// concurrent use. Only one process can have the file open at a time.
type Store struct {
	// evicted counts the records evict dropped (see Evictions).
	evicted  atomic.Uint64
	db       *bbolt.DB
	path     string
	maxBytes int64
	ttl      time.Duration
	now      func() time.Time
	log      *slog.Logger
	key      []byte

	closeOnce sync.Once
	closeErr  error
	stop      chan struct{}
	sweeper   sync.WaitGroup
	// afterSweep, when set (tests), is called after each background
	// sweep; beforeCommit, when set (tests), ends every Put transaction
	// and fails it by returning an error.
	afterSweep   func(n int, err error)
	beforeCommit func() error

	// damaged holds the ErrDamaged error once a call found the file
	// damaged; every later call returns it.
	damaged atomic.Pointer[error]
}

var (
	_ store.Store  = (*Store)(nil)
	_ store.Pinger = (*Store)(nil)
)

// DefaultPath is where the proxy keeps its state file unless told
// otherwise: $XDG_STATE_HOME/compact/proxy.db when XDG_STATE_HOME is an
// absolute path, else ~/.local/state/compact/proxy.db.
func DefaultPath() (string, error) {
	if dir := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "compact", "proxy.db"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("bolt: no place for the state file (set XDG_STATE_HOME or HOME): %w", err)
	}
	return filepath.Join(home, ".local", "state", "compact", "proxy.db"), nil
}

// Open opens the state file at path, creating it (mode 0600) and its
// missing parent directories (mode 0700) when needed, and starts the
// periodic sweep. It fails with an error wrapping ErrLocked when another
// process has the file open, and with an error naming the path when the
// file is not a state file of this format.
func Open(path string, opts Options) (*Store, error) {
	if path == "" {
		return nil, errors.New("bolt: empty state file path")
	}
	s := &Store{
		path:     path,
		maxBytes: opts.MaxBytes,
		ttl:      opts.TTL,
		now:      opts.Now,
		log:      opts.Logger,
		key:      bytes.Clone(opts.RecordKey),
		stop:     make(chan struct{}),
	}
	if s.maxBytes == 0 {
		s.maxBytes = store.DefaultMaxBytes
	}
	if s.ttl == 0 {
		s.ttl = store.DefaultTTL
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	lockTimeout := opts.LockTimeout
	if lockTimeout <= 0 {
		lockTimeout = DefaultLockTimeout
	}
	sweepEvery := opts.SweepEvery
	if sweepEvery == 0 {
		sweepEvery = DefaultSweepEvery
	}

	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("bolt: create the directory of %s: %w", path, err)
	}
	// bbolt reads the freelist at open and panics when it is damaged. (The
	// file handle of such an open is not released; the proxy then exits.)
	var db *bbolt.DB
	err := s.guard(func() (err error) {
		db, err = bbolt.Open(path, 0o600, &bbolt.Options{Timeout: lockTimeout})
		return err
	})
	if errors.Is(err, ErrDamaged) {
		return nil, err
	}
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("bolt: %w: %s (another compact proxy running?)", ErrLocked, path)
	}
	if err != nil {
		return nil, fmt.Errorf("bolt: open %s: %w", path, err)
	}
	s.db = db
	if err := s.update(initFile); err != nil {
		db.Close()
		if errors.Is(err, ErrDamaged) {
			return nil, err
		}
		return nil, fmt.Errorf("bolt: %s: %w", path, err)
	}
	if err := s.check(); err != nil {
		db.Close()
		return nil, err
	}
	if sweepEvery > 0 {
		t := time.NewTicker(sweepEvery)
		s.sweeper.Go(func() {
			defer t.Stop()
			s.sweepLoop(t.C)
		})
	}
	return s, nil
}

// check runs bbolt's consistency check over the whole file (every page
// reachable or free, every key in order) and returns an error wrapping
// ErrDamaged for the first problems it finds.
func (s *Store) check() error {
	var problems []string
	n := 0
	err := s.view(func(tx *bbolt.Tx) error {
		// The check runs in a goroutine of bbolt's that reports its own
		// panics as errors; its channel is drained to the end so that
		// the goroutine finishes.
		for err := range tx.Check() {
			if n < 3 {
				problems = append(problems, err.Error())
			}
			n++
		}
		return nil
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	detail := strings.Join(problems, "; ")
	if n > len(problems) {
		detail += fmt.Sprintf(" (and %d more)", n-len(problems))
	}
	return s.damage(errors.New(detail))
}

// damage records that the file is damaged, with detail saying how, and
// returns the error every later call gets.
func (s *Store) damage(detail error) error {
	// One line: the message ends up on a terminal or in a log.
	what := strings.Join(strings.Fields(detail.Error()), " ")
	err := fmt.Errorf("bolt: state file %s is %w: %s; move it aside (mv %s %s.bad) or start with --store <other path>",
		s.path, ErrDamaged, what, s.path, s.path)
	s.damaged.CompareAndSwap(nil, &err)
	return *s.damaged.Load()
}

// view and update run a bbolt transaction with its panics (a corrupt page,
// a fault on the mapped file) turned into an error wrapping ErrDamaged;
// bbolt rolls the transaction back as the panic unwinds. Once the file is
// known damaged they fail at once.
func (s *Store) view(fn func(*bbolt.Tx) error) error {
	return s.guard(func() error { return s.db.View(fn) })
}

func (s *Store) update(fn func(*bbolt.Tx) error) error {
	return s.guard(func() error { return s.db.Update(fn) })
}

// guard calls f, recovering a panic (and a memory fault, which
// debug.SetPanicOnFault turns into one) as damage.
func (s *Store) guard(f func() error) (err error) {
	if d := s.damaged.Load(); d != nil {
		return *d
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			err = s.damage(fmt.Errorf("%v", p))
		}
	}()
	return f()
}

// Ping implements store.Pinger: it fails, naming the file and what to do,
// once the file is known damaged.
func (s *Store) Ping(ctx context.Context) error {
	if d := s.damaged.Load(); d != nil {
		return *d
	}
	return ctx.Err()
}

// initFile creates the buckets of a new file and checks the format of an
// existing one.
func initFile(tx *bbolt.Tx) error {
	meta, err := tx.CreateBucketIfNotExists(bucketMeta)
	if err != nil {
		return err
	}
	switch v := meta.Get(metaVersion); {
	case v == nil:
		if tx.Bucket(bucketRecords) != nil {
			return errors.New("state file has records but no format version")
		}
		if err := meta.Put(metaVersion, []byte(formatVersion)); err != nil {
			return err
		}
		if err := meta.Put(metaBytes, encodeUint(0)); err != nil {
			return err
		}
	case string(v) != formatVersion:
		return fmt.Errorf("state file has format version %q; this compact reads version %s", v, formatVersion)
	}
	for _, name := range [][]byte{bucketRecords, bucketUsed, bucketIndex} {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return err
		}
	}
	return nil
}

// Path returns the file the store was opened on.
func (s *Store) Path() string { return s.path }

// Get returns the record stored under key, or an error wrapping
// store.ErrNotFound when there is none or it expired. A Get marks the
// record used; when writing that mark fails the record is still returned.
// A value that does not decode is deleted and reported with an error
// wrapping store.ErrCorrupt.
func (s *Store) Get(ctx context.Context, key string) (*store.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := store.CheckKey(key); err != nil {
		return nil, err
	}
	now := s.now()
	k := []byte(key)
	var (
		val   []byte
		used  time.Time
		found bool
	)
	err := s.view(func(tx *bbolt.Tx) error {
		v := tx.Bucket(bucketRecords).Get(k)
		if v == nil {
			return nil
		}
		found = true
		val = bytes.Clone(v)
		used = decodeTime(tx.Bucket(bucketUsed).Get(k))
		return nil
	})
	if err != nil {
		return nil, s.wrap("get", err)
	}
	if !found {
		return nil, fmt.Errorf("bolt: %w", store.ErrNotFound)
	}
	if s.expired(used, now) {
		if err := s.update(func(tx *bbolt.Tx) error { return s.deleteIfExpired(tx, k, now) }); err != nil {
			return nil, s.wrap("delete expired record", err)
		}
		return nil, fmt.Errorf("bolt: %w", store.ErrNotFound)
	}
	plain, err := store.OpenRecord(s.key, key, val)
	if err != nil {
		return nil, fmt.Errorf("bolt: %s: %w", s.path, err)
	}
	var rec store.Record
	if derr := json.Unmarshal(plain, &rec); derr != nil {
		err := s.update(func(tx *bbolt.Tx) error {
			// Delete only the value that failed, not one a Put wrote since.
			if v := tx.Bucket(bucketRecords).Get(k); v != nil && bytes.Equal(v, val) {
				return s.delete(tx, k)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("bolt: %s: %w (deleting it failed: %w): %w", s.path, store.ErrCorrupt, err, derr)
		}
		return nil, fmt.Errorf("bolt: %s: %w (deleted): %w", s.path, store.ErrCorrupt, derr)
	}
	if now.Sub(used) >= touchResolution || now.Before(used) {
		if err := s.update(func(tx *bbolt.Tx) error { return s.touch(tx, k, now) }); err != nil {
			s.log.Warn("proxy state: recording a use failed", "path", s.path, "err", err)
		}
	}
	return &rec, nil
}

// Put stores rec under key, replacing any record there, in one
// transaction that also deletes expired records and, beyond MaxBytes,
// the least recently used ones. When it fails the old record is intact.
func (s *Store) Put(ctx context.Context, key string, rec *store.Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	val, err := store.EncodeRecord(s.key, key, rec)
	if err != nil {
		return fmt.Errorf("bolt: %w", err)
	}
	now := s.now()
	k := []byte(key)
	err = s.update(func(tx *bbolt.Tx) error {
		if err := s.delete(tx, k); err != nil {
			return err
		}
		if err := tx.Bucket(bucketRecords).Put(k, val); err != nil {
			return err
		}
		if err := tx.Bucket(bucketUsed).Put(k, encodeTime(now)); err != nil {
			return err
		}
		if err := tx.Bucket(bucketIndex).Put(indexKey(now, k), nil); err != nil {
			return err
		}
		if err := addBytes(tx, int64(len(val))); err != nil {
			return err
		}
		if _, err := s.purge(tx, now, k); err != nil {
			return err
		}
		if err := s.evict(tx, k); err != nil {
			return err
		}
		if s.beforeCommit != nil {
			return s.beforeCommit()
		}
		return nil
	})
	return s.wrap("put", err)
}

// Sweep deletes the expired records and returns how many it deleted. The
// background sweep calls it; callers may too.
func (s *Store) Sweep(ctx context.Context) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	now := s.now()
	var n int
	err := s.update(func(tx *bbolt.Tx) error {
		var err error
		n, err = s.purge(tx, now, nil)
		return err
	})
	if err != nil {
		return 0, s.wrap("sweep", err)
	}
	return n, nil
}

// Stats returns the number of records held (expired ones not yet deleted
// included) and the total size of their encodings.
func (s *Store) Stats() (records int, bytes int64, err error) {
	err = s.view(func(tx *bbolt.Tx) error {
		records = tx.Bucket(bucketRecords).Stats().KeyN
		bytes = int64(decodeUint(tx.Bucket(bucketMeta).Get(metaBytes)))
		return nil
	})
	return records, bytes, s.wrap("stats", err)
}

// Close stops the sweep and closes the file; later calls fail with
// store.ErrClosed. Closing twice is harmless.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.stop)
		s.sweeper.Wait()
		if err := s.db.Close(); err != nil {
			s.closeErr = fmt.Errorf("bolt: close %s: %w", s.path, err)
		}
	})
	return s.closeErr
}

// sweepLoop runs Sweep on every tick until the store is closed.
func (s *Store) sweepLoop(tick <-chan time.Time) {
	for {
		select {
		case <-s.stop:
			return
		case <-tick:
			n, err := s.Sweep(context.Background())
			if err != nil {
				s.log.Warn("proxy state: sweep failed", "path", s.path, "err", err)
			}
			if s.afterSweep != nil {
				s.afterSweep(n, err)
			}
		}
	}
}

// wrap names the store's file in err, and turns bbolt's "database not
// open" into store.ErrClosed.
func (s *Store) wrap(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrDamaged):
		return err // it names the file and the way out
	case errors.Is(err, berrors.ErrDatabaseNotOpen):
		return fmt.Errorf("bolt: %s %s: %w", op, s.path, store.ErrClosed)
	default:
		return fmt.Errorf("bolt: %s %s: %w", op, s.path, err)
	}
}

// expired reports whether a record last used at used has expired at now.
func (s *Store) expired(used, now time.Time) bool {
	return s.ttl > 0 && now.Sub(used) >= s.ttl
}

// touch records a use of k at now.
func (s *Store) touch(tx *bbolt.Tx, k []byte, now time.Time) error {
	if tx.Bucket(bucketRecords).Get(k) == nil {
		return nil // deleted since it was read
	}
	usedB, index := tx.Bucket(bucketUsed), tx.Bucket(bucketIndex)
	if old := usedB.Get(k); old != nil {
		if err := index.Delete(indexKey(decodeTime(old), k)); err != nil {
			return err
		}
	}
	if err := usedB.Put(k, encodeTime(now)); err != nil {
		return err
	}
	return index.Put(indexKey(now, k), nil)
}

// deleteIfExpired deletes k if it is (still) expired at now.
func (s *Store) deleteIfExpired(tx *bbolt.Tx, k []byte, now time.Time) error {
	if tx.Bucket(bucketRecords).Get(k) == nil {
		return nil
	}
	if !s.expired(decodeTime(tx.Bucket(bucketUsed).Get(k)), now) {
		return nil
	}
	return s.delete(tx, k)
}

// delete removes k's record, use time and index entry, and subtracts its
// size from the total. Deleting a missing key does nothing.
func (s *Store) delete(tx *bbolt.Tx, k []byte) error {
	records := tx.Bucket(bucketRecords)
	v := records.Get(k)
	if v == nil {
		return nil
	}
	size := int64(len(v))
	if err := records.Delete(k); err != nil {
		return err
	}
	usedB := tx.Bucket(bucketUsed)
	if old := usedB.Get(k); old != nil {
		if err := tx.Bucket(bucketIndex).Delete(indexKey(decodeTime(old), k)); err != nil {
			return err
		}
		if err := usedB.Delete(k); err != nil {
			return err
		}
	}
	return addBytes(tx, -size)
}

// purge deletes the records that expired at now, oldest use first, and
// returns how many; it never deletes keep.
func (s *Store) purge(tx *bbolt.Tx, now time.Time, keep []byte) (int, error) {
	if s.ttl <= 0 {
		return 0, nil
	}
	n := 0
	err := s.eachOldest(tx, keep, func(used time.Time) bool { return s.expired(used, now) }, func() { n++ })
	return n, err
}

// evict deletes the least recently used records while the total size is
// over MaxBytes, never deleting keep.
func (s *Store) evict(tx *bbolt.Tx, keep []byte) error {
	if s.maxBytes <= 0 {
		return nil
	}
	meta := tx.Bucket(bucketMeta)
	n := uint64(0)
	err := s.eachOldest(tx, keep, func(time.Time) bool {
		return int64(decodeUint(meta.Get(metaBytes))) > s.maxBytes
	}, func() { n++ })
	if n > 0 {
		// Counted when the transaction commits (see Put), so a rolled
		// back eviction is not.
		tx.OnCommit(func() { s.evicted.Add(n) })
	}
	return err
}

// Evictions reports how many records were dropped to stay under
// MaxBytes since the store was opened (expired ones are not counted); see
// store.Evicter.
func (s *Store) Evictions() uint64 { return s.evicted.Load() }

// eachOldest deletes records from the oldest use on while more(use time)
// holds, stopping at keep, and calls deleted after each one. Index
// entries that point at nothing (left by an older bug or a torn manual
// edit) are dropped on the way.
func (s *Store) eachOldest(tx *bbolt.Tx, keep []byte, more func(used time.Time) bool, deleted func()) error {
	index, usedB := tx.Bucket(bucketIndex), tx.Bucket(bucketUsed)
	for {
		// A fresh cursor each round: deleting under a cursor can make it
		// skip entries. The key is copied because deletes invalidate it.
		ik, _ := index.Cursor().First()
		if ik == nil {
			return nil
		}
		ik = bytes.Clone(ik)
		used, k, ok := splitIndexKey(ik)
		if !ok || !bytes.Equal(usedB.Get(k), ik[:8]) {
			// A stale or malformed entry: drop it.
			if err := index.Delete(ik); err != nil {
				return err
			}
			continue
		}
		if bytes.Equal(k, keep) || !more(used) {
			return nil
		}
		if err := s.delete(tx, k); err != nil {
			return err
		}
		deleted()
	}
}

// addBytes adds delta to the stored total size.
func addBytes(tx *bbolt.Tx, delta int64) error {
	meta := tx.Bucket(bucketMeta)
	total := int64(decodeUint(meta.Get(metaBytes))) + delta
	if total < 0 {
		total = 0
	}
	return meta.Put(metaBytes, encodeUint(uint64(total)))
}

// encodeTime encodes t as 8 big-endian bytes that sort in time order
// (Unix nanoseconds with the sign bit flipped).
func encodeTime(t time.Time) []byte {
	return encodeUint(uint64(t.UnixNano()) ^ 1<<63)
}

// decodeTime reverses encodeTime; a malformed value reads as the zero
// Unix time, which expires.
func decodeTime(b []byte) time.Time {
	if len(b) != 8 {
		return time.Unix(0, 0)
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(b)^1<<63))
}

func encodeUint(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }

func decodeUint(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

// indexKey is the index entry of k last used at t: time first, so the
// index iterates from the least recently used record.
func indexKey(t time.Time, k []byte) []byte {
	return append(encodeTime(t), k...)
}

// splitIndexKey reverses indexKey.
func splitIndexKey(ik []byte) (time.Time, []byte, bool) {
	if len(ik) <= 8 {
		return time.Time{}, nil, false
	}
	return decodeTime(ik[:8]), ik[8:], true
}

// List implements store.Lister: one read transaction walks the records
// bucket in key order from the cursor, leaving out expired and unreadable
// records, and marks nothing used.
func (s *Store) List(ctx context.Context, q store.ListQuery) (store.ListPage, error) {
	if err := ctx.Err(); err != nil {
		return store.ListPage{}, err
	}
	q, err := q.Normalize()
	if err != nil {
		return store.ListPage{}, err
	}
	now := s.now()
	var page store.ListPage
	err = s.view(func(tx *bbolt.Tx) error {
		usedB := tx.Bucket(bucketUsed)
		c := tx.Bucket(bucketRecords).Cursor()
		start := q.Prefix
		if q.After > start {
			start = q.After
		}
		var last string
		for k, v := c.Seek([]byte(start)); k != nil && strings.HasPrefix(string(k), q.Prefix); k, v = c.Next() {
			key := string(k)
			if key <= q.After {
				continue
			}
			if len(page.Records) == q.Limit {
				page.Next = last
				return nil
			}
			last = key
			if s.expired(decodeTime(usedB.Get(k)), now) {
				continue
			}
			// v lives only as long as the transaction: decoding copies it.
			if rec := store.DecodeListed(s.key, key, v); rec != nil {
				page.Records = append(page.Records, store.Listed{Key: key, Record: rec})
			}
		}
		return nil
	})
	if err != nil {
		return store.ListPage{}, s.wrap("list", err)
	}
	return page, nil
}
