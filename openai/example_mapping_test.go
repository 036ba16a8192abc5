package openai_test

import (
	"fmt"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/openai"
)

// A Chat assistant message with reasoning and a call whose arguments
// the model broke, then the tool's answer, named
// after its call by Calls.
func ExampleReadChatMessage() {
	var calls openai.Calls
	for _, raw := range []string{
		`{"role":"assistant","reasoning_content":"List first.","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"ls -la"}}]}`,
		`{"role":"tool","tool_call_id":"c1","content":"a.go"}`,
	} {
		m, err := openai.ReadChatMessage([]byte(raw))
		if err != nil {
			fmt.Println(err)
			return
		}
		calls.Add(m.Message)
		fmt.Println(strings.TrimSpace(string(m.Message.Role) + " " + m.Message.ToolName))
		for _, p := range m.Message.Content {
			switch {
			case p.ToolCall != nil:
				fmt.Println(" ", p.Type, p.ToolCall.Name, string(p.ToolCall.Arguments))
			case p.Thinking != "":
				fmt.Printf("  %s %q\n", p.Type, p.Thinking)
			default:
				fmt.Printf("  %s %q\n", p.Type, p.Text)
			}
		}
		for _, w := range m.Warnings {
			fmt.Println("  warning:", w)
		}
	}
	// Output:
	// assistant
	//   thinking "List first."
	//   toolCall bash {"_raw":"ls -la"}
	//   warning: tool call "c1": arguments are not a JSON object: kept as a string under _raw
	// toolResult bash
	//   text "a.go"
}

// Responses items sort by who wrote them; the model's items between two
// others are one response, which a caller joins into one assistant
// message.
func ExampleReadResponsesItem() {
	for _, raw := range []string{
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"Fix it."}]}`,
		`{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Read the test."}],"encrypted_content":"gAAA"}`,
		`{"type":"custom_tool_call","call_id":"k1","name":"apply_patch","input":"*** Begin Patch"}`,
		`{"type":"custom_tool_call_output","call_id":"k1","output":"Done."}`,
	} {
		it, err := openai.ReadResponsesItem([]byte(raw))
		if err != nil {
			fmt.Println(err)
			return
		}
		p := it.Message.Content[0]
		what := p.Text + p.Thinking
		if p.ToolCall != nil {
			what = p.ToolCall.Name + " " + string(p.ToolCall.Arguments)
		}
		fmt.Println(it.Type, kinds[it.Kind], it.Message.Role, p.Type, what)
	}
	// Output:
	// message input user text Fix it.
	// reasoning model assistant thinking Read the test.
	// custom_tool_call model assistant toolCall apply_patch {"input":"*** Begin Patch"}
	// custom_tool_call_output output toolResult text Done.
}

var kinds = map[openai.ItemKind]string{openai.ItemInput: "input", openai.ItemModel: "model", openai.ItemOutput: "output", openai.ItemOther: "other"}

// The way back: the assistant message read above goes out without its
// reasoning and with the arguments as the model wrote them, and the
// system prompt comes first.
func ExampleChatMessages() {
	in, err := openai.ReadChatMessage([]byte(`{"role":"assistant","reasoning_content":"List first.","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"ls -la"}}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := openai.ChatMessages("Be brief.", []*compact.Message{
		compact.TextMessage(compact.RoleUser, "What is here?"),
		in.Message,
		{Role: compact.RoleToolResult, ToolCallID: "c1", ToolName: "bash", Content: []compact.Part{{Type: compact.PartText, Text: "a.go"}}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range out {
		fmt.Println(string(m))
	}
	// Output:
	// {"role":"system","content":"Be brief."}
	// {"role":"user","content":"What is here?"}
	// {"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"ls -la"}}]}
	// {"role":"tool","tool_call_id":"c1","content":"a.go"}
}
