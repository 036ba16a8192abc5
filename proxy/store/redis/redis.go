// Package redis is the proxy's store for several replicas: conversation
// records and conversation locks in one Redis (or Valkey, or any server of
// the Redis protocol) that every replica shares.
//
// It uses github.com/redis/go-redis/v9, the client the Redis project
// maintains and the most used one in Go: its connection pool reconnects by
// itself after the server restarts, it speaks TLS (rediss:// URLs) and
// RESP3, and each operation honours its context. The proxy makes one round
// trip per request at most on the common path (writing the last call after
// the answer; a replica remembers that a conversation has no compaction,
// so it reads before sending only when it compacts or might), so rueidis's
// automatic pipelining and client-side caching would add little here.
//
// # Keys
//
// Records live under Options.Prefix + the proxy's key ("compact:c:<hash>"),
// as the record's JSON without its last call, which lives beside it under
// Prefix + store.LastName(key), "last:" + the key (store.EncodeRecord and
// store.EncodeLast encode the two): the proxy rewrites the last call
// after every answer (store.LastStore) and the checkpoints only when it
// compacts, so the frequent write is one small SET that cannot clobber a checkpoint
// another replica just wrote. Both carry an expiry of Options.TTL from the
// last write; Redis's own expiry bounds the data, and a maxmemory policy
// such as allkeys-lru bounds the memory (with noeviction, Redis's default,
// a full server refuses writes, and Ping, which writes, reports it). With
// Options.RecordKey both values carry an HMAC bound to their key. Locks
// live under Prefix + "lock:" + the lock key, set only if absent (SET NX
// PX) with a random owner token;
// extending and releasing compare the token in a script, so only the owner
// can do either, and a crashed owner's lock expires by itself.
//
// # Failures
//
// Every call is bounded by short timeouts (Options), and the store never
// blocks the proxy on a server that is down: Open does not fail when the
// server cannot be reached, calls fail fast, and the proxy forwards the
// requests uncompacted until the server is back, which go-redis finds by
// itself. Errors never carry the URL's password.
package redis

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/compactkit/compact/internal/redact"
	"github.com/compactkit/compact/proxy/store"
)

// Defaults of Options.
const (
	DefaultPrefix        = "compact:"
	DefaultMaxValueBytes = 4 << 20
	DefaultDialTimeout   = time.Second
	DefaultIOTimeout     = 500 * time.Millisecond
	DefaultCallTimeout   = time.Second
	DefaultBackoff       = time.Second
)

// ErrUnavailable is wrapped by the calls a Store refuses without trying
// the server, for Options.Backoff after a call that got no answer in time:
// a stalled or unreachable server then costs the proxy one call timeout
// per Backoff, not one per call.
var ErrUnavailable = errors.New("server did not answer recently; not tried")

// Options tune a Store. The zero value uses the defaults.
type Options struct {
	// TTL is how long a record lives after its last write; 0 means
	// store.DefaultTTL. Reads do not extend it: the proxy writes a
	// conversation's record after every answer, so a conversation in use
	// never expires.
	TTL time.Duration
	// MaxValueBytes is the largest record accepted (its JSON); a larger
	// one is refused by Put. 0 means DefaultMaxValueBytes (4 MiB).
	MaxValueBytes int
	// Prefix starts every key; "" means DefaultPrefix.
	Prefix string
	// DialTimeout bounds connecting; ReadTimeout and WriteTimeout bound
	// each command. Zero means DefaultDialTimeout and DefaultIOTimeout:
	// short, so that a slow server costs a request little before the
	// proxy passes it through.
	DialTimeout, ReadTimeout, WriteTimeout time.Duration
	// CallTimeout bounds each call of the store as a whole: waiting for a
	// connection, dialing, retrying and the command itself. A call that
	// runs out fails with an error wrapping context.DeadlineExceeded. 0
	// means DefaultCallTimeout (1 s).
	CallTimeout time.Duration
	// Backoff is how long, after a call that got no answer within
	// CallTimeout (a stalled server, a lost network), the store's calls
	// fail at once with ErrUnavailable instead of trying the server; Ping
	// always tries it, and a Ping that succeeds ends the backoff. A fast
	// failure (a refused connection: a server down or restarting) starts
	// none, since trying again costs nothing, and neither does a reply of
	// the server, an error one included (a full Redis refusing a write).
	// 0 means DefaultBackoff (1 s); negative means none.
	Backoff time.Duration
	// Logger receives the store's warnings; nil discards them.
	Logger *slog.Logger
	// RecordKey, when set, authenticates every record and last call (see
	// store.SealRecord), each bound to its own Redis key: a value that
	// fails the check reads as absent. nil means values are not
	// authenticated. Replicas sharing a Redis need the same key.
	RecordKey []byte
	// RootCAs, when set, are the certificate authorities a rediss://
	// server's certificate is checked against, instead of the system's
	// (a server with a certificate from a private CA). It is ignored for
	// redis:// URLs.
	RootCAs *x509.CertPool
}

