package proxy

import (
	"strings"
	"testing"
)

// TestValidateBody checks the wire rules the validator enforces, case by
// case. (Table written by the wire codec work on branch h-wire.)
func TestValidateBody(t *testing.T) {
	const (
		use    = `{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"X","input":{}}]}`
		use2   = `{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"X","input":{}},{"type":"tool_use","id":"t2","name":"X","input":{}}]}`
		think  = `{"role":"assistant","content":[{"type":"thinking","thinking":"a","signature":"s"},{"type":"tool_use","id":"t1","name":"X","input":{}}]}`
		think2 = `{"role":"assistant","content":[{"type":"thinking","thinking":"b","signature":"s"},{"type":"tool_use","id":"t2","name":"X","input":{}}]}`
		res    = `{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"r"}]}`
		res2   = `{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"r"}]}`
		user   = `{"role":"user","content":"hi"}`
		text   = `{"role":"assistant","content":[{"type":"text","text":"ok"}]}`
		use2b  = `{"role":"assistant","content":[{"type":"tool_use","id":"t2","name":"X","input":{}}]}`
	)
	msgs := func(thinking string, m ...string) string {
		return `{` + thinking + `"messages":[` + strings.Join(m, ",") + `]}`
	}
	chat := func(m ...string) string { return `{"messages":[` + strings.Join(m, ",") + `]}` }
	resp := func(m ...string) string { return `{"input":[` + strings.Join(m, ",") + `]}` }
	const (
		cCall  = `{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"c2","type":"function","function":{"name":"f","arguments":"{}"}}]}`
		cTool1 = `{"role":"tool","tool_call_id":"c1","content":"r"}`
		cTool2 = `{"role":"tool","tool_call_id":"c2","content":"r"}`
		cUser  = `{"role":"user","content":"u"}`
		rCall  = `{"type":"function_call","call_id":"f1","name":"x","arguments":"{}"}`
		rOut   = `{"type":"function_call_output","call_id":"f1","output":"o"}`
		rCust  = `{"type":"custom_tool_call","call_id":"f2","name":"p","input":"i"}`
		rCOut  = `{"type":"custom_tool_call_output","call_id":"f2","output":"o"}`
		rUser  = `{"type":"message","role":"user","content":"u"}`
	)
	const on = `"thinking":{"type":"enabled","budget_tokens":1024},`
	for _, tc := range []struct {
		name string
		api  API
		body string
		ok   bool
	}{
		{"anthropic paired", Anthropic, msgs("", user, use, res, text), true},
		{"anthropic parallel paired", Anthropic, msgs("", user, use2, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2"},{"type":"tool_result","tool_use_id":"t1"}]}`), true},
		{"anthropic unanswered", Anthropic, msgs("", user, use2, res), false},
		{"anthropic use at the end", Anthropic, msgs("", user, use), false},
		{"anthropic orphan result", Anthropic, msgs("", user, res), false},
		{"anthropic result after text", Anthropic, msgs("", user, text, res), false},
		{"anthropic result one turn late", Anthropic, msgs("", user, use, res, use2b, res), false},
		{"anthropic system note between", Anthropic, msgs("", user, use, res, `{"role":"system","content":"note"}`, text), true},
		{"anthropic thinking loop ok", Anthropic, msgs(on, user, think, res), true},
		{"anthropic thinking multi-step loop", Anthropic, msgs(on, user, think, res, use2b, res2), true},
		{"anthropic thinking interleaved", Anthropic, msgs(on, user, think, res, think2, res2), true},
		{"anthropic thinking loop missing", Anthropic, msgs(on, user, use, res), false},
		{"anthropic thinking loop cut mid-turn", Anthropic, msgs(on, user, use2b, res2), false},
		{"anthropic adaptive needs no thinking", Anthropic, msgs(`"thinking":{"type":"adaptive"},`, user, use, res), true},
		{"anthropic thinking ended turn", Anthropic, msgs(on, user, use, res, text, user), true},
		{"anthropic not json", Anthropic, `{"messages":[}`, false},
		{"chat paired", Chat, chat(cUser, cCall, cTool2, cTool1, `{"role":"assistant","content":"done"}`), true},
		{"chat unanswered", Chat, chat(cUser, cCall, cTool1, cUser), false},
		{"chat unanswered at end", Chat, chat(cUser, cCall, cTool1), false},
		{"chat orphan", Chat, chat(cUser, cTool1), false},
		{"chat tool after user", Chat, chat(cUser, cCall, cTool1, cUser, cTool2), false},
		{"chat duplicate answer", Chat, chat(cUser, cCall, cTool1, cTool1, cTool2), false},
		{"responses paired", Responses, resp(rUser, rCall, rOut, rCust, rCOut), true},
		{"responses string input", Responses, `{"input":"hi"}`, true},
		{"responses missing output", Responses, resp(rUser, rCall), false},
		{"responses orphan output", Responses, resp(rUser, rOut), false},
		{"responses output before call", Responses, resp(rOut, rCall), false},
		{"responses custom orphan", Responses, resp(rCOut), false},
		{"responses kinds do not mix", Responses, resp(rCall, `{"type":"custom_tool_call_output","call_id":"f1","output":"o"}`), false},
		{"unknown api", "nope", `{}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := validateBody(tc.api, []byte(tc.body))
			if (err == nil) != tc.ok {
				t.Errorf("validateBody = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}
