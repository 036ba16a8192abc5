package store

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Fallback keeps a replica working while its shared store (Redis) is
// down: reads and writes that fail on the shared store go to a store in
// this process, and what was written there is written back to the shared
// store when a later call on the same key finds it again. Locks the shared
// store cannot give are taken locally, so that this replica at least
// writes one summary per conversation. Every failure of the shared store
// is reported (the server counts it and logs it once a minute).
//
// A Fallback implements Store, LastStore, Locker and Pinger; it is what the
// proxy wraps a shared store in when its LocalFallback option is set.
type Fallback struct {
	shared Store
	local  *Memory
	report func(error)

	mu    sync.Mutex
	dirty map[string]bool
}

// NewFallback wraps shared. The local store it falls back on is a Memory
// with the default limits and the clock now (nil means time.Now); report
// is called with every error of the shared store (it must not be nil and
// is called from the goroutine of the failed call).
func NewFallback(shared Store, now func() time.Time, report func(error)) *Fallback {
	return &Fallback{shared: shared, local: NewMemory(MemoryOptions{Now: now}), report: report, dirty: map[string]bool{}}
}

// Get reads the shared store, or the local one while the shared one fails.
// A record written locally during an outage is written back first; while
// that write fails (a shared store that answers reads but refuses writes,
// as a full Redis does) the local record is the one returned, since the
// shared one is older.
func (f *Fallback) Get(ctx context.Context, key string) (*Record, error) {
	if !f.writeBack(ctx, key) {
		if rec, err := f.local.Get(ctx, key); err == nil {
			return rec, nil
		}
	}
	rec, err := f.shared.Get(ctx, key)
	if err == nil || errors.Is(err, ErrNotFound) || errors.Is(err, ErrCorrupt) {
		return rec, err
	}
	f.report(err)
	return f.local.Get(ctx, key)
}

// Put writes the shared store, or keeps the record locally (to write back
// later) while the shared one fails.
func (f *Fallback) Put(ctx context.Context, key string, rec *Record) error {
	err := f.shared.Put(ctx, key, rec)
	if err == nil {
		f.mu.Lock()
		delete(f.dirty, key)
		f.mu.Unlock()
		return nil
	}
	f.report(err)
	return f.keepLocal(ctx, key, rec)
}

// keepLocal stores rec in this process, to write back once the shared
// store answers again.
func (f *Fallback) keepLocal(ctx context.Context, key string, rec *Record) error {
	if err := f.local.Put(ctx, key, rec); err != nil {
		return err
	}
	f.mu.Lock()
	f.dirty[key] = true
	f.mu.Unlock()
	return nil
}

// PutLast writes the last call alone when the shared store can (see
// LastStore), else reads and rewrites the record; while the shared store
// fails the local record takes it.
func (f *Fallback) PutLast(ctx context.Context, key string, last *LastCall) error {
	ls, ok := f.shared.(LastStore)
	if !ok {
		rec, err := f.Get(ctx, key)
		if errors.Is(err, ErrNotFound) || errors.Is(err, ErrCorrupt) {
			rec, err = &Record{}, nil
		}
		if err != nil {
			return err
		}
		rec.Last = last
		return f.Put(ctx, key, rec)
	}
	f.writeBack(ctx, key)
	err := ls.PutLast(ctx, key, last)
	if err == nil {
		return nil
	}
	f.report(err)
	// A record kept here during the outage takes the last call; without
	// one it is dropped rather than written back later over checkpoints
	// the shared store may still hold.
	rec, lerr := f.local.Get(ctx, key)
	if lerr != nil {
		return err
	}
	rec.Last = last
	return f.keepLocal(ctx, key, rec)
}

// writeBack copies a record kept locally during an outage to the shared
// store, once it takes writes again. It reports false when such a record
// is still waiting (the write failed).
func (f *Fallback) writeBack(ctx context.Context, key string) bool {
	f.mu.Lock()
	dirty := f.dirty[key]
	f.mu.Unlock()
	if !dirty {
		return true
	}
	rec, err := f.local.Get(ctx, key)
	if err != nil {
		f.mu.Lock()
		delete(f.dirty, key)
		f.mu.Unlock()
		return true
	}
	if err := f.shared.Put(ctx, key, rec); err != nil {
		f.report(err)
		return false
	}
	f.mu.Lock()
	delete(f.dirty, key)
	f.mu.Unlock()
	return true
}

// TryLock takes the shared lock, or a local one while the shared store
// fails.
func (f *Fallback) TryLock(ctx context.Context, key string, ttl time.Duration) (Lock, error) {
	if lk, ok := f.shared.(Locker); ok {
		l, err := lk.TryLock(ctx, key, ttl)
		if err == nil {
			return l, nil
		}
		f.report(err)
	}
	return f.local.TryLock(ctx, key, ttl)
}

// Ping reports the shared store's state: a replica on its local fallback
// is not ready for more traffic.
func (f *Fallback) Ping(ctx context.Context) error {
	if p, ok := f.shared.(Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

// Close closes both stores.
func (f *Fallback) Close() error {
	f.local.Close()
	return f.shared.Close()
}

// List lists the shared store when it can (see Lister), or the records
// kept in this process while it fails. A shared store that cannot list
// gives an empty page.
func (f *Fallback) List(ctx context.Context, q ListQuery) (ListPage, error) {
	l, ok := f.shared.(Lister)
	if !ok {
		return ListPage{}, nil
	}
	page, err := l.List(ctx, q)
	if err == nil {
		return page, nil
	}
	f.report(err)
	return f.local.List(ctx, q)
}
