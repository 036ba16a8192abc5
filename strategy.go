package compact

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/compactkit/compact/internal/jsontext"
	"github.com/compactkit/compact/internal/zerocopy"
)

// Strategy is one cheap way to free context tokens without a model: a
// deterministic pass that replaces the content of some messages, recorded
// as a context_edit entry. Stored messages are never changed.
type Strategy interface {
	// Name is the name recorded in ContextEdit.Strategy.
	Name() string
	// Plan proposes one pass over the context of path, with the context
	// edits already on the path applied. It returns nil when the pass
	// would change nothing or free too little to be worth a cache break.
	Plan(path []*Entry, env StrategyEnv) (*ContextEdit, error)
}

// StrategyEnv is what a strategy knows about the moment it runs.
type StrategyEnv struct {
	// Usage is the context size measured now. When Usage.Tokens is 0 the
	// strategies that need it measure the path themselves.
	Usage ContextUsage
	// Target is the size in tokens to get under; 0 means none. Only
	// Truncate uses it, to stop once enough is freed.
	Target int
}

// CacheRewriteCost, given as a strategy's minimum saving, asks a pass to
// free at least as many tokens as the provider would write to its prompt
// cache again: the estimate of the context from the first changed message
// to the end, after the pass.
const CacheRewriteCost = -1

// NewContextEditEntry wraps a pass in a context_edit entry. The caller
// (usually the session's Append) sets its ID, ParentID and Timestamp.
func NewContextEditEntry(ce *ContextEdit) *Entry {
	return &Entry{Kind: KindContextEdit, Edit: ce}
}

// strategyView is the context a strategy works on: the messages as the
// model sees them and as stored, index for index.
type strategyView struct {
	cur  *Context
	orig []*Message
	// start is the first index that may be edited: 1 past a compaction
	// summary, else 0.
	start int
	// figures asks for the figures of a pass only (PreviewFigures): its
	// edits carry no content, and the replacements are built in one
	// reused buffer, long enough to be estimated. saved then receives,
	// for each edit of the result, the tokens it frees.
	figures bool
	saved   []int
	// scratch, when set, lends its buffers to the pass made on the view
	// and takes them back after it (see planOn); pass is that pass.
	scratch *passScratch
	pass    *pass
}

// passScratch holds the buffers of a finished pass for the next one, so
// that a preview of several strategies on a long context allocates its
// proposals once rather than once per strategy.
type passScratch struct {
	edits []edit
	at    []int32
	buf   []byte
}

// reclaim takes back the buffers of p, whose results have been copied
// out (see result), with at cleared.
func (sc *passScratch) reclaim(p *pass) {
	if p.at != nil {
		for _, e := range p.edits {
			p.at[e.i] = 0
		}
		sc.at = p.at
	}
	sc.edits, sc.buf = p.edits[:0], p.buf[:0]
}

func newStrategyView(path []*Entry) *strategyView {
	return viewOf(path, BuildContext(path))
}

// viewOf is newStrategyView for a context already built from path. The
// stored messages are built again only when the path holds edits.
func viewOf(path []*Entry, cur *Context) *strategyView {
	orig := cur.Messages
	if EditsOf(path) != nil {
		orig = BuildOriginalContext(path).Messages
	}
	v := &strategyView{cur: cur, orig: orig}
	if cur.Compaction != nil {
		v.start = 1
	}
	return v
}

// viewPlanner is implemented by the strategies of this package: Plan on
// a view already built, so that several strategies planned on one path
// share it.
type viewPlanner interface {
	planView(v *strategyView, env StrategyEnv) (*ContextEdit, error)
}

// planOn plans s on path, whose context is cur: on a view of cur when s
// is one of this package's strategies, else through s.Plan. With figures
// (PreviewFigures) this package's strategies plan a figures pass, and
// saved holds what each edit of the result frees; it is nil otherwise.
// A non-nil scratch lends the pass its buffers and takes them back.
func planOn(s Strategy, path []*Entry, cur *Context, env StrategyEnv, figures bool, scratch *passScratch) (ce *ContextEdit, saved []int, err error) {
	if vp, ok := s.(viewPlanner); ok {
		v := viewOf(path, cur)
		v.figures, v.scratch = figures, scratch
		ce, err = vp.planView(v, env)
		if scratch != nil && v.pass != nil {
			scratch.reclaim(v.pass)
		}
		return ce, v.saved, err
	}
	ce, err = s.Plan(path, env)
	return ce, nil, err
}