// Store is a store.Store, store.Locker and store.Pinger on Redis. It is safe
// for concurrent use.
type Store struct {
	c    *goredis.Client
	opts Options
	// downUntil is the Unix time in nanoseconds until which calls fail
	// at once (see Options.Backoff); 0 when they go to the server.
	downUntil atomic.Int64
	where     string // the server, for messages, without credentials
	extend    *goredis.Script
	unlock    *goredis.Script
}

// Open returns a store on the server rawURL names: redis://[user:password@]
// host:port/db, or rediss:// for TLS. It fails only on a malformed URL;
// a server that cannot be reached now is logged and tried again on each
// call.
func Open(ctx context.Context, rawURL string, opts Options) (*Store, error) {
	where := redactURL(rawURL)
	o, err := goredis.ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("redis %s: %w", where, redactErr(err, rawURL))
	}
	if opts.TTL == 0 {
		opts.TTL = store.DefaultTTL
	}
	if opts.MaxValueBytes <= 0 {
		opts.MaxValueBytes = DefaultMaxValueBytes
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	opts.RecordKey = bytes.Clone(opts.RecordKey)
	if opts.DialTimeout <= 0 {
		opts.DialTimeout = DefaultDialTimeout
	}
	if opts.ReadTimeout <= 0 {
		opts.ReadTimeout = DefaultIOTimeout
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = DefaultIOTimeout
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.Backoff == 0 {
		opts.Backoff = DefaultBackoff
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	// Each call's context carries its deadline (CallTimeout); go-redis
	// applies it to the connection only when told to, and waits for a
	// free connection no longer than that either.
	o.ContextTimeoutEnabled = true
	o.PoolTimeout = opts.CallTimeout
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout = opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout
	if o.TLSConfig != nil && opts.RootCAs != nil {
		o.TLSConfig.RootCAs = opts.RootCAs
	}
	// Fail fast: one retry of a command, one dial attempt per connection;
	// the proxy passes the request through rather than wait.
	o.MaxRetries = 1
	o.DialerRetries = 1
	s := &Store{
		c:     goredis.NewClient(o),
		opts:  opts,
		where: where,
		// Extend and release only what this owner holds.
		extend: goredis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) else return 0 end`),
		unlock: goredis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) else return 0 end`),
	}
	if err := s.Ping(ctx); err != nil {
		opts.Logger.Warn("redis not ready yet (unreachable, or refusing writes); requests pass through uncompacted until it is", "redis", where, "err", err)
	}
	return s, nil
}

