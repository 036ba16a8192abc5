package proxy

import (
	"errors"
	"fmt"
	"time"
)

// The limits a Store applies when its options leave them at zero. They
// suit one machine: a conversation record holds a few summaries of some
// kilobytes each, so 256 MiB keeps tens of thousands of conversations, and
// a conversation left alone for a week is unlikely to come back.
const (
	// DefaultStoreMaxBytes bounds the total size of the stored records
	// (their JSON encodings); beyond it the least recently used records
	// are evicted.
	DefaultStoreMaxBytes int64 = 256 << 20
	// DefaultStoreTTL is how long a record lives after its last use (a
	// Get that found it, or a Put).
	DefaultStoreTTL = 7 * 24 * time.Hour
)

// MaxKeyLen is the longest key a Store accepts, in bytes.
const MaxKeyLen = 128

// ErrClosed is returned by the methods of a Store that was closed.
var ErrClosed = errors.New("proxy: store is closed")

// ErrCorrupt is wrapped by Store.Get when the stored value cannot be read
// back into a Record. The store deletes such a record, so the next Get of
// the key reports ErrNotFound and the proxy starts that conversation over.
var ErrCorrupt = errors.New("proxy: corrupt record")

// CheckKey reports whether key is a valid Store key: 1 to MaxKeyLen bytes
// of [0-9a-z:]. Stores call it first, so a caller's bug (a raw header
// value passed as a key, say) surfaces as an error instead of as a record
// named after a credential. The error does not quote the key.
func CheckKey(key string) error {
	if key == "" {
		return errors.New("proxy: empty store key")
	}
	if len(key) > MaxKeyLen {
		return fmt.Errorf("proxy: store key of %d bytes, longer than %d", len(key), MaxKeyLen)
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || c == ':') {
			return fmt.Errorf("proxy: store key has a byte outside [0-9a-z:] at offset %d", i)
		}
	}
	return nil
}
