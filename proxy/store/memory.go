package store

import (
	"bytes"
	"container/list"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// MemoryOptions configures a Memory. The zero value is ready to use.
type MemoryOptions struct {
	// MaxBytes bounds the total size of the stored records, counted as
	// the length of their JSON encodings. A Put that goes beyond it evicts
	// the least recently used records (used: found by Get, or written by
	// Put) until the total fits again; the record just written is never
	// evicted, so one record larger than MaxBytes is kept alone. 0 means
	// DefaultMaxBytes; a negative value means no limit.
	MaxBytes int64
	// TTL is how long a record lives after its last use; an expired
	// record is never returned and is dropped on the next Get or Put. 0
	// means DefaultTTL; a negative value means records never expire.
	TTL time.Duration
	// Now is the clock; nil means time.Now. Tests pass a fake one.
	Now func() time.Time
	// RecordKey, when set, authenticates every record (see SealRecord);
	// nil means records are not authenticated.
	RecordKey []byte
}

// Memory is a Store that lives in the process's memory and is lost when
// it exits: for tests and for running the proxy without a state file
// (compact proxy --store memory). It applies the same size limit and
// expiry as the file store. Records are kept JSON-encoded, like the other
// stores do, so a caller never shares memory with a stored record and the
// size limit means the same thing everywhere.
type Memory struct {
	maxBytes int64
	ttl      time.Duration
	now      func() time.Time
	key      []byte

	mu     sync.Mutex
	closed bool
	byKey  map[string]*list.Element
	// order holds *memEntry from the least recently used (front) to the
	// most recently used (back), so eviction and expiry take the front.
	order *list.List
	bytes int64
	// evicted counts the records purge dropped for size (see Evictions).
	evicted uint64

	// locks are the held locks (see memlock.go), by key.
	locks map[string]memLockState
}

// memEntry is one record of a Memory.
type memEntry struct {
	key  string
	val  []byte
	used time.Time
}

// NewMemory returns an empty Memory.
func NewMemory(opts MemoryOptions) *Memory {
	s := &Memory{
		maxBytes: opts.MaxBytes,
		ttl:      opts.TTL,
		now:      opts.Now,
		key:      bytes.Clone(opts.RecordKey),
		byKey:    make(map[string]*list.Element),
		order:    list.New(),
	}
	if s.maxBytes == 0 {
		s.maxBytes = DefaultMaxBytes
	}
	if s.ttl == 0 {
		s.ttl = DefaultTTL
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// Get returns the record stored under key and marks it used, or an error
// wrapping ErrNotFound when there is none or it expired.
func (s *Memory) Get(ctx context.Context, key string) (*Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	now := s.now()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	el, ok := s.byKey[key]
	if !ok {
		s.mu.Unlock()
		return nil, fmt.Errorf("memory store: %w", ErrNotFound)
	}
	e := el.Value.(*memEntry)
	if s.expired(e, now) {
		s.remove(el)
		s.mu.Unlock()
		return nil, fmt.Errorf("memory store: %w", ErrNotFound)
	}
	e.used = now
	s.order.MoveToBack(el)
	val := e.val
	s.mu.Unlock()

	// An entry's val is never modified once stored (Put replaces the
	// entry), so it can be decoded outside the lock.
	val, err := OpenRecord(s.key, key, val)
	if err != nil {
		return nil, fmt.Errorf("memory store: %w", err)
	}
	var rec Record
	if err := json.Unmarshal(val, &rec); err != nil {
		s.mu.Lock()
		if el, ok := s.byKey[key]; ok && el.Value.(*memEntry) == e {
			s.remove(el)
		}
		s.mu.Unlock()
		return nil, fmt.Errorf("memory store: %w (deleted): %w", ErrCorrupt, err)
	}
	return &rec, nil
}

// Put stores rec under key, replacing any record there, and marks it
// used. It drops expired records and, beyond MaxBytes, the least recently
// used ones.
func (s *Memory) Put(ctx context.Context, key string, rec *Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	val, err := EncodeRecord(s.key, key, rec)
	if err != nil {
		return fmt.Errorf("memory store: %w", err)
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.putLocked(key, val, now)
	return nil
}

// PutLast implements LastStore: the record's Last is replaced under the
// store's lock, so a checkpoint another server sharing the store writes
// meanwhile is kept. A key without a (live, readable) record gets a record
// holding last alone.
func (s *Memory) PutLast(ctx context.Context, key string, last *LastCall) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := CheckKey(key); err != nil {
		return err
	}
	if last == nil {
		return fmt.Errorf("memory store: nil last call")
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	var rec Record
	if el, ok := s.byKey[key]; ok {
		if e := el.Value.(*memEntry); !s.expired(e, now) {
			if val, err := OpenRecord(s.key, key, e.val); err != nil || json.Unmarshal(val, &rec) != nil {
				rec = Record{}
			}
		}
	}
	rec.Last = last
	rec.Updated = now.UTC()
	val, err := EncodeRecord(s.key, key, &rec)
	if err != nil {
		return fmt.Errorf("memory store: %w", err)
	}
	s.putLocked(key, val, now)
	return nil
}

// putLocked stores val under key; s.mu is held.
func (s *Memory) putLocked(key string, val []byte, now time.Time) {
	if el, ok := s.byKey[key]; ok {
		s.remove(el)
	}
	el := s.order.PushBack(&memEntry{key: key, val: val, used: now})
	s.byKey[key] = el
	s.bytes += int64(len(val))
	s.purge(now, el)
}

// Close empties the store; later calls return ErrClosed. Closing twice is
// harmless.
func (s *Memory) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.byKey = nil
	s.order.Init()
	s.bytes = 0
	return nil
}

// Len returns the number of records held (expired ones not yet dropped
// included) and the total size of their encodings.
func (s *Memory) Len() (records int, bytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.order.Len(), s.bytes
}

// Keys returns the keys of the records held (expired ones not yet dropped
// included), from the least recently used to the most recently used.
func (s *Memory) Keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, s.order.Len())
	for el := s.order.Front(); el != nil; el = el.Next() {
		keys = append(keys, el.Value.(*memEntry).key)
	}
	return keys
}

// Raw returns a copy of the bytes the store keeps for key (the record's
// JSON encoding, sealed when MemoryOptions.RecordKey is set), nil when it
// holds none. With SetRaw it lets a test play someone with write access
// to the storage, as the storetest suite does with every store; the proxy
// never calls them.
func (s *Memory) Raw(key string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.byKey[key]; ok {
		return bytes.Clone(el.Value.(*memEntry).val)
	}
	return nil
}

// SetRaw replaces the bytes the store keeps for key with val, as they
// are: no encoding, no seal, no key check (see Raw).
func (s *Memory) SetRaw(key string, val []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.putLocked(key, bytes.Clone(val), s.now())
}

// expired reports whether e's last use is a TTL or more before now.
func (s *Memory) expired(e *memEntry, now time.Time) bool {
	return s.ttl > 0 && now.Sub(e.used) >= s.ttl
}

// purge drops expired records from the least recently used end, then
// evicts from that end while the total is over the limit, stopping at
// keep. The caller holds s.mu.
func (s *Memory) purge(now time.Time, keep *list.Element) {
	for el := s.order.Front(); el != nil && el != keep && s.expired(el.Value.(*memEntry), now); el = s.order.Front() {
		s.remove(el)
	}
	for el := s.order.Front(); el != nil && el != keep && s.maxBytes > 0 && s.bytes > s.maxBytes; el = s.order.Front() {
		s.remove(el)
		s.evicted++
	}
}

// Evictions reports how many records were dropped to stay under
// MaxBytes (expired ones are not counted); see Evicter.
func (s *Memory) Evictions() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.evicted
}

// remove deletes el's record. The caller holds s.mu.
func (s *Memory) remove(el *list.Element) {
	e := el.Value.(*memEntry)
	s.order.Remove(el)
	delete(s.byKey, e.key)
	s.bytes -= int64(len(e.val))
}

// List implements Lister: the live records whose keys q selects, without
// marking them used.
func (s *Memory) List(ctx context.Context, q ListQuery) (ListPage, error) {
	if err := ctx.Err(); err != nil {
		return ListPage{}, err
	}
	q, err := q.Normalize()
	if err != nil {
		return ListPage{}, err
	}
	now := s.now()
	vals := map[string][]byte{}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ListPage{}, ErrClosed
	}
	for k, el := range s.byKey {
		if e := el.Value.(*memEntry); q.Matches(k) && !s.expired(e, now) {
			// Stored values are never modified (see Get).
			vals[k] = e.val
		}
	}
	s.mu.Unlock()
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	return PageOf(q, keys, func(k string) (*Record, error) { return DecodeListed(s.key, k, vals[k]), nil })
}
