package compact

import (
	"errors"
	"testing"
)

// TestConfigValidate: the settings rules the command line and the proxy
// share; each error is a *FieldError naming the setting.
func TestConfigValidate(t *testing.T) {
	claude := ModelInfo{ID: "claude-sonnet-4-5", ContextWindow: 200000}
	gpt5 := ModelInfo{ID: "gpt-5", ContextWindow: 400000, InputLimit: 272000}
	for _, tc := range []struct {
		name    string
		c       Config
		m       ModelInfo // for ValidateFor; zero skips it
		field   string    // "" means valid
		problem string
	}{
		{"zero is the defaults", Config{}, claude, "", ""},
		{"window too small", Config{Window: 1000}, ModelInfo{}, "window", "must be at least 1024 tokens, got 1000"},
		{"negative reserve", Config{ReserveTokens: -5}, ModelInfo{}, "reserveTokens", "must be a positive number of tokens, got -5"},
		{"negative keep", Config{KeepRecentTokens: -1}, ModelInfo{}, "keepRecentTokens", "must be a positive number of tokens, got -1"},
		{"negative output cap", Config{OutputCap: -1}, ModelInfo{}, "outputCap", "must be a positive number of tokens, got -1"},
		{"trigger above 1", Config{TriggerRatio: 1.5}, ModelInfo{}, "triggerRatio", "must be in (0, 1], got 1.5"},
		{"negative target", Config{TargetRatio: -0.2}, ModelInfo{}, "targetRatio", "must be in (0, 1], got -0.2"},
		{"unknown policy", Config{Policy: "often"}, ModelInfo{}, "policy", `unknown policy "often"; want default, reserve, ratio or input`},
		{"reserve fills the window", Config{Window: 8000, ReserveTokens: 8000}, ModelInfo{}, "reserveTokens", "8000 tokens must be smaller than the window (8000 tokens)"},
		{"keep fills the window", Config{Window: 8000, KeepRecentTokens: 9000}, ModelInfo{}, "keepRecentTokens", "9000 tokens must be smaller than the window (8000 tokens)"},
		{"target above trigger", Config{Policy: "ratio", TriggerRatio: 0.6, TargetRatio: 0.7}, ModelInfo{}, "targetRatio", "0.7 is above triggerRatio 0.6: the target must not exceed the trigger, so want targetRatio in (0, 0.6]"},
		{"reserve over the model's window", Config{ReserveTokens: 250000}, claude, "reserveTokens", `250000 tokens must be smaller than the 200000-token context window of model "claude-sonnet-4-5"`},
		{"default policy scales a large reserve", Config{ReserveTokens: 150000}, claude, "", ""},
		{"pi's reserve under the target", Config{Policy: "reserve", ReserveTokens: 150000}, claude, "reserveTokens",
			`150000 tokens leave a trigger of 50000 tokens, below the compaction target of 100000 (targetRatio of the 200000-token window of model "claude-sonnet-4-5"): the reserve may be at most 100000 tokens here; lower it or targetRatio`},
		{"pi's default reserve under a high target", Config{Policy: "reserve", TargetRatio: 0.95}, gpt5, "targetRatio",
			`the default reserve (16384 tokens) leaves a trigger of 255616 tokens, below the compaction target of 258400 (targetRatio of the 272000-token input limit of model "gpt-5"): the reserve may be at most 13600 tokens here; lower it or targetRatio`},
	} {
		err := tc.c.Validate()
		if err == nil && tc.m.ContextWindow > 0 {
			err = tc.c.ValidateFor(tc.m)
		}
		var fe *FieldError
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.field != "" && !errors.As(err, &fe):
			t.Errorf("%s: %v, want a FieldError", tc.name, err)
		case tc.field != "" && (fe.Field != tc.field || fe.Problem != tc.problem || err.Error() != tc.field+": "+tc.problem):
			t.Errorf("%s: %q\nwant %q", tc.name, err, tc.field+": "+tc.problem)
		}
	}
}
