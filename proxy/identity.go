package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"

	"github.com/compactkit/compact/proxy/store"
)

// sessionHeaders are the request headers that carry a client's own
// conversation id, strongest first: Claude Code, Codex (both spellings,
// and the older conversation id), opencode, then generic clients.
var sessionHeaders = []string{
	"X-Claude-Code-Session-Id",
	"Session_id",
	"Session-Id",
	"Conversation_id",
	"X-Opencode-Session",
	"X-Session-Id",
	"X-Session-Affinity",
}

// identity is how a request's conversation was recognised.
type identity struct {
	// key is the store key: a hash, never the id or a credential in clear.
	key string
	// source names the signal that gave the id ("header x-session-id",
	// "body", "fingerprint"), for logs and metrics.
	source string
	// short is a short hash of the key, safe to log.
	short string
	// session is the store key of the client's session id without the
	// credential ("s:<hash>"), "" when the request carries no id (a
	// fingerprint). The compactions of a session are stored under it too,
	// so that they follow the session across a change of credential (an
	// OAuth token refresh): a request adopts one only when its own
	// messages hash to the compaction's chain (see Server.adopt).
	session string
}

// identify derives the conversation key of a request. The key is namespaced
// by the API, the upstream and a hash of the credential, so that two
// clients (or two tenants) never read each other's summaries even if they
// chose the same session id. The id comes from the client's own headers or
// body; a request without one is keyed by a fingerprint of its model and
// first message, which different conversations can share: that only costs
// a recompaction, since a stored compaction is applied only when its hash
// chain matches the request (see chainOf).
func identify(api API, upstream string, h http.Header, p *Parsed) identity {
	ns := sha256.New()
	ns.Write([]byte("compact-proxy-v1\x00"))
	ns.Write([]byte(api))
	ns.Write([]byte{0})
	ns.Write([]byte(upstream))
	ns.Write([]byte{0})
	// The session hash leaves the credential out.
	ss := sha256.New()
	ss.Write([]byte("compact-proxy-session-v1\x00"))
	ss.Write([]byte(api))
	ss.Write([]byte{0})
	ss.Write([]byte(upstream))
	ss.Write([]byte{0})
	ns.Write([]byte(credential(h)))
	ns.Write([]byte{0})

	id, source := "", ""
	for _, name := range sessionHeaders {
		if v := strings.TrimSpace(h.Get(name)); v != "" {
			id, source = v, "header "+strings.ToLower(name)
			break
		}
	}
	if id == "" && p.BodySession != "" {
		id, source = p.BodySession, "body"
	}
	if id == "" {
		source = "fingerprint"
		fp := sha256.New()
		fp.Write([]byte(p.Model))
		fp.Write([]byte{0})
		if len(p.Units) > 0 {
			d := p.Units[0].Digest
			fp.Write(d[:])
		}
		id = hex.EncodeToString(fp.Sum(nil))
	}
	ns.Write([]byte(source))
	ns.Write([]byte{0})
	ns.Write([]byte(id))
	sum := hex.EncodeToString(ns.Sum(nil))
	out := identity{key: "c:" + sum[:48], source: source, short: sum[:12]}
	if source != "fingerprint" {
		ss.Write([]byte(source))
		ss.Write([]byte{0})
		ss.Write([]byte(id))
		out.session = "s:" + hex.EncodeToString(ss.Sum(nil))[:48]
	}
	return out
}

// identifyByHeader derives the conversation key from the headers alone,
// as identify does for a request with a session header; ok is false when
// the request has none.
func identifyByHeader(api API, upstream string, h http.Header) (identity, bool) {
	for _, name := range sessionHeaders {
		if strings.TrimSpace(h.Get(name)) != "" {
			return identify(api, upstream, h, &Parsed{}), true
		}
	}
	return identity{}, false
}

// credential returns the request's credential header value, "" when none.
// It only ever enters a hash.
func credential(h http.Header) string {
	if v := h.Get("X-Api-Key"); v != "" {
		return "x-api-key " + v
	}
	if v := h.Get("Authorization"); v != "" {
		return "authorization " + v
	}
	if v := h.Get("Api-Key"); v != "" {
		return "api-key " + v
	}
	return ""
}

// chainSeed starts every hash chain.
var chainSeed = sha256.Sum256([]byte("compact-proxy-chain-v1"))

