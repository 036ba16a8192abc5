package compact

import (
	"encoding/json"
	"fmt"
)

// ClearToolUses defaults.
const (
	DefaultClearTriggerTokens = 100000
	DefaultClearKeep          = 3
)

// ClearToolUses clears old tool uses with the semantics of Anthropic's
// clear_tool_uses_20250919 context edit: once the context reaches
// TriggerTokens, the results of every tool use but the Keep most recent
// are replaced by a placeholder (and, with ClearInputs, the call's
// arguments too), unless that frees less than ClearAtLeast. The zero
// value uses the defaults.
//
// A tool use is one tool call and its result; calls of ExcludeTools are
// never cleared and do not count towards Keep.
type ClearToolUses struct {
	// TriggerTokens is the context size (StrategyEnv.Usage) from which the
	// pass runs; 0 means DefaultClearTriggerTokens.
	TriggerTokens int
	// Keep is how many of the most recent tool uses stay; 0 means
	// DefaultClearKeep.
	Keep int
	// ClearAtLeast is the least the pass must free; 0 means
	// CacheRewriteCost (the tokens from the first changed message to the
	// end, which the provider writes to its cache again).
	ClearAtLeast int
	// ExcludeTools names tools whose uses are never cleared.
	ExcludeTools []string
	// ClearInputs also replaces the arguments of cleared calls with a
	// small JSON object; the call keeps its id and name.
	ClearInputs bool
}

// Name returns "clear_tool_uses".
func (ClearToolUses) Name() string { return "clear_tool_uses" }

// toolUse is one tool call in the context.
type toolUse struct {
	call   int32 // context index of the assistant message
	result int32 // context index of the result, -1 if none
	tc     *ToolCall
}

// Plan proposes the clearing pass; see ClearToolUses.
func (s ClearToolUses) Plan(path []*Entry, env StrategyEnv) (*ContextEdit, error) {
	return s.planView(newStrategyView(path), env)
}

// planView is Plan on a view of the path already built.
func (s ClearToolUses) planView(v *strategyView, env StrategyEnv) (*ContextEdit, error) {
	if v.usage(env) < orDefault(s.TriggerTokens, DefaultClearTriggerTokens) {
		return nil, nil
	}
	keep := orDefault(s.Keep, DefaultClearKeep)
	atLeast := s.ClearAtLeast
	if atLeast == 0 {
		atLeast = CacheRewriteCost
	}
	excluded := nameSet(s.ExcludeTools)
	results := resultIndex(v.cur)

	// One use per result is the usual count; the slice grows past it
	// only for calls without one.
	uses := make([]toolUse, 0, len(results))
	for i := v.start; i < len(v.cur.Messages); i++ {
		m := v.cur.Messages[i]
		if m.Role != RoleAssistant {
			continue
		}
		for _, tc := range m.ToolCalls() {
			if excluded[tc.Name] {
				continue
			}
			r, ok := results[tc.ID]
			if !ok {
				r = -1
			}
			uses = append(uses, toolUse{call: int32(i), result: int32(r), tc: tc})
		}
	}
	if len(uses) <= keep {
		return nil, nil
	}
	uses = uses[:len(uses)-keep]

	p := newPass(v)
	if s.ClearInputs {
		p.figures = false // clearing a call's inputs builds on its earlier proposals
	}
	for _, u := range uses {
		if u.result >= 0 {
			r := int(u.result)
			p.propose(r, p.cleared(s.Name(), v.cur.EntryIDs[r], v.orig[r]))
		}
	}
	if s.ClearInputs {
		cleared := make(map[string]bool, len(uses))
		for _, u := range uses {
			cleared[u.tc.ID] = true
		}
		last := int32(-1)
		for _, u := range uses {
			if u.call == last {
				continue
			}
			last = u.call
			c := int(u.call)
			p.propose(c, clearInputs(s.Name(), v.cur.EntryIDs[c], p.current(c), cleared))
		}
	}
	return p.result(s.Name(), atLeast), nil
}

// clearInputs returns content with the arguments of the calls in cleared
// replaced by {"cleared": "<what and where>"}. Each call keeps its id and
// name, so its result still pairs with it.
func clearInputs(strategy, entryID string, content []Part, cleared map[string]bool) []Part {
	out := make([]Part, len(content))
	copy(out, content)
	for i, part := range out {
		if part.Type != PartToolCall || part.ToolCall == nil || !cleared[part.ToolCall.ID] {
			continue
		}
		tc := part.ToolCall
		note, _ := json.Marshal(map[string]string{"cleared": fmt.Sprintf("arguments removed by %s: %d chars; original in entry %s",
			strategy, JSStringifyLen(tc.Arguments), entryID)})
		out[i].ToolCall = &ToolCall{ID: tc.ID, Name: tc.Name, Arguments: note}
	}
	return out
}
