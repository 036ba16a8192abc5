package compact

import (
	"errors"
	"strings"
	"testing"
)

func TestPolicies(t *testing.T) {
	claude := ModelInfo{ID: "claude-sonnet-4-5", ContextWindow: 200000, MaxOutput: 64000}
	gpt5 := ModelInfo{ID: "gpt-5", ContextWindow: 400000, MaxOutput: 128000, InputLimit: 272000}
	small := ModelInfo{ID: "llama", ContextWindow: 8192, MaxOutput: 2048}
	loose := ModelInfo{ID: "loose", ContextWindow: 200000, MaxOutput: 64000, InputLimit: 190000}
	unknown := ModelInfo{ID: "my-local-model"}
	tests := []struct {
		name      string
		p         Policy
		m         ModelInfo
		threshold int
		target    int
		known     bool
	}{
		{"reserve default", Reserve{}, claude, 200000 - 16384, 100000, true},
		{"reserve custom", Reserve{Tokens: 50000, TargetRatio: 0.4}, claude, 150000, 80000, true},
		{"reserve larger than window", Reserve{Tokens: 10000}, small, 0, 4096, true},
		{"default on a large window", DefaultPolicy{}, claude, 200000 - 16384, 91808, true},
		{"default under the input limit", DefaultPolicy{}, gpt5, 272000 - 16384, 127808, true},
		{"default keeps a fifth of a small window", DefaultPolicy{}, small, 8192 - 8192/5, 3277, true},
		{"default reserve larger than window", DefaultPolicy{Tokens: 10000}, small, 8192 - 8192/5, 3277, true},
		{"default custom reserve", DefaultPolicy{Tokens: 50000, TargetRatio: 0.4}, claude, 160000, 80000, true},
		{"default target under half the trigger", DefaultPolicy{TargetRatio: 0.9}, claude, 200000 - 16384, 91808, true},
		{"default unknown window", DefaultPolicy{}, unknown, 0, 0, false},
		{"ratio default 0.9", Ratio{}, claude, 180000, 100000, true},
		{"ratio 0.75", Ratio{Ratio: 0.75}, claude, 150000, 100000, true},
		{"reserve under the input limit", Reserve{}, gpt5, 272000 - 16384, 136000, true},
		{"ratio of the input limit", Ratio{}, gpt5, 244800, 136000, true},
		{"reserve target ratio of the input limit", Reserve{TargetRatio: 0.75}, gpt5, 272000 - 16384, 204000, true},
		{"input limit wins", InputLimit{}, gpt5, 272000, 136000, true},
		{"window minus output below a loose input limit", InputLimit{}, loose, 200000 - 32000, 84000, true},
		{"window minus capped output", InputLimit{}, claude, 200000 - 32000, 84000, true},
		{"window minus small max output", InputLimit{}, small, 8192 - 2048, 3072, true},
		{"reserve unknown window", Reserve{}, unknown, 0, 0, false},
		{"ratio unknown window", Ratio{}, unknown, 0, 0, false},
		{"input unknown window", InputLimit{}, unknown, 0, 0, false},
	}
	for _, tt := range tests {
		th, ok := tt.p.Threshold(tt.m)
		if th != tt.threshold || ok != tt.known {
			t.Errorf("%s: threshold %d %v, want %d %v", tt.name, th, ok, tt.threshold, tt.known)
		}
		if tt.known {
			if got := tt.p.Target(tt.m); got != tt.target {
				t.Errorf("%s: target %d, want %d", tt.name, got, tt.target)
			}
		}
	}
}

