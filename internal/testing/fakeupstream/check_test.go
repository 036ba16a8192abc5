package fakeupstream

import (
	"encoding/json"
	"strings"
	"testing"
)

func items(t *testing.T, list string) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	if err := json.Unmarshal([]byte(list), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPairing(t *testing.T) {
	cases := []struct {
		name string
		api  API
		list string
		want []string // substrings, one per expected problem
	}{
		{"anthropic paired", Anthropic, `[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"a"}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"a"}]}]`, nil},
		{"anthropic pending call at the end", Anthropic, `[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"a"}]}]`, nil},
		{"anthropic orphan result", Anthropic, `[{"role":"user","content":"summary"},{"role":"user","content":[{"type":"tool_result","tool_use_id":"a"}]}]`, []string{"messages[1]: tool_result a has no tool_use"}},
		{"anthropic result not in the next message", Anthropic, `[{"role":"assistant","content":[{"type":"tool_use","id":"a"}]},{"role":"user","content":"hi"},{"role":"user","content":[{"type":"tool_result","tool_use_id":"a"}]}]`,
			[]string{"messages[0]: tool_use a is not answered", "messages[2]: tool_result a has no tool_use"}},
		{"chat paired", Chat, `[{"role":"system","content":"s"},{"role":"assistant","tool_calls":[{"id":"a"},{"id":"b"}]},{"role":"tool","tool_call_id":"a"},{"role":"tool","tool_call_id":"b"},{"role":"user","content":"x"}]`, nil},
		{"chat orphan tool message", Chat, `[{"role":"user","content":"summary"},{"role":"tool","tool_call_id":"a"}]`, []string{"messages[1]: tool message a does not answer"}},
		{"chat unanswered call", Chat, `[{"role":"assistant","tool_calls":[{"id":"a"},{"id":"b"}]},{"role":"tool","tool_call_id":"a"},{"role":"user","content":"x"}]`, []string{"messages[2]: tool_call b is not answered"}},
		{"chat unanswered call at the end", Chat, `[{"role":"assistant","tool_calls":[{"id":"a"}]}]`, []string{"messages[1]: tool_call a is not answered"}},
		{"responses paired", Responses, `[{"type":"message","role":"user","content":"go"},{"type":"function_call","call_id":"a"},{"type":"function_call_output","call_id":"a"},{"type":"custom_tool_call","call_id":"b"},{"type":"custom_tool_call_output","call_id":"b"}]`, nil},
		{"responses orphan output", Responses, `[{"type":"message","role":"user","content":"summary"},{"type":"function_call_output","call_id":"a"}]`, []string{"input[1]: function_call_output a has no earlier call"}},
		{"responses call without output", Responses, `[{"type":"function_call","call_id":"a"}]`, []string{"no tool output found for call a"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Pairing(c.api, items(t, c.list))
			if len(got) != len(c.want) {
				t.Fatalf("problems %q, want %d like %q", got, len(c.want), c.want)
			}
			for i, w := range c.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}