// usage returns env.Usage, or the measure of the view when it is unset.
func (v *strategyView) usage(env StrategyEnv) int {
	if env.Usage.Tokens > 0 {
		return env.Usage.Tokens
	}
	return Measure(v.cur).Tokens
}

// startsTurn reports whether a message begins a turn: what the user
// typed or ran, or a message injected in the user's place.
func startsTurn(m *Message) bool {
	switch m.Role {
	case RoleUser, RoleBash, RoleCustom, RoleBranchSummary:
		return true
	}
	return false
}

// pass collects the replacements of one strategy run.
type pass struct {
	v *strategyView
	// figures is v.figures, unless the strategy builds on its own
	// proposals (current), which must then be kept.
	figures bool
	// buf and part hold the replacement of a figures pass (see text).
	buf  []byte
	part [1]Part
	// edits are the proposals in the order first made, and contents
	// their new content, which a figures pass does not keep; at[i] is 1
	// plus the index in edits of message i's, 0 when it has none. A pass
	// may edit most of a long context, where a map by index cost several
	// times the proposals themselves.
	edits    []edit
	contents [][]Part
	at       []int32
	freed    int
	// scratch is the message a proposal is estimated on: one per pass
	// rather than a copy per proposal.
	scratch Message
}

// edit is a proposal of a pass: the context index of the message, the
// tokens its new content frees, and the index of that content in
// pass.contents.
type edit struct{ i, saved, k int32 }

func newPass(v *strategyView) *pass {
	p := &pass{v: v, figures: v.figures}
	if sc := v.scratch; sc != nil {
		p.edits, p.buf = sc.edits, sc.buf
		sc.edits, sc.buf = nil, nil
		if len(sc.at) == len(v.cur.Messages) {
			p.at, sc.at = sc.at, nil
		}
		v.pass = p
	}
	return p
}

// text returns one text part holding what build appends to an empty
// buffer. A pass that keeps its edits gets a buffer of its own each time;
// a figures pass reuses one, so the part is valid only until the next
// call.
func (p *pass) text(size int, build func(b []byte) []byte) []Part {
	if p.figures {
		p.buf = build(p.buf[:0])
		p.part[0] = Part{Type: PartText, Text: zerocopy.String(p.buf)}
		return p.part[:]
	}
	b := build(make([]byte, 0, size))
	return []Part{{Type: PartText, Text: zerocopy.String(b)}}
}

// propose replaces the content of message i when that frees tokens
// compared with what the model sees now (an already edited message is
// re-edited only if the new content is smaller). It returns the tokens
// freed, 0 when the proposal was refused.
func (p *pass) propose(i int, content []Part) int {
	if i < p.v.start || i >= len(p.v.cur.Messages) || p.v.cur.IsPinned(i) {
		return 0 // the summary, and pinned messages, are never edited
	}
	cur := p.v.cur.Messages[i]
	p.scratch = *cur
	p.scratch.Content = content
	saved := cur.Tokens() - EstimateTokens(&p.scratch)
	p.scratch = Message{} // hold no content beyond the call
	if saved <= 0 {
		return 0
	}
	if p.at == nil {
		p.at = make([]int32, len(p.v.cur.Messages))
	}
	if k := p.at[i]; k > 0 {
		e := &p.edits[k-1]
		p.freed += saved - int(e.saved)
		e.saved = int32(saved)
		if !p.figures {
			p.contents[e.k] = content
		}
		return saved
	}
	p.freed += saved
	e := edit{i: int32(i), saved: int32(saved)}
	if !p.figures { // a figures pass's content may be the reused buffer (text)
		e.k = int32(len(p.contents))
		p.contents = append(p.contents, content)
	}
	p.edits = append(p.edits, e)
	p.at[i] = int32(len(p.edits))
	return saved
}

