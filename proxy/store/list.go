package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Limits of ListQuery.Limit.
const (
	// DefaultListLimit is the page size of a ListQuery whose Limit is 0.
	DefaultListLimit = 50
	// MaxListLimit is the largest page a Lister returns, whatever Limit
	// asks: a page is read in one go, so its size bounds the work and
	// the memory of one listing.
	MaxListLimit = 500
)

// Lister is implemented by stores that can list the records they hold
// (Memory, Fallback, the bbolt and Redis stores). The proxy's
// conversation API (/api/conversations) reads through it; a store
// without it serves one conversation by key but no list.
//
// Records come in the byte order of their keys, a page at a time:
// ListPage.Next is the cursor of the next page, "" after the last one. A
// record written or dropped between two pages is listed or missed
// depending on where its key falls, never twice. Listing does not count
// as a use: it renews no expiry and moves nothing in an LRU order.
// Expired records are left out, and so are records that cannot be read
// (corrupt, or failing their seal), which are not deleted either: the
// next Get of their key deals with them.
type Lister interface {
	List(ctx context.Context, q ListQuery) (ListPage, error)
}

// ListQuery selects one page of records.
type ListQuery struct {
	// Prefix keeps the keys that start with it ("c:" for the proxy's
	// conversations); "" keeps every key.
	Prefix string
	// After is the cursor: only keys sorting after it are listed. ""
	// starts at the first key; a page's ListPage.Next continues it.
	After string
	// Limit is the most records returned; 0 means DefaultListLimit and
	// anything above MaxListLimit means MaxListLimit. Negative is an
	// error.
	Limit int
}

// ListPage is one page of a listing.
type ListPage struct {
	// Records are the page's records in key order.
	Records []Listed `json:"records"`
	// Next is the ListQuery.After of the next page, "" when this page
	// is the last.
	Next string `json:"next,omitempty"`
}

// Listed is one record of a listing with its key.
type Listed struct {
	Key    string  `json:"key"`
	Record *Record `json:"record"`
}

// Normalize checks q and returns it with its defaults settled: Limit
// between 1 and MaxListLimit.
func (q ListQuery) Normalize() (ListQuery, error) {
	switch {
	case q.Limit < 0:
		return q, fmt.Errorf("store: list limit %d: must not be negative", q.Limit)
	case q.Limit == 0:
		q.Limit = DefaultListLimit
	case q.Limit > MaxListLimit:
		q.Limit = MaxListLimit
	}
	if len(q.Prefix) > MaxKeyLen || len(q.After) > MaxKeyLen {
		return q, fmt.Errorf("store: list prefix or cursor longer than %d bytes", MaxKeyLen)
	}
	return q, nil
}

// Matches reports whether key belongs to the listing q asks for: it has
// q's prefix and sorts after q.After.
func (q ListQuery) Matches(key string) bool {
	return strings.HasPrefix(key, q.Prefix) && key > q.After
}

// PageOf builds one page from candidate keys (in any order, duplicates
// allowed): the keys q matches, sorted, read by get until q.Limit
// records were found. get returns nil for a key to leave out (gone,
// expired, unreadable). Stores that cannot walk their keys in order
// (Redis) list them with it.
func PageOf(q ListQuery, keys []string, get func(key string) (*Record, error)) (ListPage, error) {
	keys = slices.DeleteFunc(keys, func(k string) bool { return !q.Matches(k) })
	slices.Sort(keys)
	keys = slices.Compact(keys)
	var page ListPage
	for i, k := range keys {
		if len(page.Records) == q.Limit {
			page.Next = keys[i-1]
			break
		}
		rec, err := get(k)
		if err != nil {
			return ListPage{}, err
		}
		if rec != nil {
			page.Records = append(page.Records, Listed{Key: k, Record: rec})
		}
	}
	return page, nil
}

// DecodeListed returns the record a stored value holds (opened with
// recordKey, see OpenRecord), nil when it cannot be read: a listing
// leaves such a value out (see Lister).
func DecodeListed(recordKey []byte, key string, val []byte) *Record {
	plain, err := OpenRecord(recordKey, key, val)
	if err != nil {
		return nil
	}
	var rec Record
	if json.Unmarshal(plain, &rec) != nil {
		return nil
	}
	return &rec
}