// Get implements store.Store: one MGET of the record and its last call.
func (s *Store) Get(ctx context.Context, key string) (*store.Record, error) {
	if err := store.CheckKey(key); err != nil {
		return nil, err
	}
	var vals []any
	err := s.do(ctx, "get", false, func(ctx context.Context) (err error) {
		vals, err = s.c.MGet(ctx, s.opts.Prefix+key, s.lastKey(key)).Result()
		return err
	})
	if err != nil {
		return nil, err
	}
	recJSON, _ := vals[0].(string)
	lastJSON, _ := vals[1].(string)
	if vals[0] == nil && vals[1] == nil {
		return nil, fmt.Errorf("%w", store.ErrNotFound)
	}
	var rec store.Record
	if vals[0] != nil {
		b, err := store.OpenRecord(s.opts.RecordKey, key, []byte(recJSON))
		if err != nil {
			return nil, fmt.Errorf("redis: record: %w", err)
		}
		if err := json.Unmarshal(b, &rec); err != nil {
			s.del(ctx, key)
			return nil, fmt.Errorf("redis: record: %w: %v", store.ErrCorrupt, err)
		}
	}
	if vals[1] != nil {
		b, err := store.OpenRecord(s.opts.RecordKey, store.LastName(key), []byte(lastJSON))
		if err != nil {
			return nil, fmt.Errorf("redis: last call: %w", err)
		}
		var last store.LastCall
		if err := json.Unmarshal(b, &last); err != nil {
			s.del(ctx, key)
			return nil, fmt.Errorf("redis: record: %w: last call: %v", store.ErrCorrupt, err)
		}
		rec.Last = &last
	}
	return &rec, nil
}

// lastKey is where the last call of key's record lives.
func (s *Store) lastKey(key string) string { return s.opts.Prefix + store.LastName(key) }

// Put implements store.Store: the record and its last call in one
// MULTI/EXEC with their expiry, atomic on the server.
func (s *Store) Put(ctx context.Context, key string, rec *store.Record) error {
	if err := store.CheckKey(key); err != nil {
		return err
	}
	if rec == nil {
		return errors.New("redis: nil record")
	}
	body := *rec
	body.Last = nil
	b, err := store.EncodeRecord(s.opts.RecordKey, key, &body)
	if err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	var last []byte
	if rec.Last != nil {
		if last, err = store.EncodeLast(s.opts.RecordKey, key, rec.Last); err != nil {
			return fmt.Errorf("redis: %w", err)
		}
	}
	if len(b)+len(last) > s.opts.MaxValueBytes {
		return fmt.Errorf("redis: record of %d bytes is over the %d-byte limit", len(b)+len(last), s.opts.MaxValueBytes)
	}
	ttl := s.ttl()
	return s.do(ctx, "set", false, func(ctx context.Context) error {
		_, err := s.c.TxPipelined(ctx, func(p goredis.Pipeliner) error {
			p.Set(ctx, s.opts.Prefix+key, b, ttl)
			if last != nil {
				p.Set(ctx, s.lastKey(key), last, ttl)
			} else {
				p.Del(ctx, s.lastKey(key))
			}
			return nil
		})
		return err
	})
}

// PutLast implements store.LastStore: one SET of the last call, with the
// record's expiry renewed in the same MULTI/EXEC (a conversation in use
// keeps its checkpoints).
func (s *Store) PutLast(ctx context.Context, key string, last *store.LastCall) error {
	if err := store.CheckKey(key); err != nil {
		return err
	}
	b, err := store.EncodeLast(s.opts.RecordKey, key, last)
	if err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	ttl := s.ttl()
	return s.do(ctx, "set", false, func(ctx context.Context) error {
		_, err := s.c.TxPipelined(ctx, func(p goredis.Pipeliner) error {
			p.Set(ctx, s.lastKey(key), b, ttl)
			if ttl > 0 {
				p.PExpire(ctx, s.opts.Prefix+key, ttl)
			}
			return nil
		})
		return err
	})
}

// ttl is the expiry of a write, 0 for none.
func (s *Store) ttl() time.Duration {
	if s.opts.TTL < 0 {
		return 0 // no expiry
	}
	return s.opts.TTL
}

// Close implements store.Store.
func (s *Store) Close() error { return s.c.Close() }

