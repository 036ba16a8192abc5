package compact

import (
	"sort"
	"strconv"
	"strings"
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
// is one of this package's strategies, else through s.Plan.
func planOn(s Strategy, path []*Entry, cur *Context, env StrategyEnv) (*ContextEdit, error) {
	if vp, ok := s.(viewPlanner); ok {
		return vp.planView(viewOf(path, cur), env)
	}
	return s.Plan(path, env)
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
	v     *strategyView
	edits map[int]proposal // by context index
	freed int
	// scratch is the message a proposal is estimated on: one per pass
	// rather than a copy per proposal.
	scratch Message
}

// proposal is the content a pass gives a message and the tokens that
// frees.
type proposal struct {
	content []Part
	saved   int
}

func newPass(v *strategyView) *pass {
	return &pass{v: v, edits: map[int]proposal{}}
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
	p.freed += saved - p.edits[i].saved
	p.edits[i] = proposal{content, saved}
	return saved
}

// current returns the content of message i as this pass leaves it.
func (p *pass) current(i int) []Part {
	if e, ok := p.edits[i]; ok {
		return e.content
	}
	return p.v.cur.Messages[i].Content
}

// result turns the pass into a context edit, or nil when it changed
// nothing or freed less than minFree (a token count, or CacheRewriteCost;
// 0 or less otherwise means any saving).
func (p *pass) result(name string, minFree int) *ContextEdit {
	if len(p.edits) == 0 {
		return nil
	}
	idx := make([]int, 0, len(p.edits))
	for i := range p.edits {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	switch {
	case minFree == CacheRewriteCost:
		cost := 0
		for _, m := range p.v.cur.Messages[idx[0]:] {
			cost += m.Tokens()
		}
		if cost -= p.freed; p.freed < cost {
			return nil
		}
	case minFree > 0 && p.freed < minFree:
		return nil
	}
	ce := &ContextEdit{Strategy: name, TokensFreed: p.freed, FirstChangedID: p.v.cur.EntryIDs[idx[0]]}
	ce.Edits = make([]Edit, len(idx))
	for k, i := range idx {
		ce.Edits[k] = Edit{TargetID: p.v.cur.EntryIDs[i], Content: p.edits[i].content}
	}
	return ce
}

// originalSize describes the stored content of a message: its text in
// characters (UTF-16 code units, as the estimate counts them) and its
// images.
func originalSize(b *strings.Builder, m *Message) {
	chars, images := 0, 0
	for _, part := range m.Content {
		switch part.Type {
		case PartText:
			chars += utf16Len(part.Text)
		case PartImage:
			images++
		}
	}
	b.WriteString(strconv.Itoa(chars))
	b.WriteString(" chars")
	switch {
	case images == 1:
		b.WriteString(" and 1 image")
	case images > 1:
		b.WriteString(" and " + strconv.Itoa(images) + " images")
	}
	b.WriteString(", ~")
	b.WriteString(strconv.Itoa(m.Tokens()))
	b.WriteString(" tokens")
}

// clearedResult is the placeholder that replaces a tool result: what was
// removed, by which strategy, its size and where the original is.
func clearedResult(strategy, entryID string, orig *Message) []Part {
	tool := orig.ToolName
	if tool == "" {
		tool = "tool"
	}
	// Built in one buffer: a pass may clear tens of thousands of results.
	var b strings.Builder
	b.Grow(len(tool) + len(strategy) + len(entryID) + 100)
	b.WriteString("[")
	b.WriteString(tool)
	b.WriteString(" output removed by ")
	b.WriteString(strategy)
	b.WriteString(": ")
	originalSize(&b, orig)
	b.WriteString("; original in entry ")
	b.WriteString(entryID)
	b.WriteString("]")
	return []Part{{Type: PartText, Text: b.String()}}
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
