package proxy

import (
	"github.com/compactkit/compact/proxy/store"
)

// rewrite splices the applicable compaction into the request, keeping the
// original when the result would break the API's rules.
func (s *Server) rewrite(x *exchange) {
	v := x.v
	body := splice(codecFor(x.api), v.p, v.cp)
	if err := validateBody(x.api, body); err != nil {
		s.failOpen(stageSplice, err)
		x.body, x.decision = nil, "pass (rewrite invalid)"
		return
	}
	x.body = body
	if x.api == Anthropic {
		x.betas = anthropicBetas(body)
	}
	if x.compacted == nil {
		x.decision = "rewritten"
	}
}

// splice builds the body sent upstream for a request with compaction cp:
// the client's bytes before the list, the head items, the summary item, the
// kept items (as the codec prepares them), the client's bytes after the
// list. Nothing else is re-encoded.
func splice(c codec, p *Parsed, cp *store.Checkpoint) []byte {
	kept, envelope := keptItems(c, p, cp)
	n := len(p.Body) + len(cp.Item)
	out := make([]byte, 0, n)
	out = append(out, p.Body[:p.ListStart+1]...)
	first := true
	add := func(b []byte) {
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, b...)
	}
	for _, it := range p.Items[:p.Head] {
		add(it)
	}
	add(cp.Item)
	for _, it := range kept {
		add(it)
	}
	out = append(out, ']')
	out = append(out, p.Body[p.ListEnd:]...)
	if envelope != nil {
		out = envelope(out)
	}
	return out
}

// keptItems returns the items of p that follow compaction cp, made valid
// for the provider (codec.prepareKept). After a provider compaction they
// go unchanged: the provider's own summary keeps the signatures of the
// thinking after it valid.
func keptItems(c codec, p *Parsed, cp *store.Checkpoint) ([][]byte, func([]byte) []byte) {
	from := p.Units[cp.Covered].Start
	if cp.Native != "" {
		return p.Items[from:], nil
	}
	return c.prepareKept(p, from)
}
