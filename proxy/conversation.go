package proxy

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/proxy/store"
)

// maxCheckpoints bounds the compactions kept under one conversation key.
const maxCheckpoints = 4

// view is one request read for compaction: the parsed body, its
// conversation and what is stored about it.
type view struct {
	api   API
	p     *Parsed
	id    identity
	chain [][32]byte
	rec   *store.Record
	// cp is the stored compaction that applies to this request (its chain
	// matches the request's prefix), nil when none does.
	cp *store.Checkpoint
	// info is the model's limits; info.ContextWindow is 0 when unknown.
	info compact.ModelInfo
	// envelope is the estimated size of everything outside the summarized
	// and kept units: system prompt, tools, head items.
	envelope int
	// tokens is the measured size of the request as it would go upstream
	// now (with cp applied); usageTokens the part the provider reported.
	tokens, usageTokens int
	// forced is true when the previous response reported an overflow.
	forced bool
	// storeDown is true when the store could not be read: the request is
	// only compacted if the provider refuses it as too long, and that
	// compaction is not stored.
	storeDown bool
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

// withCheckpoint returns cps with cp first, without an older compaction of
// the same chain, and at most maxCheckpoints long.
func withCheckpoint(cps []store.Checkpoint, cp *store.Checkpoint) []store.Checkpoint {
	out := []store.Checkpoint{*cp}
	for _, old := range cps {
		if old.Chain == cp.Chain || len(out) >= maxCheckpoints {
			continue
		}
		out = append(out, old)
	}
	return out
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
	if found == nil {
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

// estimateBytes turns raw JSON bytes into estimated tokens with the
// model's calibrated ratio.
func (s *Server) estimateBytes(model string, b []byte) int {
	return s.charsToTokens(model, chars(b))
}

// charsToTokens converts a character count with the model's calibrated
// ratio, rounding up.
func (s *Server) charsToTokens(model string, n int) int {
	s.mu.Lock()
	cpt := s.calib.CharsPerToken(model)
	s.mu.Unlock()
	if cpt <= 0 {
		cpt = compact.DefaultCharsPerToken
	}
	return int(float64(n)/cpt + 0.999)
}

// estimateUnits estimates units with the model's calibrated ratio.
func (s *Server) estimateUnits(model string, units []Unit) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, u := range units {
		for _, m := range u.Messages {
			n += s.calib.Estimate(model, m)
		}
	}
	return n
}

// measure fills in v.envelope, v.tokens and v.usageTokens: the provider's
// usage for this conversation's previous request, when that request is a
// prefix of this one and was sent with the same compaction, plus the
// estimate of what was added since; else an estimate of the whole request
// as it would be sent.
func (s *Server) measure(v *view) {
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

// errNoCut is returned when the planner's cut cannot be mapped onto the
// request's units.
var errNoCut = errors.New("proxy: no usable cut point")

// entryID names the engine entry of message j of unit i.
func entryID(i, j int) string { return "u" + strconv.Itoa(i) + "." + strconv.Itoa(j) }

// parseEntryID is the inverse of entryID.
func parseEntryID(id string) (unit, msg int, ok bool) {
	a, b, found := strings.Cut(strings.TrimPrefix(id, "u"), ".")
	if !found || !strings.HasPrefix(id, "u") {
		return 0, 0, false
	}
	u, err1 := strconv.Atoi(a)
	m, err2 := strconv.Atoi(b)
	return u, m, err1 == nil && err2 == nil
}

// unitMessages returns the engine messages of a unit arranged so that a cut
// can only fall on its first message: when the unit opens with tool results,
// any other message of it is folded into the last tool result (a copy), so
// the planner, which never cuts before a tool result, cannot split the unit.
func unitMessages(u Unit) []*compact.Message {
	ms := u.Messages
	if len(ms) < 2 || ms[0].Role != compact.RoleToolResult {
		return ms
	}
	out := make([]*compact.Message, 0, len(ms))
	var last *compact.Message
	for _, m := range ms {
		if m.Role == compact.RoleToolResult {
			c := *m
			last = &c
			out = append(out, last)
			continue
		}
		last.Content = append(append([]compact.Part(nil), last.Content...), m.Content...)
	}
	return out
}

// engineLog builds the engine's view of the request: every unit's messages
// as entries, with the applied compaction recorded where it belongs, so
// that a new compaction merges the old summary.
func engineLog(v *view) *compact.Memory {
	var entries []*compact.Entry
	parent := ""
	add := func(e *compact.Entry) {
		e.ParentID = parent
		parent = e.ID
		entries = append(entries, e)
	}
	for i, u := range v.p.Units {
		if v.cp != nil && i == v.cp.Covered {
			add(&compact.Entry{ID: "cp", Kind: compact.KindCompaction, Compaction: &compact.Compaction{
				Summary:        v.cp.Summary,
				FirstKeptID:    entryID(i, 0),
				TokensBefore:   v.cp.TokensBefore,
				TokensAfter:    v.cp.TokensAfter,
				ReadFiles:      v.cp.ReadFiles,
				ModifiedFiles:  v.cp.ModifiedFiles,
				HasFileDetails: true,
				Details:        map[string]any{"reason": string(v.cp.Reason)},
			}})
		}
		for j, m := range unitMessages(u) {
			add(&compact.Entry{ID: entryID(i, j), Kind: compact.KindMessage, Message: m})
		}
	}
	return compact.NewMemory(entries...)
}

// budgets are the engine's targets for one compaction, in the engine's own
// estimate of the messages (the envelope is apart).
type budgets struct {
	keep, target, maxSummary int
}

// budgetsFor sizes a compaction: after it, the request must sit well under
// the trigger, with room for the summary and the newest messages.
func (s *Server) budgetsFor(v *view, threshold int) budgets {
	room := threshold - v.envelope
	if room < 2000 {
		room = 2000
	}
	// Aim at half the room the system prompt and tools leave under the
	// trigger, or lower when the policy's own target (half the window, by
	// default) asks for it and still leaves the messages a fair share: a
	// large envelope must not squeeze the kept part to nothing.
	target := room / 2
	if t := s.policyFor(v.info).Target(v.info) - v.envelope; t >= room/4 && t < target {
		target = t
	}
	if target < 1000 {
		target = 1000
	}
	keep := s.cfg.KeepRecentTokens
	if keep <= 0 {
		keep = compact.DefaultKeepRecentTokens
	}
	if keep > target/2 {
		keep = target / 2
	}
	maxSummary := target / 3
	if maxSummary > 13107 {
		maxSummary = 13107
	}
	if maxSummary < 500 {
		maxSummary = 500
	}
	return budgets{keep: keep, target: target, maxSummary: maxSummary}
}

// compactView writes a new compaction for the request: the engine plans the
// cut over the request's messages (merging the applied compaction), the
// summarizer writes the summary, and the result is recorded as a
// checkpoint covering whole units.
func (s *Server) compactView(ctx context.Context, v *view, reason compact.Reason, threshold int, sum compact.Summarizer) (*store.Checkpoint, *compact.Result, error) {
	b := s.budgetsFor(v, threshold)
	eng := &compact.Engine{
		Summarizer:       sum,
		Fallback:         s.extractive(),
		KeepRecentTokens: b.keep,
		Logger:           s.log,
		Now:              s.now,
	}
	res, err := eng.Compact(ctx, engineLog(v), compact.Request{
		Reason:       reason,
		TargetTokens: b.target,
		MaxTokens:    b.maxSummary,
		Fallback:     compact.FallbackAuto,
	})
	if err != nil {
		return nil, res, err
	}
	if res.Entry == nil || res.Entry.Compaction == nil {
		return nil, res, compact.ErrNothingToCompact
	}
	ui, _, ok := parseEntryID(res.Entry.Compaction.FirstKeptID)
	if !ok || ui <= 0 || ui >= len(v.p.Units) {
		return nil, res, fmt.Errorf("%w: first kept %q", errNoCut, res.Entry.Compaction.FirstKeptID)
	}
	if v.cp != nil && ui <= v.cp.Covered {
		return nil, res, fmt.Errorf("%w: the cut does not move past the previous compaction", errNoCut)
	}
	text := compact.SummaryText(res.Summary) + "\n\n" + compact.ContinuationNote
	cp := &store.Checkpoint{
		Covered:       ui,
		Chain:         hexChain(v.chain[ui]),
		Item:          codecFor(v.api).summaryItem(text),
		Summary:       res.Summary,
		ReadFiles:     res.Entry.Compaction.ReadFiles,
		ModifiedFiles: res.Entry.Compaction.ModifiedFiles,
		TokensBefore:  v.tokens,
		Reason:        reason,
		Summarizer:    res.Summarizer,
		Created:       s.now().UTC(),
	}
	cp.TokensAfter = v.envelope + s.estimateBytes(v.p.Model, cp.Item) + s.estimateUnits(v.p.Model, v.p.Units[ui:])
	return cp, res, nil
}

// splice builds the body sent upstream for a request with compaction cp:
// the client's bytes before the list, the head items, the summary item, the
// kept items (as the codec prepares them), the client's bytes after the
// list. Nothing else is re-encoded.
func splice(c codec, p *Parsed, cp *store.Checkpoint) []byte {
	from := p.Units[cp.Covered].Start
	kept, envelope := c.prepareKept(p, from)
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
