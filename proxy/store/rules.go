package store

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// The limits a Store applies when its options leave them at zero. They
// suit one machine: a conversation record holds a few summaries of some
// kilobytes each, so 256 MiB keeps tens of thousands of conversations, and
// a conversation left alone for a week is unlikely to come back.
const (
	// DefaultMaxBytes bounds the total size of the stored records
	// (their JSON encodings); beyond it the least recently used records
	// are evicted.
	DefaultMaxBytes int64 = 256 << 20
	// DefaultTTL is how long a record lives after its last use (a
	// Get that found it, or a Put).
	DefaultTTL = 7 * 24 * time.Hour
)

// MaxKeyLen is the longest key a Store accepts, in bytes.
const MaxKeyLen = 128

// ErrClosed is returned by the methods of a Store that was closed.
var ErrClosed = errors.New("store: store is closed")

// ErrCorrupt is wrapped by Store.Get when the stored value cannot be read
// back into a Record. The store deletes such a record, so the next Get of
// the key reports ErrNotFound and the proxy starts that conversation over.
var ErrCorrupt = errors.New("store: corrupt record")

// CheckKey reports whether key is a valid Store key: 1 to MaxKeyLen bytes
// of [0-9a-z:]. Stores call it first, so a caller's bug (a raw header
// value passed as a key, say) surfaces as an error instead of as a record
// named after a credential. The error does not quote the key.
func CheckKey(key string) error {
	if key == "" {
		return errors.New("store: empty store key")
	}
	if len(key) > MaxKeyLen {
		return fmt.Errorf("store: store key of %d bytes, longer than %d", len(key), MaxKeyLen)
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || c == ':') {
			return fmt.Errorf("store: store key has a byte outside [0-9a-z:] at offset %d", i)
		}
	}
	return nil
}

// ErrUnauthenticated is wrapped by Store.Get, together with ErrNotFound,
// when the store has a record key (see SealRecord) and the stored value
// fails its check: altered, written with another key or none (a record
// from before the key was set), or moved from another key. The proxy
// treats such a record as absent (the conversation starts over and the
// record is overwritten), counts it and logs it without its content.
var ErrUnauthenticated = errors.New("store: stored record failed authentication")

// MinRecordKeyLen is the shortest record key the proxy's command line
// accepts, in bytes.
const MinRecordKeyLen = 16

// sealPrefix starts a sealed value; the HMAC follows in hex, then a
// newline and the record's bytes.
const sealPrefix = "cmac1:"

// SealRecord returns the bytes a Store keeps for val, the encoding of
// the record stored under name (the store key, or a part of the record
// kept under a name of its own): with a key, val preceded by
// HMAC-SHA256(key, name, val), so that a writer without the key can
// neither forge nor alter a record, nor move one to another name; with
// no key, val itself.
func SealRecord(key []byte, name string, val []byte) []byte {
	if len(key) == 0 {
		return val
	}
	out := make([]byte, 0, len(sealPrefix)+2*sha256.Size+1+len(val))
	out = append(out, sealPrefix...)
	out = hex.AppendEncode(out, recordMAC(key, name, val))
	out = append(out, '\n')
	return append(out, val...)
}

// EncodeRecord returns the bytes a Store keeps for rec under key, sealed
// with sealKey (see SealRecord): it checks the key, refuses a nil record
// and encodes the record as JSON. Every store writes a whole record
// through it; the errors do not name the store, which each adds.
func EncodeRecord(sealKey []byte, key string, rec *Record) ([]byte, error) {
	return encodeSealed(sealKey, key, key, rec, rec == nil, "record")
}

// EncodeLast returns the bytes a Store that keeps a record's last call
// apart from its checkpoints keeps for last, the last call of the record
// under key: its JSON, sealed with sealKey under the name LastName(key).
// The Redis store does so, so that LastStore.PutLast is one write; it
// keeps the rest of the record through EncodeRecord with Last nil.
func EncodeLast(sealKey []byte, key string, last *LastCall) ([]byte, error) {
	return encodeSealed(sealKey, key, LastName(key), last, last == nil, "last call")
}

// encodeSealed checks key, refuses a nil value (isNil; what names it in
// the errors) and seals the JSON of v under name.
func encodeSealed(sealKey []byte, key, name string, v any, isNil bool, what string) ([]byte, error) {
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	if isNil {
		return nil, errors.New("nil " + what)
	}
	val, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", what, err)
	}
	return SealRecord(sealKey, name, val), nil
}

// LastName is the name under which EncodeLast seals the last call of the
// record under key (see SealRecord and OpenRecord), so that a last call
// cannot pass for a record, nor for the last call of another key.
func LastName(key string) string { return "last:" + key }

// OpenRecord returns the record bytes of a value SealRecord stored under
// name. With a key, a value that is not sealed with that key and name
// fails with an error wrapping ErrUnauthenticated and ErrNotFound; the
// error never quotes the value. With no key nothing can be checked: a
// sealed value is returned without its seal, any other as it is.
func OpenRecord(key []byte, name string, stored []byte) ([]byte, error) {
	sealed := bytes.HasPrefix(stored, []byte(sealPrefix))
	var mac, val []byte
	if sealed {
		head, rest, ok := bytes.Cut(stored[len(sealPrefix):], []byte{'\n'})
		m, err := hex.DecodeString(string(head))
		// Lower-case hex only: one seal has one spelling.
		if !ok || err != nil || len(m) != sha256.Size || hex.EncodeToString(m) != string(head) {
			return nil, fmt.Errorf("%w (%w): malformed seal", ErrUnauthenticated, ErrNotFound)
		}
		mac, val = m, rest
	}
	switch {
	case len(key) == 0 && sealed:
		return val, nil
	case len(key) == 0:
		return stored, nil
	case !sealed:
		return nil, fmt.Errorf("%w (%w): the record carries no seal (written before the store key was set?)", ErrUnauthenticated, ErrNotFound)
	case !hmac.Equal(mac, recordMAC(key, name, val)):
		return nil, fmt.Errorf("%w (%w): the seal does not match (another key, an altered record, or one moved from another key)", ErrUnauthenticated, ErrNotFound)
	}
	return val, nil
}

// recordMAC is the HMAC of a record's bytes under its name.
func recordMAC(key []byte, name string, val []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte("compact-record-v1\x00"))
	h.Write([]byte(name))
	h.Write([]byte{0})
	h.Write(val)
	return h.Sum(nil)
}
