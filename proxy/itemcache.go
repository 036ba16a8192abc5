package proxy

import (
	"bytes"
	"container/list"
	"crypto/sha256"
	"sync"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsontext"
)

// itemInfo is what the proxy reads from one element of a request's message
// list. Agents resend their whole history on every request, so the same
// elements come back again and again: the proxy decodes each one once and
// finds it again by its digest (see itemCache), which keeps the work per
// request close to hashing the body.
type itemInfo struct {
	digest [32]byte
	// role is the message's role ("" for Responses items that are not
	// messages); kind sorts Responses items ("message", "call", "output",
	// "other").
	role, kind string
	// msgs are the engine messages of the item (for a Responses call item,
	// one assistant message holding its parts). They are shared between
	// requests and never modified: take them with messages().
	msgs []*compact.Message
	// compaction is set when the item carries a provider compaction block
	// or item.
	compaction bool
	// size is the item's length in bytes, for the cache's bound.
	size int
}

// messages returns copies of the item's messages for one request (the
// engine keeps per-message estimates in them).
func (in *itemInfo) messages() []*compact.Message {
	out := make([]*compact.Message, len(in.msgs))
	for i, m := range in.msgs {
		c := *m
		out[i] = &c
	}
	return out
}

// itemDigest identifies a list element for the hash chain and the cache:
// SHA-256 of its bytes without the cache_control markers clients move from
// turn to turn.
//
// Claude Code also turns the newest message's string content into a list
// of one text block (to hang a breakpoint on it) and back into a string on
// the next turn; such a block hashes like the string it stands for.
func itemDigest(raw []byte) [32]byte {
	b := jsontext.WithoutKey(raw, "cache_control")
	if n, ok := singleTextContent(b); ok {
		b = n
	}
	return sha256.Sum256(b)
}

// singleTextContent rewrites a message whose content is a list holding one
// bare text block ({"type":"text","text":S}) to content S, for hashing. ok
// is false when the message is not of that shape.
func singleTextContent(b []byte) ([]byte, bool) {
	if len(b) > 256<<10 || !bytes.Contains(b, []byte(`"text"`)) {
		return nil, false
	}
	ms, _, err := jsontext.ObjectMembers(b, jsontext.SkipSpace(b, 0))
	if err != nil {
		return nil, false
	}
	c := jsontext.Find(ms, "content")
	if c == nil || b[c.Value.Start] != '[' {
		return nil, false
	}
	els, _, err := jsontext.ArrayElements(b, c.Value.Start)
	if err != nil || len(els) != 1 || b[els[0].Start] != '{' {
		return nil, false
	}
	bm, _, err := jsontext.ObjectMembers(b, els[0].Start)
	if err != nil || len(bm) != 2 {
		return nil, false
	}
	t, txt := jsontext.Find(bm, "type"), jsontext.Find(bm, "text")
	if t == nil || txt == nil || string(b[t.Value.Start:t.Value.End]) != `"text"` {
		return nil, false
	}
	out := make([]byte, 0, len(b))
	out = append(out, b[:c.Value.Start]...)
	out = append(out, b[txt.Value.Start:txt.Value.End]...)
	return append(out, b[c.Value.End:]...), true
}

// unitDigest combines the digests of a unit's items.
func unitDigest(infos []*itemInfo) [32]byte {
	if len(infos) == 1 {
		return infos[0].digest
	}
	h := sha256.New()
	for _, in := range infos {
		h.Write(in.digest[:])
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// defaultItemCacheBytes bounds the decoded items kept between requests.
const defaultItemCacheBytes = 256 << 20

// itemCache keeps decoded items by API and digest, least recently used
// first out once their total size passes its bound. It is safe for
// concurrent use; a nil *itemCache caches nothing.
type itemCache struct {
	mu    sync.Mutex
	max   int
	size  int
	order *list.List // of *cacheEntry, most recent first
	byKey map[cacheKey]*list.Element
}

type cacheKey struct {
	api    API
	digest [32]byte
}

type cacheEntry struct {
	key  cacheKey
	info *itemInfo
}

func newItemCache(maxBytes int) *itemCache {
	return &itemCache{max: maxBytes, order: list.New(), byKey: map[cacheKey]*list.Element{}}
}

// read returns the item's info, decoding it with decode on a miss.
func (c *itemCache) read(api API, raw []byte, decode func([]byte) (*itemInfo, error)) (*itemInfo, error) {
	d := itemDigest(raw)
	if c != nil {
		k := cacheKey{api, d}
		c.mu.Lock()
		if el, ok := c.byKey[k]; ok {
			c.order.MoveToFront(el)
			in := el.Value.(*cacheEntry).info
			c.mu.Unlock()
			return in, nil
		}
		c.mu.Unlock()
	}
	in, err := decode(raw)
	if err != nil {
		return nil, err
	}
	in.digest, in.size = d, len(raw)
	if c != nil && in.size <= c.max/4 {
		k := cacheKey{api, d}
		c.mu.Lock()
		if _, ok := c.byKey[k]; !ok {
			c.byKey[k] = c.order.PushFront(&cacheEntry{k, in})
			c.size += in.size
			for c.size > c.max {
				el := c.order.Back()
				e := el.Value.(*cacheEntry)
				c.order.Remove(el)
				delete(c.byKey, e.key)
				c.size -= e.info.size
			}
		}
		c.mu.Unlock()
	}
	return in, nil
}
