package compact

import (
	"sort"
	"strconv"

	"github.com/compactkit/compact/internal/jsontext"
)

// Truncate defaults.
const (
	DefaultTruncateMinChars = 500
	DefaultTruncateKeepLast = 3
	// DefaultTruncateHeadPercent and DefaultTruncateHeadChars bound the
	// kept head: min(15% of the text, 6000 chars).
	DefaultTruncateHeadPercent = 15
	DefaultTruncateHeadChars   = 6000
	// DefaultTruncateTailPercent and DefaultTruncateTailChars bound the
	// kept tail: min(8% of the text, 3000 chars).
	DefaultTruncateTailPercent = 8
	DefaultTruncateTailChars   = 3000
)

// Truncate keeps the head and tail of long messages and replaces the
// middle with a label giving the original size, the characters left out
// and the entry that holds them. Targets are taken in this order: tool
// results, largest first; then older assistant messages, oldest first;
// then older user messages, oldest first. With StrategyEnv.Target set, it
// stops as soon as the context would fit under it. It never touches the
// first user message, the last KeepLast messages of each role, tool
// results marked as errors, or messages under MinChars characters. Only
// text parts are shortened; tool calls, thinking and images stay.
//
// Truncation is computed from the stored text; a message another pass
// already shrank further is left as it is. Characters are Unicode code
// points. The zero value uses the defaults.
type Truncate struct {
	// MinChars is the shortest text truncated; 0 means
	// DefaultTruncateMinChars.
	MinChars int
	// KeepLast is how many of the newest messages of each role are never
	// truncated; 0 means DefaultTruncateKeepLast.
	KeepLast int
	// HeadPercent and HeadChars bound the head kept: min(HeadPercent% of
	// the text, HeadChars); 0 means the defaults.
	HeadPercent, HeadChars int
	// TailPercent and TailChars bound the tail kept likewise.
	TailPercent, TailChars int
	// MinFree is the least the pass must free: a token count,
	// CacheRewriteCost, or 0 for any saving.
	MinFree int
}

// Name returns "truncate".
func (Truncate) Name() string { return "truncate" }

// Plan proposes the truncation pass; see Truncate.
func (s Truncate) Plan(path []*Entry, env StrategyEnv) (*ContextEdit, error) {
	return s.planView(newStrategyView(path), env)
}

// planView is Plan on a view of the path already built.
func (s Truncate) planView(v *strategyView, env StrategyEnv) (*ContextEdit, error) {
	minChars := orDefault(s.MinChars, DefaultTruncateMinChars)
	keepLast := orDefault(s.KeepLast, DefaultTruncateKeepLast)
	over := 0 // tokens to free to reach the target; 0 without one
	if env.Target > 0 {
		if over = v.usage(env) - env.Target; over <= 0 {
			return nil, nil
		}
	}

	// Protected: the first user message and the newest keepLast of each role.
	protected := make(map[int]bool)
	left := map[Role]int{RoleUser: keepLast, RoleAssistant: keepLast, RoleToolResult: keepLast}
	for i := len(v.cur.Messages) - 1; i >= v.start; i-- {
		if r := v.cur.Messages[i].Role; left[r] > 0 {
			left[r]--
			protected[i] = true
		}
	}
	for i := v.start; i < len(v.cur.Messages); i++ {
		if v.cur.Messages[i].Role == RoleUser {
			protected[i] = true
			break
		}
	}

	var results, assistants, users []int
	for i := v.start; i < len(v.cur.Messages); i++ {
		m := v.orig[i]
		// Messages too short to cut (see truncated) are left out at once:
		// most messages are.
		if protected[i] || m.Tokens()*4 < minChars {
			continue
		}
		switch {
		case m.Role == RoleToolResult && !m.IsError:
			results = append(results, i)
		case m.Role == RoleAssistant:
			assistants = append(assistants, i)
		case m.Role == RoleUser:
			users = append(users, i)
		}
	}
	sort.SliceStable(results, func(a, b int) bool {
		return v.cur.Messages[results[a]].Tokens() > v.cur.Messages[results[b]].Tokens()
	})

	p := newPass(v)
	for _, group := range [][]int{results, assistants, users} {
		for _, i := range group {
			if over > 0 && p.freed >= over {
				return p.result(s.Name(), s.MinFree), nil
			}
			if content, ok := s.truncated(p, v.orig[i], v.cur.EntryIDs[i], minChars); ok {
				p.propose(i, content)
			}
		}
	}
	return p.result(s.Name(), s.MinFree), nil
}

// truncated returns the stored content of m with its text cut to head,
// label and tail; false when the text is under minChars. The cut text is
// built by p.text (reused in a figures pass).
func (s Truncate) truncated(p *pass, m *Message, entryID string, minChars int) ([]Part, bool) {
	// The estimate counts at least one char per code point of the text:
	// a message whose estimate is too small cannot reach minChars.
	if m.Tokens()*4 < minChars {
		return nil, false
	}
	text := m.Text()
	n := jsontext.RuneCount(text)
	if n < minChars {
		return nil, false
	}
	head := min(n*orDefault(s.HeadPercent, DefaultTruncateHeadPercent)/100, orDefault(s.HeadChars, DefaultTruncateHeadChars))
	tail := min(n*orDefault(s.TailPercent, DefaultTruncateTailPercent)/100, orDefault(s.TailChars, DefaultTruncateTailChars))
	if head+tail >= n {
		return nil, false
	}
	headEnd := jsontext.RuneOffset(text, head)
	tailStart := jsontext.RuneOffset(text, n-tail)
	name := s.Name()
	parts := p.text(headEnd+len(text)-tailStart+len(name)+len(entryID)+100, func(b []byte) []byte {
		b = append(b, text[:headEnd]...)
		b = append(b, "\n[… truncated by "...)
		b = append(b, name...)
		b = append(b, ": original "...)
		b = strconv.AppendInt(b, int64(n), 10)
		b = append(b, " chars, "...)
		b = strconv.AppendInt(b, int64(n-head-tail), 10)
		b = append(b, " chars left out; original in entry "...)
		b = append(b, entryID...)
		b = append(b, " …]\n"...)
		return append(b, text[tailStart:]...)
	})

	// The text parts become one, where the first one was. A message of
	// one text part, the usual case, gives the part p.text made.
	if len(m.Content) == 1 {
		return parts, true
	}
	var out []Part
	placed := false
	for _, part := range m.Content {
		if part.Type != PartText {
			out = append(out, part)
			continue
		}
		if !placed {
			out = append(out, parts[0])
			placed = true
		}
	}
	return out, true
}
