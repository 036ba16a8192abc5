package report

import (
	"sort"
	"strings"
	"unicode/utf8"

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
	byRole := make([]RoleStat, 0, len(roles))
	for _, rs := range roles {
		byRole = append(byRole, *rs)
	}
	sort.Slice(byRole, func(i, j int) bool {
		a, b := byRole[i], byRole[j]
		if a.Tokens != b.Tokens {
			return a.Tokens > b.Tokens
		}
		return a.Role < b.Role
	})
	byTool := make([]ToolStat, 0, len(tools))
	for _, t := range tools {
		byTool = append(byTool, *t)
	}
	sort.Slice(byTool, func(i, j int) bool {
		a, b := byTool[i], byTool[j]
		if a.ResultTokens != b.ResultTokens {
			return a.ResultTokens > b.ResultTokens
		}
		if a.Calls != b.Calls {
			return a.Calls > b.Calls
		}
		return a.Tool < b.Tool
	})
	return byRole, byTool
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
	return shorten(strings.Join(strings.Fields(text), " "), previewRunes)
}

// shorten cuts s to at most n characters (n >= 1), marking the cut with
// "…", which counts as one of them.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return s[:jsontext.RuneOffset(s, n-1)] + "…"
}
