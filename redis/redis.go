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
// Prefix + "last:" + the key: the proxy rewrites the last call after every
// answer (proxy.LastStore) and the checkpoints only when it compacts, so
// the frequent write is one small SET that cannot clobber a checkpoint
// another replica just wrote. Both carry an expiry of Options.TTL from the
// last write; Redis's own expiry bounds the data, and a maxmemory policy such as
// allkeys-lru bounds the memory. Locks live under Prefix + "lock:" + the
// lock key, set only if absent (SET NX PX) with a random owner token;
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
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/proxy"
)

// Defaults of Options.
const (
	DefaultPrefix        = "compact:"
	DefaultMaxValueBytes = 4 << 20
	DefaultDialTimeout   = time.Second
	DefaultIOTimeout     = 500 * time.Millisecond
)

// Options tune a Store. The zero value uses the defaults.
type Options struct {
	// TTL is how long a record lives after its last write; 0 means
	// proxy.DefaultStoreTTL. Reads do not extend it: the proxy writes a
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
	// Logger receives the store's warnings; nil discards them.
	Logger *slog.Logger
	// RootCAs, when set, are the certificate authorities a rediss://
	// server's certificate is checked against, instead of the system's
	// (a server with a certificate from a private CA). It is ignored for
	// redis:// URLs.
	RootCAs *x509.CertPool
}

// Store is a proxy.Store, proxy.Locker and proxy.Pinger on Redis. It is safe
// for concurrent use.
type Store struct {
	c      *goredis.Client
	opts   Options
	where  string // the server, for messages, without credentials
	extend *goredis.Script
	unlock *goredis.Script
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
		opts.TTL = proxy.DefaultStoreTTL
	}
	if opts.MaxValueBytes <= 0 {
		opts.MaxValueBytes = DefaultMaxValueBytes
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if opts.DialTimeout <= 0 {
		opts.DialTimeout = DefaultDialTimeout
	}
	if opts.ReadTimeout <= 0 {
		opts.ReadTimeout = DefaultIOTimeout
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = DefaultIOTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
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
		opts.Logger.Warn("redis not reachable yet; requests pass through uncompacted until it is", "redis", where, "err", err)
	}
	return s, nil
}

// Get implements proxy.Store: one MGET of the record and its last call.
func (s *Store) Get(ctx context.Context, key string) (*proxy.Record, error) {
	if err := proxy.CheckKey(key); err != nil {
		return nil, err
	}
	vals, err := s.c.MGet(ctx, s.opts.Prefix+key, s.lastKey(key)).Result()
	if err != nil {
		return nil, s.fail("get", err)
	}
	recJSON, _ := vals[0].(string)
	lastJSON, _ := vals[1].(string)
	if vals[0] == nil && vals[1] == nil {
		return nil, fmt.Errorf("%w", proxy.ErrNotFound)
	}
	var rec proxy.Record
	if vals[0] != nil {
		if err := json.Unmarshal([]byte(recJSON), &rec); err != nil {
			_ = s.c.Del(ctx, s.opts.Prefix+key, s.lastKey(key)).Err()
			return nil, fmt.Errorf("redis: record: %w: %v", proxy.ErrCorrupt, err)
		}
	}
	if vals[1] != nil {
		var last proxy.LastCall
		if err := json.Unmarshal([]byte(lastJSON), &last); err != nil {
			_ = s.c.Del(ctx, s.opts.Prefix+key, s.lastKey(key)).Err()
			return nil, fmt.Errorf("redis: record: %w: last call: %v", proxy.ErrCorrupt, err)
		}
		rec.Last = &last
	}
	return &rec, nil
}

// lastKey is where the last call of key's record lives.
func (s *Store) lastKey(key string) string { return s.opts.Prefix + "last:" + key }

// Put implements proxy.Store: the record and its last call in one
// MULTI/EXEC with their expiry, atomic on the server.
func (s *Store) Put(ctx context.Context, key string, rec *proxy.Record) error {
	if err := proxy.CheckKey(key); err != nil {
		return err
	}
	if rec == nil {
		return errors.New("redis: nil record")
	}
	body := *rec
	body.Last = nil
	b, err := json.Marshal(&body)
	if err != nil {
		return fmt.Errorf("redis: record: %w", err)
	}
	var last []byte
	if rec.Last != nil {
		if last, err = json.Marshal(rec.Last); err != nil {
			return fmt.Errorf("redis: record: %w", err)
		}
	}
	if len(b)+len(last) > s.opts.MaxValueBytes {
		return fmt.Errorf("redis: record of %d bytes is over the %d-byte limit", len(b)+len(last), s.opts.MaxValueBytes)
	}
	ttl := s.ttl()
	_, err = s.c.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		p.Set(ctx, s.opts.Prefix+key, b, ttl)
		if last != nil {
			p.Set(ctx, s.lastKey(key), last, ttl)
		} else {
			p.Del(ctx, s.lastKey(key))
		}
		return nil
	})
	if err != nil {
		return s.fail("set", err)
	}
	return nil
}

// PutLast implements proxy.LastStore: one SET of the last call, with the
// record's expiry renewed in the same MULTI/EXEC (a conversation in use
// keeps its checkpoints).
func (s *Store) PutLast(ctx context.Context, key string, last *proxy.LastCall) error {
	if err := proxy.CheckKey(key); err != nil {
		return err
	}
	if last == nil {
		return errors.New("redis: nil last call")
	}
	b, err := json.Marshal(last)
	if err != nil {
		return fmt.Errorf("redis: last call: %w", err)
	}
	ttl := s.ttl()
	_, err = s.c.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		p.Set(ctx, s.lastKey(key), b, ttl)
		if ttl > 0 {
			p.PExpire(ctx, s.opts.Prefix+key, ttl)
		}
		return nil
	})
	if err != nil {
		return s.fail("set", err)
	}
	return nil
}

// ttl is the expiry of a write, 0 for none.
func (s *Store) ttl() time.Duration {
	if s.opts.TTL < 0 {
		return 0 // no expiry
	}
	return s.opts.TTL
}

// Close implements proxy.Store.
func (s *Store) Close() error { return s.c.Close() }

// Ping implements proxy.Pinger.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.c.Ping(ctx).Err(); err != nil {
		return s.fail("ping", err)
	}
	return nil
}

// TryLock implements proxy.Locker with SET NX PX and a random token.
func (s *Store) TryLock(ctx context.Context, key string, ttl time.Duration) (proxy.Lock, error) {
	if err := proxy.CheckKey(key); err != nil {
		return nil, err
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("redis: lock token: %w", err)
	}
	l := &lock{s: s, key: s.opts.Prefix + "lock:" + key, token: hex.EncodeToString(b[:])}
	ok, err := s.c.SetNX(ctx, l.key, l.token, ttl).Result()
	if err != nil {
		return nil, s.fail("lock", err)
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

// Extend implements proxy.Lock.
func (l *lock) Extend(ctx context.Context, ttl time.Duration) error {
	n, err := l.s.extend.Run(ctx, l.s.c, []string{l.key}, l.token, ttl.Milliseconds()).Int()
	if err != nil {
		return l.s.fail("extend lock", err)
	}
	if n == 0 {
		return fmt.Errorf("redis: %w", proxy.ErrLockLost)
	}
	return nil
}

// Release implements proxy.Lock.
func (l *lock) Release(ctx context.Context) error {
	if err := l.s.unlock.Run(ctx, l.s.c, []string{l.key}, l.token).Err(); err != nil {
		return l.s.fail("release lock", err)
	}
	return nil
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
			return errors.New(compact.Redact(err.Error(), p))
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