// Ping implements store.Pinger. It writes a small key (Prefix + "ready",
// expiring after a minute) rather than sending PING: a Redis at its
// maxmemory with the noeviction policy (Redis's default) still answers
// PING and reads but refuses every write, and a proxy that cannot store
// its compactions is not ready. A Ping that succeeds ends a backoff.
func (s *Store) Ping(ctx context.Context) error {
	err := s.do(ctx, "ping", true, func(ctx context.Context) error {
		return s.c.Set(ctx, s.opts.Prefix+"ready", "1", time.Minute).Err()
	})
	if err == nil {
		s.downUntil.Store(0)
	}
	return err
}

// do runs one call of the store: at once with ErrUnavailable during a
// backoff (unless probe), else f under the call's deadline. An error that
// is not a reply of the server starts a backoff.
func (s *Store) do(ctx context.Context, op string, probe bool, f func(ctx context.Context) error) error {
	if until := s.downUntil.Load(); !probe && until != 0 && time.Now().UnixNano() < until {
		return s.fail(op, ErrUnavailable)
	}
	cctx, cancel := context.WithTimeout(ctx, s.opts.CallTimeout)
	defer cancel()
	err := f(cctx)
	var reply goredis.Error
	switch {
	case err == nil, errors.As(err, &reply):
		return s.failIf(op, err)
	case ctx.Err() != nil:
		// The caller gave up; that says nothing about the server.
		return s.fail(op, err)
	}
	if cctx.Err() == nil {
		// A fast failure (a refused connection, a reset): trying again
		// costs nothing, and a server that just came back is used at
		// once.
		return s.fail(op, err)
	}
	err = fmt.Errorf("no answer within %v: %w (%v)", s.opts.CallTimeout, context.DeadlineExceeded, err)
	if s.opts.Backoff > 0 {
		s.downUntil.Store(time.Now().Add(s.opts.Backoff).UnixNano())
	}
	return s.fail(op, err)
}

// failIf is fail for a non-nil err.
func (s *Store) failIf(op string, err error) error {
	if err == nil {
		return nil
	}
	return s.fail(op, err)
}

// del deletes key's record and last call, best effort (a record that
// failed to decode).
func (s *Store) del(ctx context.Context, key string) {
	_ = s.do(ctx, "delete", false, func(ctx context.Context) error {
		return s.c.Del(ctx, s.opts.Prefix+key, s.lastKey(key)).Err()
	})
}

// TryLock implements store.Locker with SET NX PX and a random token.
func (s *Store) TryLock(ctx context.Context, key string, ttl time.Duration) (store.Lock, error) {
	if err := store.CheckKey(key); err != nil {
		return nil, err
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("redis: lock token: %w", err)
	}
	l := &lock{s: s, key: s.opts.Prefix + "lock:" + key, token: hex.EncodeToString(b[:])}
	var ok bool
	err := s.do(ctx, "lock", false, func(ctx context.Context) (err error) {
		ok, err = s.c.SetNX(ctx, l.key, l.token, ttl).Result()
		return err
	})
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, nil
	}
	return l, nil
}

// lock is a held lock.
type lock struct {
	s     *Store
	key   string
	token string
}

// Extend implements store.Lock.
func (l *lock) Extend(ctx context.Context, ttl time.Duration) error {
	// Extending and releasing try the server even during a backoff: a
	// held lock matters more than one call's wait.
	var n int
	err := l.s.do(ctx, "extend lock", true, func(ctx context.Context) (err error) {
		n, err = l.s.extend.Run(ctx, l.s.c, []string{l.key}, l.token, ttl.Milliseconds()).Int()
		return err
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("redis: %w", store.ErrLockLost)
	}
	return nil
}

// Release implements store.Lock.
func (l *lock) Release(ctx context.Context) error {
	return l.s.do(ctx, "release lock", true, func(ctx context.Context) error {
		return l.s.unlock.Run(ctx, l.s.c, []string{l.key}, l.token).Err()
	})
}

// fail wraps a client error with the operation and the server, never the
// password.
func (s *Store) fail(op string, err error) error {
	return fmt.Errorf("redis %s: %s: %w", s.where, op, err)
}

// redactURL returns rawURL without its password, for messages.
func redactURL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// redactErr removes the URL from an error that may quote it.
func redactErr(err error, rawURL string) error {
	if u, perr := url.Parse(rawURL); perr == nil && u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			return errors.New(redact.String(err.Error(), p))
		}
	}
	return err
}

