package fakeupstream

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// MainLoop returns the requests of reqs that an agent's own turns made:
// model calls that offered tools and were not rejected. Side requests
// (titles, summaries without tools, summaries asked on the conversation
// itself, which carry its tools) and refused requests are left out.
func MainLoop(reqs []Request) []Request {
	var out []Request
	for _, r := range reqs {
		if text, ok := lastUserText(r.Items); ok && IsSummaryPrompt(text) {
			continue
		}
		if r.API != "" && r.Tools > 0 && !r.Rejected {
			out = append(out, r)
		}
	}
	return out
}

// Compaction is a point where the list an upstream saw stopped extending
// the list of the request before: a compacting proxy replaced part of the
// history with a summary.
type Compaction struct {
	// Seq is the number of the first request after the rewrite.
	Seq int
	// Before and After are the list lengths of the request before and of
	// this one.
	Before, After int
	// Prefix is the number of leading items the rewrite fixed: the items
	// this request shares byte for byte with the one before (the head the
	// proxy keeps, a system message say) plus one (the summary).
	Prefix int
}

// StablePrefixes checks that a compacting proxy's rewrites are stable, so
// that the provider's prompt cache keeps working, for the requests of one
// conversation in order (see MainLoop). An agent only ever appends to its
// list (apart from Anthropic cache breakpoints, see sameItem), so a
// request that does not extend the one before marks a Compaction and
// starts an epoch. Within an epoch every request must carry the first
// request's Prefix items byte for byte. A rewrite that changes those items
// while the list did not get shorter and the item kept after them stayed
// where it was is a problem, not a compaction: the proxy summarized
// nothing new but changed the summary's bytes, which costs the provider's
// cache the whole conversation. It returns the compactions it saw and one
// line per problem.
func StablePrefixes(reqs []Request) ([]Compaction, []string) {
	var comps []Compaction
	var problems []string
	var anchor *Request
	k := 0
	for i := 1; i < len(reqs); i++ {
		prev, cur := reqs[i-1], reqs[i]
		if extends(prev.Items, cur.Items) {
			if anchor == nil {
				continue
			}
			for j := 0; j < k && j < len(anchor.Items); j++ {
				if j >= len(cur.Items) || !bytes.Equal(cur.Items[j], anchor.Items[j]) {
					problems = append(problems, fmt.Sprintf("request %d: list item %d differs from request %d's: the rewritten prefix changed without a compaction", cur.Seq, j, anchor.Seq))
					break
				}
			}
			continue
		}
		if anchor != nil && len(cur.Items) >= len(prev.Items) && k < len(anchor.Items) && k < len(cur.Items) && sameItem(cur.Items[k], anchor.Items[k]) {
			j := commonPrefix(anchor.Items, cur.Items)
			problems = append(problems, fmt.Sprintf("request %d: list item %d differs from request %d's while the first kept item %d did not move: the summary was rewritten without summarizing more", cur.Seq, j, anchor.Seq, k))
		} else {
			k = commonPrefix(prev.Items, cur.Items) + 1
			comps = append(comps, Compaction{Seq: cur.Seq, Before: len(prev.Items), After: len(cur.Items), Prefix: k})
		}
		anchor = &reqs[i]
	}
	return comps, problems
}

// extends reports whether cur starts with every item of prev, each equal
// up to "cache_control" markers.
func extends(prev, cur []json.RawMessage) bool {
	if len(cur) < len(prev) {
		return false
	}
	for j := range prev {
		if !sameItem(prev[j], cur[j]) {
			return false
		}
	}
	return true
}

// sameItem compares two list items byte for byte, or else as Anthropic
// reads them once cache breakpoints are set aside: Claude Code marks its
// newest message with "cache_control", turning a string content into a
// one-block list for that turn only.
func sameItem(a, b json.RawMessage) bool {
	return bytes.Equal(a, b) || bytes.Equal(withoutCacheControl(a), withoutCacheControl(b))
}

// commonPrefix is the number of leading items a and b share byte for byte.
func commonPrefix(a, b []json.RawMessage) int {
	n := 0
	for n < len(a) && n < len(b) && bytes.Equal(a[n], b[n]) {
		n++
	}
	return n
}

// withoutCacheControl re-encodes a JSON value with every "cache_control"
// key removed and every "content" that is a single text block written as
// the plain string it stands for; a value that does not parse is returned
// as it is.
func withoutCacheControl(raw json.RawMessage) []byte {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return raw
	}
	v = stripKey(v, "cache_control")
	if m, ok := v.(map[string]any); ok {
		if blocks, ok := m["content"].([]any); ok && len(blocks) == 1 {
			if b, ok := blocks[0].(map[string]any); ok && len(b) == 2 && b["type"] == "text" {
				if text, ok := b["text"].(string); ok {
					m["content"] = text
				}
			}
		}
	}
	out, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return out
}

// stripKey deletes key from every object inside v.
func stripKey(v any, key string) any {
	switch x := v.(type) {
	case map[string]any:
		delete(x, key)
		for k, e := range x {
			x[k] = stripKey(e, key)
		}
	case []any:
		for i, e := range x {
			x[i] = stripKey(e, key)
		}
	}
	return v
}
