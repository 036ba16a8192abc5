package compact

// Prune defaults.
const (
	DefaultPruneProtectTokens = 40000
	DefaultPruneMinimumFree   = 20000
	DefaultPruneProtectTurns  = 2
)

// Prune clears old tool outputs, in the manner of opencode's prune.
// Walking back from the newest message, it leaves alone the last
// ProtectTurns turns and then the newest ProtectTokens tokens of tool
// output; every older tool result is replaced by a placeholder, provided
// the pass frees more than MinimumFree tokens. The zero value uses the
// defaults.
type Prune struct {
	// ProtectTokens is how much of the newest tool output, counted from
	// the end of the protected turns, stays; 0 means
	// DefaultPruneProtectTokens.
	ProtectTokens int
	// MinimumFree is the saving the pass must exceed; 0 means
	// DefaultPruneMinimumFree, CacheRewriteCost the cost of rewriting
	// the prompt cache, and any other negative value any saving.
	MinimumFree int
	// ProtectTurns is how many of the newest turns are never pruned; 0
	// means DefaultPruneProtectTurns.
	ProtectTurns int
	// ProtectedTools names tools whose outputs are never pruned.
	ProtectedTools []string
}

// Name returns "prune".
func (Prune) Name() string { return "prune" }

// Plan proposes the pruning pass; see Prune.
func (s Prune) Plan(path []*Entry, env StrategyEnv) (*ContextEdit, error) {
	return s.planView(newStrategyView(path), env)
}

// planView is Plan on a view of the path already built.
func (s Prune) planView(v *strategyView, _ StrategyEnv) (*ContextEdit, error) {
	protect := orDefault(s.ProtectTokens, DefaultPruneProtectTokens)
	turns := orDefault(s.ProtectTurns, DefaultPruneProtectTurns)
	minFree := s.MinimumFree
	if minFree == 0 {
		minFree = DefaultPruneMinimumFree
	}
	protected := nameSet(s.ProtectedTools)

	p := newPass(v)
	seenTurns, total := 0, 0
	for i := len(v.cur.Messages) - 1; i >= v.start; i-- {
		m := v.cur.Messages[i]
		if startsTurn(m) {
			seenTurns++
		}
		if seenTurns < turns || m.Role != RoleToolResult || protected[m.ToolName] {
			continue
		}
		total += m.Tokens()
		if total > protect {
			p.propose(i, p.cleared(s.Name(), v.cur.EntryIDs[i], v.orig[i]))
		}
	}
	switch {
	case minFree == CacheRewriteCost:
		return p.result(s.Name(), CacheRewriteCost), nil
	case minFree > 0:
		// "More than": at least one token over the minimum.
		return p.result(s.Name(), minFree+1), nil
	}
	return p.result(s.Name(), 0), nil
}

// orDefault returns v, or def when v is 0 or less.
func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}