// QuietClientLogs stops go-redis from printing its own connection errors to
// the process's standard error (its logger is one for the whole process):
// the proxy reports an unreachable store itself, once a minute. Call it
// once, from main.
func QuietClientLogs() { goredis.SetLogger(quiet{}) }

// quiet is a go-redis logger that prints nothing.
type quiet struct{}

// Printf discards the message.
func (quiet) Printf(context.Context, string, ...any) {}

// List implements store.Lister. Redis keeps no order of its keys, so a
// page costs a SCAN of the whole database (in batches, each one call under
// Options.CallTimeout) and one MGET of the page's records and last calls:
// listing is for the proxy's conversation API, not for the request path.
// A record stored as its last call alone (store.LastStore) is listed
// too. Expiry lives in the server: what it has not dropped is listed.
func (s *Store) List(ctx context.Context, q store.ListQuery) (store.ListPage, error) {
	q, err := q.Normalize()
	if err != nil {
		return store.ListPage{}, err
	}
	lastPrefix := s.opts.Prefix + store.LastName("")
	var keys []string
	for _, pattern := range []string{s.opts.Prefix + q.Prefix, lastPrefix + q.Prefix} {
		pattern = globEscape(pattern) + "*"
		var cursor uint64
		for {
			var batch []string
			err := s.do(ctx, "list", false, func(ctx context.Context) (err error) {
				batch, cursor, err = s.c.Scan(ctx, cursor, pattern, 1000).Result()
				return err
			})
			if err != nil {
				return store.ListPage{}, err
			}
			for _, k := range batch {
				k = strings.TrimPrefix(k, s.opts.Prefix)
				if strings.HasPrefix(k, store.LastName("")) && !strings.HasPrefix(q.Prefix, store.LastName("")) {
					k = strings.TrimPrefix(k, store.LastName(""))
				}
				keys = append(keys, k)
			}
			if cursor == 0 {
				break
			}
		}
	}
	keys = slices.DeleteFunc(keys, func(k string) bool { return !q.Matches(k) || store.CheckKey(k) != nil })
	slices.Sort(keys)
	keys = slices.Compact(keys)
	var page store.ListPage
	if len(keys) > q.Limit {
		keys = keys[:q.Limit]
		page.Next = keys[len(keys)-1]
	}
	if len(keys) == 0 {
		return page, nil
	}
	names := make([]string, 0, 2*len(keys))
	for _, k := range keys {
		names = append(names, s.opts.Prefix+k, s.lastKey(k))
	}
	var vals []any
	err = s.do(ctx, "list", false, func(ctx context.Context) (err error) {
		vals, err = s.c.MGet(ctx, names...).Result()
		return err
	})
	if err != nil {
		return store.ListPage{}, err
	}
	for i, k := range keys {
		recVal, recOK := vals[2*i].(string)
		lastVal, lastOK := vals[2*i+1].(string)
		if !recOK && !lastOK {
			continue // gone since the scan
		}
		rec := &store.Record{}
		if recOK {
			if rec = store.DecodeListed(s.opts.RecordKey, k, []byte(recVal)); rec == nil {
				continue
			}
		}
		if lastOK {
			plain, err := store.OpenRecord(s.opts.RecordKey, store.LastName(k), []byte(lastVal))
			var last store.LastCall
			if err != nil || json.Unmarshal(plain, &last) != nil {
				continue
			}
			rec.Last = &last
		}
		page.Records = append(page.Records, store.Listed{Key: k, Record: rec})
	}
	return page, nil
}

// globEscape escapes the characters SCAN's MATCH pattern gives a meaning.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\^`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
