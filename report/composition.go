package report

import (
	"cmp"
	"slices"
	"sort"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsontext"
)

// previewRunes is the length of a message preview, in characters.
const previewRunes = 160

// Composition counts messages and their estimated tokens by role, and
// tool calls, results, failed results and result tokens by tool name
// ("(unnamed)" when a call or result names none). Roles come largest
// first, then by name; tools by result tokens, then calls, both
// descending, then by name. It is the one count of a conversation's
// composition: the report runs it on a path's stored messages, compact
// inspect on the context the model sees.
func Composition(msgs []*compact.Message) ([]RoleStat, []ToolStat) {
	roles := map[string]*RoleStat{}
	tools := map[string]*ToolStat{}
	tool := func(name string) *ToolStat {
		if name == "" {
			name = "(unnamed)"
		}
		t := tools[name]
		if t == nil {
			t = &ToolStat{Tool: name}
			tools[name] = t
		}
		return t
	}
	for _, m := range msgs {
		rs := roles[string(m.Role)]
		if rs == nil {
			rs = &RoleStat{Role: string(m.Role)}
			roles[string(m.Role)] = rs
		}
		rs.Messages++
		rs.Tokens += m.Tokens()
		switch m.Role {
		case compact.RoleAssistant:
			for _, c := range m.ToolCalls() {
				tool(c.Name).Calls++
			}
		case compact.RoleToolResult:
			t := tool(m.ToolName)
			t.Results++
			t.ResultTokens += m.Tokens()
			if m.IsError {
				t.Errors++
			}
		}
	}
	byRole := sortedValues(roles, func(a, b RoleStat) int {
		return cmp.Or(cmp.Compare(b.Tokens, a.Tokens), strings.Compare(a.Role, b.Role))
	})
	byTool := sortedValues(tools, func(a, b ToolStat) int {
		return cmp.Or(cmp.Compare(b.ResultTokens, a.ResultTokens), cmp.Compare(b.Calls, a.Calls), strings.Compare(a.Tool, b.Tool))
	})
	return byRole, byTool
}

// sortedValues returns the values m points to, in the order of compare.
func sortedValues[K comparable, V any](m map[K]*V, compare func(a, b V) int) []V {
	out := make([]V, 0, len(m))
	for _, v := range m {
		out = append(out, *v)
	}
	slices.SortFunc(out, compare)
	return out
}

// composition counts the path's stored messages by role and by tool
// (Composition), and picks the largest ones. It reads the messages as
// stored: before the compactions that summarized them and without the
// context edits' replacements, so the page shows where the tokens of the
// whole conversation went.
func (r *Report) composition(path []*compact.Entry) {
	// The previews are made for the largest messages only.
	type sized struct {
		stat MessageStat
		m    *compact.Message
	}
	var msgs []*compact.Message
	var all []sized
	for _, e := range path {
		if !e.IsContextMessage() {
			continue
		}
		m := e.Message
		msgs = append(msgs, m)
		st := MessageStat{EntryID: e.ID, Role: string(m.Role), Tokens: m.Tokens()}
		switch m.Role {
		case compact.RoleAssistant:
			var names []string
			for _, c := range m.ToolCalls() {
				names = append(names, c.Name)
			}
			st.Tool = strings.Join(names, ", ")
		case compact.RoleToolResult:
			st.Tool = m.ToolName
		}
		all = append(all, sized{st, m})
	}
	r.ByRole, r.ByTool = Composition(msgs)
	// Largest first; among equals, the earlier message first.
	sort.SliceStable(all, func(i, j int) bool { return all[i].stat.Tokens > all[j].stat.Tokens })
	for _, s := range all[:min(len(all), LargestCount)] {
		s.stat.Preview = preview(s.m)
		r.Largest = append(r.Largest, s.stat)
	}
}

// preview returns the start of a message on one line: its text, or for a
// message without text its tool calls as name(arguments), or its thinking.
func preview(m *compact.Message) string {
	text := m.Text()
	if strings.TrimSpace(text) == "" {
		var calls []string
		for _, c := range m.ToolCalls() {
			calls = append(calls, c.Name+"("+string(c.Arguments)+")")
		}
		text = strings.Join(calls, " ")
	}
	if strings.TrimSpace(text) == "" {
		for _, p := range m.Content {
			switch p.Type {
			case compact.PartThinking:
				text += p.Thinking + " "
			case compact.PartImage:
				text += "[image " + p.Picture().MimeType + "] "
			}
		}
	}
	return jsontext.Shorten(strings.Join(strings.Fields(text), " "), previewRunes)
}
