package proxy

import (
	"github.com/compactkit/compact"
	"github.com/compactkit/compact/proxy/store"
)

// modelInfo returns the limits of model: the forced window, or the
// registry's entry, lowered to a window learned in scope (see
// learnWindow; "" for none). ok is false when the window is unknown.
func (s *Server) modelInfo(scope, model string) (compact.ModelInfo, bool) {
	if s.cfg.Window > 0 {
		return s.learnedInfo(scope, compact.ModelInfo{ID: model, ContextWindow: s.cfg.Window}), true
	}
	if model == "" {
		return compact.ModelInfo{}, false
	}
	m, ok := s.registry.Lookup(model)
	if !ok || m.ContextWindow <= 0 {
		// Known only from an overflow error, if at all.
		if l := s.learnedInfo(scope, compact.ModelInfo{ID: model}); l.ContextWindow > 0 {
			return l, true
		}
		return compact.ModelInfo{}, false
	}
	m.ID = model
	return s.learnedInfo(scope, m), true
}

// measure fills in v.envelope, v.tokens and v.usageTokens: the provider's
// usage for this conversation's previous request, when that request is a
// prefix of this one and was sent with the same compaction, plus the
// estimate of what was added since; else an estimate of the whole request
// as it would be sent.
func (s *Server) measure(v *view) {
	defer func() {
		// What the client sent: the measure, with the messages the
		// applied compaction replaced in place of its summary (estimated;
		// a chain of compactions replaced them all).
		v.client = v.tokens
		if v.cp != nil && v.cp.Covered <= len(v.p.Units) {
			v.client += max(s.estimateUnits(v.p.Model, v.p.Units[:v.cp.Covered])-s.estimateBytes(v.p.Model, v.cp.Item), 0)
		}
	}()
	p := v.p
	// The envelope is mostly JSON (schemas, a system prompt): estimate it
	// from its bytes, the list excluded.
	n := chars(p.Body[:p.ListStart]) + chars(p.Body[p.ListEnd:])
	for _, it := range p.Items[:p.Head] {
		n += chars(it)
	}
	v.envelope = s.charsToTokens(p.Model, n)

	from := 0
	if v.cp != nil {
		from = v.cp.Covered
	}
	applied := ""
	if v.cp != nil {
		applied = v.cp.Chain
	}
	if last := lastFor(v.rec, v.chain, applied); last != nil {
		v.usageTokens = last.Usage.Input + last.Usage.CacheRead + last.Usage.CacheWrite
		v.tokens = v.usageTokens + s.estimateUnits(p.Model, p.Units[last.Units:])
		v.forced = last.Overflow
		return
	}
	v.tokens = v.envelope + s.estimateUnits(p.Model, p.Units[from:])
	if v.cp != nil {
		v.tokens += s.estimateBytes(p.Model, v.cp.Item)
	}
}

// lastFor returns r's last call when this request extends it (same
// units, same compaction applied), nil otherwise.
func lastFor(r *store.Record, chain [][32]byte, applied string) *store.LastCall {
	if r == nil || r.Last == nil {
		return nil
	}
	l := r.Last
	if l.Units <= 0 || l.Units >= len(chain) || hexChain(chain[l.Units]) != l.Chain || l.Applied != applied {
		return nil
	}
	return l
}

// estimateUnits counts the messages of units as the root's meter does
// (compact.Meter at the model's calibrated ratio): the count of a Guard
// for the same messages.
func (s *Server) estimateUnits(model string, units []Unit) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := compact.Meter{Cal: &s.calib}
	m.SetModel(model)
	for _, u := range units {
		for _, msg := range u.Messages {
			m.Add(msg)
		}
	}
	return m.Tokens()
}

// estimateBytes turns raw JSON bytes into estimated tokens with the
// model's calibrated ratio.
func (s *Server) estimateBytes(model string, b []byte) int {
	return s.charsToTokens(model, chars(b))
}

// charsToTokens converts a character count with the model's calibrated
// ratio (compact.Calibrator.EstimateChars).
func (s *Server) charsToTokens(model string, n int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calib.EstimateChars(model, n)
}

// chars is the character count the engine's estimates use (UTF-16 code
// units), for raw bytes outside any message.
func chars(b []byte) int {
	n := 0
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c < 0x80:
			i++
		case c >= 0xF0:
			n++ // a rune outside the BMP is two UTF-16 units
			i += 4
		case c >= 0xE0:
			i += 3
		default:
			i += 2
		}
		n++
	}
	return n
}
