package compact

// DefaultMaskTurns is how many of the newest turns observation masking
// leaves alone.
const DefaultMaskTurns = 10

// Mask is observation masking: every tool output older than the last
// Turns turns is replaced by a placeholder saying how much was omitted
// and which entry holds it. The agent's own messages (its reasoning and
// tool calls) stay. The zero value uses the defaults.
type Mask struct {
	// Turns is how many of the newest turns keep their tool outputs; 0
	// means DefaultMaskTurns. A turn begins at a user message (or a shell
	// command the user ran, or a message injected in the user's place).
	Turns int
	// MinFree is the least the pass must free: a token count,
	// CacheRewriteCost, or 0 for any saving.
	MinFree int
}

// Name returns "mask".
func (Mask) Name() string { return "mask" }

// Plan proposes the masking pass; see Mask.
func (s Mask) Plan(path []*Entry, env StrategyEnv) (*ContextEdit, error) {
	return s.planView(newStrategyView(path), env)
}

// planView is Plan on a view of the path already built.
func (s Mask) planView(v *strategyView, _ StrategyEnv) (*ContextEdit, error) {
	turns := orDefault(s.Turns, DefaultMaskTurns)
	// boundary is the start of the oldest protected turn.
	boundary, seen := -1, 0
	for i := len(v.cur.Messages) - 1; i >= v.start; i-- {
		if startsTurn(v.cur.Messages[i]) {
			if seen++; seen == turns {
				boundary = i
				break
			}
		}
	}
	if boundary < 0 {
		return nil, nil
	}
	p := newPass(v)
	for i := v.start; i < boundary; i++ {
		if v.cur.Messages[i].Role == RoleToolResult {
			p.propose(i, p.cleared(s.Name(), v.cur.EntryIDs[i], v.orig[i]))
		}
	}
	return p.result(s.Name(), s.MinFree), nil
}
