package compact

import "testing"

func TestRegistryLookup(t *testing.T) {
	reg, err := LoadRegistry()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		id     string
		window int
	}{
		{"claude-sonnet-4-5", "claude-sonnet-4-5", 200000},
		{"claude-sonnet-4-5-20250929", "claude-sonnet-4-5", 200000},
		{"anthropic/claude-opus-4-5", "claude-opus-4-5", 200000},
		{"us.anthropic.claude-3-7-sonnet-20250219-v1:0", "claude-3-7-sonnet", 200000},
		{"gpt-4o-mini-2024-07-18", "gpt-4o-mini", 128000},
		{"GPT-4o", "gpt-4o", 128000},
		{"gpt-5.1-codex", "gpt-5.1-codex", 400000},
		{"openai/gpt-4.1", "gpt-4.1", 1047576},
		{"gemini-2.5-pro", "gemini-2.5-pro", 1048576},
		{"models/gemini-2.5-flash", "gemini-2.5-flash", 1048576},
		{"deepseek-chat", "deepseek-chat", 131072},
		{"deepseek/deepseek-r1", "deepseek-reasoner", 131072},
		{"qwen/qwen3-coder-plus", "qwen3-coder-plus", 1048576},
		{"qwen2.5-coder:32b", "qwen2.5-coder-32b", 131072},
		{"mistral-large-latest", "mistral-large", 131072},
		{"codestral-2501", "codestral", 262144},
		{"meta-llama/Meta-Llama-3.1-70B-Instruct", "llama-3.1-70b", 131072},
		{"llama3.1:8b", "llama-3.1-8b", 131072},
		{"llama-4-maverick-17b-128e-instruct", "llama-4-maverick", 1048576},
		// Claude as gateways and agents spell it.
		{"claude_4_5_opus", "claude-opus-4-5", 200000},
		{"claude-4-5-opus", "claude-opus-4-5", 200000},
		{"claude-opus-4.5", "claude-opus-4-5", 200000},
		{"anthropic/claude-4.5-sonnet", "claude-sonnet-4-5", 200000},
		{"claude_4_5_sonnet_20250929", "claude-sonnet-4-5", 200000},
		{"claude-sonnet-3-7", "claude-3-7-sonnet", 200000},
		{"claude-4-opus", "claude-opus-4", 200000},
		{"anthropic.claude-opus-4-5-20251101-v1:0", "claude-opus-4-5", 200000},
		{"CLAUDE_HAIKU_4_5", "claude-haiku-4-5", 200000},
	}
	for _, tt := range tests {
		m, ok := reg.Lookup(tt.name)
		if !ok || m.ID != tt.id || m.ContextWindow != tt.window {
			t.Errorf("Lookup(%q) = %s %d %v, want %s %d", tt.name, m.ID, m.ContextWindow, ok, tt.id, tt.window)
		}
	}
	for _, name := range []string{"", "my-local-model", "gpt", "claude", "o", "claude_9_opus", "claude-4-7"} {
		if m, ok := reg.Lookup(name); ok {
			t.Errorf("Lookup(%q) found %s; an unknown model must stay unknown", name, m.ID)
		}
	}
}

func TestRegistryCoversProviders(t *testing.T) {
	reg, err := LoadRegistry()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, m := range reg.Models() {
		if m.ContextWindow <= 0 || m.MaxOutput <= 0 {
			t.Errorf("%s: window %d, max output %d", m.ID, m.ContextWindow, m.MaxOutput)
		}
		seen[m.Provider] = true
	}
	for _, p := range []string{"anthropic", "openai", "google", "deepseek", "qwen", "mistral", "meta"} {
		if !seen[p] {
			t.Errorf("no %s models in the registry", p)
		}
	}
	over := reg.With(ModelInfo{ID: "gpt-4o", ContextWindow: 1})
	if m, _ := over.Lookup("gpt-4o"); m.ContextWindow != 1 {
		t.Errorf("override not applied: %d", m.ContextWindow)
	}
	if m, _ := reg.Lookup("gpt-4o"); m.ContextWindow != 128000 {
		t.Error("With modified the original registry")
	}
}
