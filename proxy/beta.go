package proxy

import (
	"bytes"
	"net/http"
	"strings"

	"github.com/compactkit/compact/internal/jsontext"
)

// Anthropic beta values a rewritten request may need in its
// anthropic-beta header, on top of the client's own.
const (
	// betaBlockBinding enables thinking.block_binding, which the proxy
	// sets when it keeps signed thinking after a summary (setDropBlock;
	// the value as Wei-Shaw/sub2api PR #6677 quotes the API's 400).
	betaBlockBinding = "thinking-binding-controls-2026-08-01"
	// betaCompact enables on-demand compaction: the compaction request
	// field and the compaction block sent back first in messages
	// (PROXY.md §1.7, §8).
	betaCompact = "compact-2026-09-04"
)

// betasNeeded returns the beta values an Anthropic body the proxy built
// needs: betaBlockBinding when its thinking object sets block_binding,
// betaCompact when it asks for a compaction or its first message opens
// with a compaction block.
func betasNeeded(body []byte) []string {
	ms, err := jsontext.Object(body)
	if err != nil {
		return nil
	}
	var out []string
	if t := jsontext.Find(ms, "thinking"); t != nil && bytes.Contains(body[t.Value.Start:t.Value.End], []byte(`"block_binding"`)) {
		out = append(out, betaBlockBinding)
	}
	compaction := jsontext.Find(ms, "compaction") != nil
	if m := jsontext.Find(ms, "messages"); !compaction && m != nil && body[m.Value.Start] == '[' {
		if els, _, err := jsontext.ArrayElements(body, m.Value.Start); err == nil && len(els) > 0 {
			first := body[els[0].Start:els[0].End]
			compaction = bytes.Contains(first, []byte(`"compaction"`)) && opensWithCompaction(first)
		}
	}
	if compaction {
		out = append(out, betaCompact)
	}
	return out
}

// opensWithCompaction reports whether a Messages API message's content
// starts with a compaction block.
func opensWithCompaction(item []byte) bool {
	ms, _, err := jsontext.ObjectMembers(item, jsontext.SkipSpace(item, 0))
	if err != nil {
		return false
	}
	c := jsontext.Find(ms, "content")
	if c == nil || item[c.Value.Start] != '[' {
		return false
	}
	els, _, err := jsontext.ArrayElements(item, c.Value.Start)
	if err != nil || len(els) == 0 {
		return false
	}
	typ, _ := jsontext.TopLevelString(item[els[0].Start:els[0].End], "type")
	return typ == "compaction"
}

// addBetas adds to h's anthropic-beta the values of betas it lacks,
// keeping the client's values and their order (a comma list, as the
// client sent it) and appending the new ones after them.
func addBetas(h http.Header, betas ...string) {
	have := map[string]bool{}
	for _, v := range h.Values("Anthropic-Beta") {
		for _, b := range strings.Split(v, ",") {
			have[strings.TrimSpace(b)] = true
		}
	}
	var add []string
	for _, b := range betas {
		if !have[b] {
			have[b] = true
			add = append(add, b)
		}
	}
	if len(add) == 0 {
		return
	}
	vals := h.Values("Anthropic-Beta")
	if len(vals) == 0 {
		h.Set("Anthropic-Beta", strings.Join(add, ","))
		return
	}
	// The last value gets the new ones, so that a client sending one
	// header line still sends one.
	vals = append([]string(nil), vals...)
	vals[len(vals)-1] += "," + strings.Join(add, ",")
	h["Anthropic-Beta"] = vals
}
