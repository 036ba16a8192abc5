package report

import (
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/compactkit/compact"
)

// previewRunes is the length of a message preview, in characters.
const previewRunes = 160

// composition counts the path's stored messages by role and by tool, and
// picks the largest ones. It reads the messages as stored: before the
// compactions that summarized them and without the context edits'
// replacements, so the page shows where the tokens of the whole
// conversation went.
func (r *Report) composition(path []*compact.Entry) {
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
	// The previews are made for the largest messages only.
	type sized struct {
		stat MessageStat
		m    *compact.Message
	}
	var all []sized
	for _, e := range path {
		if !e.IsContextMessage() {
			continue
		}
		m := e.Message
		rs := roles[string(m.Role)]
		if rs == nil {
			rs = &RoleStat{Role: string(m.Role)}
			roles[string(m.Role)] = rs
		}
		rs.Messages++
		rs.Tokens += m.Tokens()
		st := MessageStat{EntryID: e.ID, Role: string(m.Role), Tokens: m.Tokens()}
		switch m.Role {
		case compact.RoleAssistant:
			var names []string
			for _, c := range m.ToolCalls() {
				tool(c.Name).Calls++
				names = append(names, c.Name)
			}
			st.Tool = strings.Join(names, ", ")
		case compact.RoleToolResult:
			t := tool(m.ToolName)
			t.Results++
			t.ResultTokens += m.Tokens()
			if m.IsError {
				t.Errors++
			}
			st.Tool = m.ToolName
		}
		all = append(all, sized{st, m})
	}
	for _, rs := range roles {
		r.ByRole = append(r.ByRole, *rs)
	}
	sort.Slice(r.ByRole, func(i, j int) bool {
		a, b := r.ByRole[i], r.ByRole[j]
		if a.Tokens != b.Tokens {
			return a.Tokens > b.Tokens
		}
		return a.Role < b.Role
	})
	for _, t := range tools {
		r.ByTool = append(r.ByTool, *t)
	}
	sort.Slice(r.ByTool, func(i, j int) bool {
		a, b := r.ByTool[i], r.ByTool[j]
		if a.ResultTokens != b.ResultTokens {
			return a.ResultTokens > b.ResultTokens
		}
		if a.Calls != b.Calls {
			return a.Calls > b.Calls
		}
		return a.Tool < b.Tool
	})
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

// shorten cuts s to at most n characters, marking the cut with "…".
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i = range s {
		if count == n-1 {
			break
		}
		count++
	}
	return s[:i] + "…"
}
