package fakeupstream

import (
	"encoding/json"
)

// Anthropic's cache diagnostics (platform.claude.com/docs/en/build-with-claude/cache-diagnostics,
// GA; the SDKs' Diagnostics and CacheMiss* types): a Messages request
// that carries a "diagnostics" object opts in. The API keeps a
// fingerprint of it (hashes and token counts, never its text) under the
// id of its response; a later request whose
// diagnostics.previous_message_id names that id is compared with it, and
// its response carries
//
//	"diagnostics": {"cache_miss_reason": {"type": T, "cache_missed_input_tokens": N}}
//
// with T the first divergence in the prompt's render order (model_changed,
// tools_changed, system_changed, messages_changed) and N the tokens of
// the previous prompt from that point on; previous_message_not_found
// when the id is unknown (or its fingerprint expired), and
// "diagnostics": null when nothing diverged or no previous id was given.
// The fake never answers "unavailable" nor leaves cache_miss_reason null
// (a comparison still running): a client must read those as inconclusive.

// diagPrint is the fake's fingerprint of one diagnosed request.
type diagPrint struct {
	model               string
	tools, system       digest
	toolsTok, systemTok int
	// messages are the running hashes after each message, cum the
	// tokens up to and including it (after tools and system).
	messages []digest
	cum      []int
}

// diagnosticsRequest is the request's "diagnostics" object.
type diagnosticsRequest struct {
	PreviousMessageID *string `json:"previous_message_id"`
}

// fingerprint builds the diagnostics fingerprint of b.
func fingerprint(b *body) diagPrint {
	p := diagPrint{model: b.model}
	tools := canonicalList(b.rawTools)
	p.tools = chain(digest{}, tools...)
	for _, t := range tools {
		p.toolsTok += CountTokens(t)
	}
	sys := canonical(b.system)
	p.system = chain(digest{}, sys)
	p.systemTok = CountTokens(sys)
	d, cum := digest{}, p.toolsTok+p.systemTok
	for _, raw := range b.items {
		m, ok := parseMessage(raw)
		if !ok {
			m = message{role: "?", blocks: []json.RawMessage{raw}}
		}
		d = afterMessage(d, m)
		for _, bl := range m.blocks {
			cum += CountTokens(canonical(bl))
		}
		p.messages = append(p.messages, d)
		p.cum = append(p.cum, cum)
	}
	return p
}

// total is the fingerprinted prompt's token count.
func (p diagPrint) total() int {
	if len(p.cum) == 0 {
		return p.toolsTok + p.systemTok
	}
	return p.cum[len(p.cum)-1]
}

// diagnose stores b's fingerprint under msgID when b opts in to cache
// diagnostics and returns the response's "diagnostics" value; ok is false
// when the request did not opt in (the response then has no such field).
func (f *Fake) diagnose(b *body, msgID string) (v any, ok bool) {
	if len(b.diagnostics) == 0 || b.diagnostics[0] != '{' {
		return nil, false
	}
	var req diagnosticsRequest
	_ = json.Unmarshal(b.diagnostics, &req)
	cur := fingerprint(b)
	f.mu.Lock()
	if f.diags == nil {
		f.diags = map[string]diagPrint{}
	}
	f.diags[msgID] = cur
	prev, found := diagPrint{}, false
	if req.PreviousMessageID != nil {
		prev, found = f.diags[*req.PreviousMessageID]
	}
	f.mu.Unlock()
	if req.PreviousMessageID == nil {
		return nil, true
	}
	if !found {
		return ordered{{"cache_miss_reason", ordered{{"type", "previous_message_not_found"}}}}, true
	}
	miss := func(typ string, missed int) any {
		return ordered{{"cache_miss_reason", ordered{{"type", typ}, {"cache_missed_input_tokens", max(missed, 0)}}}}
	}
	switch {
	case cur.model != prev.model:
		return miss("model_changed", prev.total()), true
	case cur.tools != prev.tools:
		return miss("tools_changed", prev.total()), true
	case cur.system != prev.system:
		return miss("system_changed", prev.total()-prev.toolsTok), true
	}
	for i := range prev.messages {
		if i >= len(cur.messages) || cur.messages[i] != prev.messages[i] {
			before := prev.toolsTok + prev.systemTok
			if i > 0 {
				before = prev.cum[i-1]
			}
			return miss("messages_changed", prev.total()-before), true
		}
	}
	return nil, true
}

// ForgetCache drops every prompt-cache entry, as a provider evicting its
// cache would: the next requests read nothing from it (their diagnostics
// still find no divergence, since the prefix did not change).
func (f *Fake) ForgetCache() {
	f.cache.mu.Lock()
	clear(f.cache.entries)
	f.cache.mu.Unlock()
}
