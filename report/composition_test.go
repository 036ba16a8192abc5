package report

import (
	"reflect"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

// TestComposition pins the one composition count that the report and
// compact inspect share, ties included: roles by tokens then name, tools
// by result tokens, then calls, then name.
func TestComposition(t *testing.T) {
	call := func(names ...string) *compact.Message {
		m := &compact.Message{Role: compact.RoleAssistant}
		for _, n := range names {
			m.Content = append(m.Content, compact.Part{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{Name: n, Arguments: []byte(`{}`)}})
		}
		return m
	}
	result := func(tool string, chars int, failed bool) *compact.Message {
		m := compact.TextMessage(compact.RoleToolResult, strings.Repeat("r", chars))
		m.ToolName, m.IsError = tool, failed
		return m
	}
	for _, tc := range []struct {
		name  string
		msgs  []*compact.Message
		roles []RoleStat
		tools []ToolStat
	}{
		{"empty", nil, []RoleStat{}, []ToolStat{}},
		{"roles tie by name", []*compact.Message{
			compact.TextMessage(compact.RoleUser, strings.Repeat("u", 40)),
			compact.TextMessage(compact.RoleAssistant, strings.Repeat("a", 40)),
		}, []RoleStat{{"assistant", 1, 10}, {"user", 1, 10}}, []ToolStat{}},
		{"tools by result tokens, calls, name", []*compact.Message{
			call("read", "bash", "grep", "grep"),
			result("read", 400, false),
			result("bash", 400, true),
			call(""),
		}, nil, []ToolStat{
			{Tool: "bash", Calls: 1, Results: 1, Errors: 1, ResultTokens: 100},
			{Tool: "read", Calls: 1, Results: 1, ResultTokens: 100},
			{Tool: "grep", Calls: 2},
			{Tool: "(unnamed)", Calls: 1},
		}},
	} {
		roles, tools := Composition(tc.msgs)
		if tc.roles != nil && !reflect.DeepEqual(roles, tc.roles) {
			t.Errorf("%s: roles %+v, want %+v", tc.name, roles, tc.roles)
		}
		if !reflect.DeepEqual(tools, tc.tools) {
			t.Errorf("%s: tools %+v, want %+v", tc.name, tools, tc.tools)
		}
	}
}