// chainOf returns the hash chain over units: out[i] identifies units[:i],
// so out[0] is the seed and out[len(units)] the whole list. Two requests
// share a prefix of n units exactly when their out[n] are equal.
func chainOf(units []Unit) [][32]byte {
	out := make([][32]byte, len(units)+1)
	out[0] = chainSeed
	var buf [64]byte
	for i, u := range units {
		copy(buf[:32], out[i][:])
		copy(buf[32:], u.Digest[:])
		out[i+1] = sha256.Sum256(buf[:])
	}
	return out
}

// hexChain is the stored form of a chain value.
func hexChain(c [32]byte) string { return hex.EncodeToString(c[:]) }

// findConversation names the request's conversation (see identify) and
// looks up what is stored about it: the record, the compaction that
// applies to this request's prefix, or one its session stored under
// another credential (see adopt). A store that cannot be read sets
// v.storeDown; one whose record fails authentication counts as empty.
func (s *Server) findConversation(x *exchange, v *view) {
	p := v.p
	v.id = identify(x.api, s.namespace(x.api, x.r), x.r.Header, p)
	if !x.handedOff {
		// (Background work of this very request must not wait for
		// itself.)
		s.waitPending(x.r.Context(), v.id.key)
	}
	rec, err := s.store.Get(x.r.Context(), v.id.key)
	switch {
	case errors.Is(err, store.ErrUnauthenticated):
		// Forged, altered or moved, or written before the store key was
		// set: treated as absent (and overwritten).
		s.metrics.storeLookup(lookupRejected)
		s.log.Warn("stored record failed authentication; treated as absent", "conversation", v.id.short, "err", err)
	case errors.Is(err, store.ErrNotFound):
		s.metrics.storeLookup(lookupMiss)
	case err != nil:
		// The state cannot be read: the request goes as it came, unless
		// the provider refuses it as too long (then it is compacted with a
		// summary of this request alone; see storeDown).
		s.metrics.storeLookup(lookupError)
		s.failOpen(stageStore, err)
		x.decision = "pass (store unavailable)"
		v.storeDown = true
	default:
		s.metrics.storeLookup(lookupHit)
		v.rec = rec
	}
	v.chain = chainOf(p.Units)
	v.cp = findCheckpoint(v.rec, v.chain)
	if v.rec == nil && !v.storeDown && v.id.session != "" {
		s.adopt(x.r.Context(), v)
	}
}

// findCheckpoint returns the newest stored compaction whose covered units
// hash to the same chain as the request's first units, nil when none.
func findCheckpoint(rec *store.Record, chain [][32]byte) *store.Checkpoint {
	if rec == nil {
		return nil
	}
	var best *store.Checkpoint
	for i := range rec.Checkpoints {
		cp := &rec.Checkpoints[i]
		if cp.Covered <= 0 || cp.Covered >= len(chain) {
			continue
		}
		if hexChain(chain[cp.Covered]) != cp.Chain {
			continue
		}
		if best == nil || cp.Covered > best.Covered {
			best = cp
		}
	}
	return best
}

// adopt gives a request whose conversation key has no record the
// compaction its session stored under another credential (see
// identity.session), when the request's own first units hash to that
// compaction's chain: the client then holds the very messages the summary
// was written from, whatever its credential. The compaction is stored
// under the request's key, so the conversation goes on from there.
func (s *Server) adopt(ctx context.Context, v *view) {
	rec, err := s.store.Get(ctx, v.id.session)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			s.failOpen(stageStore, err)
		}
		return
	}
	found := findCheckpoint(rec, v.chain)
	if found == nil || found.Credential != "" {
		// (A provider compaction is bound to its credential; none is
		// stored under the session, but an older record may hold one.)
		return
	}
	cp := *found
	err = s.update(ctx, v.id.key, func(rec *store.Record) bool {
		rec.Checkpoints = withCheckpoint(rec.Checkpoints, &cp)
		return true
	})
	if err != nil {
		s.failOpen(stageStore, err)
		return
	}
	v.rec = &store.Record{Checkpoints: []store.Checkpoint{cp}}
	v.cp = &v.rec.Checkpoints[0]
	s.log.Info("compaction follows its session to a new credential", "conversation", v.id.short, "units_summarized", cp.Covered)
}
