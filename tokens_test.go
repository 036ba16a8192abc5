package compact

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

func TestEstimateTokens(t *testing.T) {
	exit := 1
	call := func(name, args string) Part {
		return Part{Type: PartToolCall, ToolCall: &ToolCall{Name: name, Arguments: json.RawMessage(args)}}
	}
	tests := []struct {
		name string
		msg  *Message
		want int
	}{
		{"empty", &Message{Role: RoleUser}, 0},
		{"rounds up per message", TextMessage(RoleUser, "abcde"), 2},
		{"utf-16 units: é is one, 😀 is two", TextMessage(RoleUser, "é😀é"), 1},
		{"text parts add up", &Message{Role: RoleUser, Content: []Part{{Type: PartText, Text: "abcd"}, {Type: PartText, Text: "efgh"}}}, 2},
		{"user image counts 1200", &Message{Role: RoleUser, Content: []Part{{Type: PartText, Text: "look"}, {Type: PartImage, Image: &Image{Data: "xx"}}}}, 1201},
		{"tool result image", &Message{Role: RoleToolResult, Content: []Part{{Type: PartImage}, {Type: PartImage}}}, 2400},
		{"assistant text, thinking, tool call", &Message{Role: RoleAssistant, Content: []Part{
			{Type: PartText, Text: "1234"}, {Type: PartThinking, Thinking: "5678"}, call("read", `{"path":"a"}`)}}, 2 + 4},
		// JSON.stringify keeps key order, drops whitespace, does not escape <>&.
		{"tool call args as JavaScript prints them", &Message{Role: RoleAssistant, Content: []Part{
			call("bash", `{ "z": "<&>", "a" : [1, 2.50, true, null] }`)}}, (4 + len(`{"z":"<&>","a":[1,2.5,true,null]}`) + 3) / 4},
		{"escapes in args", &Message{Role: RoleAssistant, Content: []Part{
			call("w", `{"t":"line\nnext \"q\" \u00e9 \/"}`)}}, (1 + len(`{"t":"line\nnext \"q\" é /"}`) - 1 + 3) / 4},
		{"bash execution", &Message{Role: RoleBash, Meta: &MessageMeta{Command: "ls", Output: "a\nb", ExitCode: &exit}}, 2},
		{"summary", TextMessage(RoleCompactionSummary, strings.Repeat("s", 40)), 10},
	}
	for _, tt := range tests {
		if got := EstimateTokens(tt.msg); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}

// Tokens computes the estimate on its first call and caches it; the cache
// is safe for goroutines that share a message (run with -race), holds 0
// as a real estimate, and ResetTokens makes the next call re-estimate.
func TestTokensCache(t *testing.T) {
	m := &Message{Role: RoleUser, Content: []Part{{Type: PartText, Text: strings.Repeat("abcd", 250)}}}
	const goroutines = 8
	got := make([]int, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() { got[g] = m.Tokens() })
	}
	wg.Wait()
	for g, n := range got {
		if n != 250 {
			t.Errorf("goroutine %d: Tokens() = %d, want 250", g, n)
		}
	}

	// The cached value stands until ResetTokens, even after a change.
	m.Content[0].Text = "abcdefgh"
	if n := m.Tokens(); n != 250 {
		t.Errorf("cached Tokens() after a change without reset = %d, want 250", n)
	}
	m.ResetTokens()
	if n := m.Tokens(); n != 2 {
		t.Errorf("Tokens() after ResetTokens = %d, want 2", n)
	}

	empty := &Message{Role: RoleUser}
	for range 2 {
		if n := empty.Tokens(); n != 0 {
			t.Errorf("empty message: Tokens() = %d, want 0", n)
		}
	}
}
