package tiktoken

import (
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

func TestEncodingFor(t *testing.T) {
	for _, tc := range []struct{ model, want string }{
		{"gpt-4o", O200kBase}, {"gpt-4o-mini", O200kBase}, {"gpt-4.1-nano", O200kBase}, {"gpt-5", O200kBase},
		{"openai/gpt-5-codex", O200kBase}, {"o1", O200kBase}, {"o3-mini", O200kBase}, {"o4-mini", O200kBase},
		{"gpt-4", Cl100kBase}, {"gpt-4-turbo", Cl100kBase}, {"gpt-3.5-turbo", Cl100kBase}, {"text-embedding-3-small", Cl100kBase},
		{"claude-sonnet-4-5", ""}, {"gemini-2.5-pro", ""}, {"ollama/qwen2.5-coder", ""}, {"omni", ""}, {"", ""},
	} {
		if got := EncodingFor(tc.model); got != tc.want {
			t.Errorf("EncodingFor(%q) = %q, want %q", tc.model, got, tc.want)
		}
	}
	if _, ok := ForModel("claude-opus-4"); ok {
		t.Error("a counter for a Claude model")
	}
}

// Counts published for cl100k_base (OpenAI's cookbook and tiktoken's own
// tests), and properties of o200k_base.
func TestCount(t *testing.T) {
	cl, _ := Encoding(Cl100kBase)
	for _, tc := range []struct {
		text string
		want int
	}{{"", 0}, {"hello world", 2}, {"tiktoken is great!", 6}, {"antidisestablishmentarianism", 6}} {
		if got := cl.Count(tc.text); got != tc.want {
			t.Errorf("cl100k_base Count(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
	o, _ := Encoding(O200kBase)
	if o.Name() != O200kBase || o.Count("hello world") != 2 {
		t.Errorf("o200k_base: %s, %d tokens for hello world", o.Name(), o.Count("hello world"))
	}
	// Invalid UTF-8 is counted, not refused.
	if n := o.Count("ok \xff\xfe done"); n < 3 {
		t.Errorf("invalid UTF-8 counted as %d tokens", n)
	}
}

func TestMessageTokens(t *testing.T) {
	o, _ := Encoding(O200kBase)
	m := &compact.Message{Role: compact.RoleAssistant, Content: []compact.Part{
		{Type: compact.PartText, Text: "hello world"},
		{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: "c1", Name: "bash", Arguments: []byte(`{"command":"ls"}`)}},
	}}
	want := PerMessage + o.Count("hello world") + o.Count("bash") + o.Count(`{"command":"ls"}`)
	if got := o.MessageTokens(m); got != want {
		t.Errorf("MessageTokens = %d, want %d", got, want)
	}
	// MeasureWith counts the trailing messages with it.
	ctx := &compact.Context{Messages: []*compact.Message{m, compact.TextMessage(compact.RoleUser, "hi")}}
	u := compact.MeasureWith(ctx, o.MessageTokens)
	if u.Tokens != want+PerMessage+o.Count("hi") || u.UsageTokens != 0 {
		t.Errorf("MeasureWith = %+v", u)
	}
}

// BenchmarkCount: MB/s of the exact count of a 350 KB tool output of code
// and prose, against compact's estimate of the same message.
func BenchmarkCount(b *testing.B) {
	text := strings.Repeat("func main() { fmt.Println(\"hello, world\") } // a line of Go and some prose about it.\n", 4000)
	msg := compact.TextMessage(compact.RoleToolResult, text)
	o, _ := Encoding(O200kBase)
	b.Run("o200k_base", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			o.MessageTokens(msg)
		}
	})
	b.Run("estimate", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			compact.EstimateTokens(msg)
		}
	})
}