// current returns the content of message i as this pass leaves it. A
// figures pass keeps no content: a strategy that calls current turns
// figures off for its pass.
func (p *pass) current(i int) []Part {
	if p.at != nil && !p.figures {
		if k := p.at[i]; k > 0 {
			return p.contents[p.edits[k-1].k]
		}
	}
	return p.v.cur.Messages[i].Content
}

// result turns the pass into a context edit, or nil when it changed
// nothing or freed less than minFree (a token count, or CacheRewriteCost;
// 0 or less otherwise means any saving). It is a pass's last step: it
// puts the edits in context order.
func (p *pass) result(name string, minFree int) *ContextEdit {
	if len(p.edits) == 0 {
		return nil
	}
	slices.SortFunc(p.edits, func(a, b edit) int { return cmp.Compare(a.i, b.i) })
	first := int(p.edits[0].i)
	switch {
	case minFree == CacheRewriteCost:
		cost := 0
		for _, m := range p.v.cur.Messages[first:] {
			cost += m.Tokens()
		}
		if cost -= p.freed; p.freed < cost {
			return nil
		}
	case minFree > 0 && p.freed < minFree:
		return nil
	}
	ce := &ContextEdit{Strategy: name, TokensFreed: p.freed, FirstChangedID: p.v.cur.EntryIDs[first]}
	ce.Edits = make([]Edit, len(p.edits))
	for k, e := range p.edits {
		ce.Edits[k].TargetID = p.v.cur.EntryIDs[e.i]
		if !p.figures {
			ce.Edits[k].Content = p.contents[e.k]
		}
	}
	if p.v.figures {
		p.v.saved = make([]int, len(p.edits))
		for k, e := range p.edits {
			p.v.saved[k] = int(e.saved)
		}
	}
	return ce
}

// appendOriginalSize appends a description of the stored content of a
// message: its text in characters (UTF-16 code units, as the estimate
// counts them) and its images.
func appendOriginalSize(b []byte, m *Message) []byte {
	chars, images := 0, 0
	for _, part := range m.Content {
		switch part.Type {
		case PartText:
			chars += jsontext.UTF16Len(part.Text)
		case PartImage:
			images++
		}
	}
	b = strconv.AppendInt(b, int64(chars), 10)
	b = append(b, " chars"...)
	switch {
	case images == 1:
		b = append(b, " and 1 image"...)
	case images > 1:
		b = append(b, " and "...)
		b = strconv.AppendInt(b, int64(images), 10)
		b = append(b, " images"...)
	}
	b = append(b, ", ~"...)
	b = strconv.AppendInt(b, int64(m.Tokens()), 10)
	return append(b, " tokens"...)
}

// cleared is the placeholder that replaces a tool result: what was
// removed, by which strategy, its size and where the original is.
func (p *pass) cleared(strategy, entryID string, orig *Message) []Part {
	tool := orig.ToolName
	if tool == "" {
		tool = "tool"
	}
	return p.text(len(tool)+len(strategy)+len(entryID)+100, func(b []byte) []byte {
		b = append(b, '[')
		b = append(b, tool...)
		b = append(b, " output removed by "...)
		b = append(b, strategy...)
		b = append(b, ": "...)
		b = appendOriginalSize(b, orig)
		b = append(b, "; original in entry "...)
		b = append(b, entryID...)
		return append(b, ']')
	})
}

// resultIndex maps each tool call id to the context index of its result,
// from the first result with that id.
func resultIndex(c *Context) map[string]int {
	idx := make(map[string]int)
	for i, m := range c.Messages {
		if m.Role == RoleToolResult && m.ToolCallID != "" {
			if _, ok := idx[m.ToolCallID]; !ok {
				idx[m.ToolCallID] = i
			}
		}
	}
	return idx
}

// nameSet returns a lookup for a list of tool names.
func nameSet(names []string) map[string]bool {
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	return set
}