// TestPoliciesRespectInputLimit: no policy, at its defaults or with
// common settings, triggers above the input limit of a registered model
// that has one, nor aims above its own trigger.
func TestPoliciesRespectInputLimit(t *testing.T) {
	reg, err := LoadRegistry()
	if err != nil {
		t.Fatal(err)
	}
	policies := []Policy{DefaultPolicy{}, DefaultPolicy{Tokens: 1000, TargetRatio: 1}, Reserve{}, Reserve{Tokens: 1000, TargetRatio: 0.8}, Ratio{}, Ratio{Ratio: 1}, InputLimit{}, InputLimit{OutputCap: 1}}
	checked := 0
	for _, m := range reg.Models() {
		if m.InputLimit <= 0 {
			continue
		}
		for _, p := range policies {
			th, ok := p.Threshold(m)
			if !ok || th > m.InputLimit {
				t.Errorf("%s %+v on %s: threshold %d %v, above the input limit %d", p.Name(), p, m.ID, th, ok, m.InputLimit)
			}
			if target := p.Target(m); target > th {
				t.Errorf("%s %+v on %s: target %d above the threshold %d", p.Name(), p, m.ID, target, th)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("the registry has no model with an input limit")
	}
}

func TestCheck(t *testing.T) {
	m := ModelInfo{ID: "claude-sonnet-4-5", ContextWindow: 200000}
	over := ContextUsage{Tokens: 190000}
	under := ContextUsage{Tokens: 100000}

	if d := Check(Reserve{}, m, over, false); !d.Compact || d.Threshold != 183616 || d.Err != nil {
		t.Errorf("over threshold: %+v", d)
	}
	if d := Check(Reserve{}, m, under, false); d.Compact {
		t.Errorf("under threshold triggered: %+v", d)
	}
	// Exactly at the threshold does not trigger (tokens > threshold).
	if d := Check(Reserve{}, m, ContextUsage{Tokens: 183616}, false); d.Compact {
		t.Errorf("at threshold triggered: %+v", d)
	}
	// An unknown window never triggers, however large the context.
	d := Check(Reserve{}, ModelInfo{ID: "mystery"}, ContextUsage{Tokens: 10_000_000}, false)
	if d.Compact || !errors.Is(d.Err, ErrUnknownWindow) || !strings.Contains(d.Reason, "never triggers") {
		t.Errorf("unknown window: %+v", d)
	}
	if d := Check(Reserve{}, m, over, true); d.Compact || !errors.Is(d.Err, ErrDisabled) {
		t.Errorf("disabled: %+v", d)
	}
}

func TestConfig(t *testing.T) {
	var c Config
	c.ApplyEnv(func(string) string { return "" })
	if c.DisableAuto {
		t.Fatal("disabled without the variable")
	}
	for _, v := range []string{"1", "true", "TRUE", " yes "} {
		var c Config
		c.ApplyEnv(func(k string) string {
			if k == EnvDisableAuto {
				return v
			}
			return ""
		})
		if !c.DisableAuto {
			t.Errorf("%s=%q did not disable", EnvDisableAuto, v)
		}
	}
	// The environment wins both ways: 0 switches automatic compaction back
	// on over a configured DisableAuto; other values leave it alone.
	for v, want := range map[string]bool{"0": false, "false": false, " Off ": false, "no": false, "": true, "maybe": true} {
		c := Config{DisableAuto: true}
		c.ApplyEnv(func(k string) string {
			if k == EnvDisableAuto {
				return v
			}
			return ""
		})
		if c.DisableAuto != want {
			t.Errorf("disableAuto true and %s=%q: DisableAuto %v, want %v", EnvDisableAuto, v, c.DisableAuto, want)
		}
	}
	// CheckEnv refuses exactly the values ApplyEnv ignores.
	for v, bad := range map[string]bool{"": false, "  ": false, "1": false, " Off ": false, "maybe": true, "2": true, "disabled": true} {
		err := CheckEnv(func(k string) string {
			if k == EnvDisableAuto {
				return v
			}
			return ""
		})
		if (err != nil) != bad || err != nil && !strings.Contains(err.Error(), EnvDisableAuto) {
			t.Errorf("CheckEnv with %s=%q: %v", EnvDisableAuto, v, err)
		}
	}
	for name, want := range map[string]string{"": "default", "default": "default", "reserve": "reserve", "ratio": "ratio", "input": "input"} {
		p, err := Config{Policy: name}.TriggerPolicy()
		if err != nil || p.Name() != want {
			t.Errorf("policy %q: %v %v", name, p, err)
		}
	}
	if _, err := (Config{Policy: "sometimes"}).TriggerPolicy(); err == nil {
		t.Error("unknown policy accepted")
	}

	reg, err := LoadRegistry()
	if err != nil {
		t.Fatal(err)
	}
	if m := (Config{}).ResolveModel(reg, "claude-sonnet-4-5"); m.ContextWindow != 200000 {
		t.Errorf("registry window %d", m.ContextWindow)
	}
	if m := (Config{Window: 32000}).ResolveModel(reg, "claude-sonnet-4-5"); m.ContextWindow != 32000 {
		t.Errorf("window override %d", m.ContextWindow)
	}
	if m := (Config{}).ResolveModel(reg, "my-finetune"); m.ContextWindow != 0 || m.ID != "my-finetune" {
		t.Errorf("unknown model %+v", m)
	}
	cfg := Config{Models: []ModelInfo{{ID: "my-finetune", ContextWindow: 65536}}}
	if m := cfg.ResolveModel(reg, "my-finetune"); m.ContextWindow != 65536 {
		t.Errorf("config model %+v", m)
	}
}

// TestCompactedRecently pins the rule the Guard and the proxy share.
func TestCompactedRecently(t *testing.T) {
	for _, tc := range []struct {
		name                            string
		tokens, after, threshold, fixed int
		want                            bool
	}{
		{"grew less than a quarter of the room", 1050, 900, 1000, 0, true},
		{"grew a quarter of the room", 1150, 900, 1000, 0, false},
		{"the fixed part is no room", 1050, 900, 1000, 600, false},
		{"the fixed part is no room, little growth", 1050, 990, 1000, 600, true},
		{"size after unknown", 1050, 0, 1000, 0, false},
		{"threshold unknown", 1050, 900, 0, 0, false},
	} {
		if got := CompactedRecently(tc.tokens, tc.after, tc.threshold, tc.fixed); got != tc.want {
			t.Errorf("%s: CompactedRecently(%d, %d, %d, %d) = %v, want %v", tc.name, tc.tokens, tc.after, tc.threshold, tc.fixed, got, tc.want)
		}
	}
}
