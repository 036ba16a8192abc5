package compact

import (
	"fmt"
	"strings"
)

// EnvDisableAuto is the environment variable that switches automatic
// compaction off when set to 1 or true.
const EnvDisableAuto = "COMPACT_DISABLE_AUTO"

// Config holds the user's compaction settings. Every zero field means the
// documented default: the zero Config triggers with DefaultPolicy, the
// rule the Guard, the command line and the proxy share.
type Config struct {
	// Policy is "default" (or empty: DefaultPolicy), "reserve" (pi's
	// rule, Reserve), "ratio" or "input".
	Policy string `json:"policy,omitempty"`
	// ReserveTokens for the default and reserve policies; default 16384
	// (the default policy keeps at most a fifth of the window).
	ReserveTokens int `json:"reserveTokens,omitempty"`
	// TriggerRatio for the ratio policy; default 0.9.
	TriggerRatio float64 `json:"triggerRatio,omitempty"`
	// TargetRatio of the window to compact down to; default 0.5.
	TargetRatio float64 `json:"targetRatio,omitempty"`
	// OutputCap bounds the output reserve of the input policy; default
	// 32000.
	OutputCap int `json:"outputCap,omitempty"`
	// KeepRecentTokens kept verbatim; default 20000.
	KeepRecentTokens int `json:"keepRecentTokens,omitempty"`
	// Window overrides the model's context window from the registry.
	Window int `json:"window,omitempty"`
	// Model overrides the session's model for the registry lookup.
	Model string `json:"model,omitempty"`
	// DisableAuto switches automatic compaction off. Manual compaction
	// still works.
	DisableAuto bool `json:"disableAuto,omitempty"`
	// Models adds or replaces registry entries.
	Models []ModelInfo `json:"models,omitempty"`
	// MemoryLog is the Markdown file every compaction's summary is also
	// appended to (see MemoryLog); "" keeps none.
	MemoryLog string `json:"memoryLog,omitempty"`
}

// ApplyEnv applies environment overrides. The environment wins over the
// configuration both ways: COMPACT_DISABLE_AUTO=1 (true, yes, on) sets
// DisableAuto, COMPACT_DISABLE_AUTO=0 (false, no, off) clears it; unset
// or any other value leaves it as configured. getenv is usually
// os.Getenv.
func (c *Config) ApplyEnv(getenv func(string) string) {
	if v, ok := envBool(getenv(EnvDisableAuto)); ok {
		c.DisableAuto = v
	}
}

// CheckEnv returns an error naming the variable when the environment
// holds an override that ApplyEnv does not understand and would ignore,
// such as COMPACT_DISABLE_AUTO=maybe; nil when every variable is unset,
// empty or understood. A command line calls it to refuse the mistake.
func CheckEnv(getenv func(string) string) error {
	if s := getenv(EnvDisableAuto); strings.TrimSpace(s) != "" {
		if _, ok := envBool(s); !ok {
			return fmt.Errorf("%s: %q is not 1, true, yes, on (automatic compaction off) or 0, false, no, off (on)", EnvDisableAuto, s)
		}
	}
	return nil
}

// envBool reads a yes-or-no environment value, in any case and with
// spaces around: 1, true, yes or on, and 0, false, no or off. ok is false
// for anything else.
func envBool(s string) (v, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "on":
		return true, true
	case "0", "false", "no", "off":
		return false, true
	}
	return false, false
}

// TriggerPolicy returns the configured policy with its settings.
func (c Config) TriggerPolicy() (Policy, error) {
	switch c.Policy {
	case "", "default":
		return DefaultPolicy{Tokens: c.ReserveTokens, TargetRatio: c.TargetRatio}, nil
	case "reserve":
		return Reserve{Tokens: c.ReserveTokens, TargetRatio: c.TargetRatio}, nil
	case "ratio":
		return Ratio{Ratio: c.TriggerRatio, TargetRatio: c.TargetRatio}, nil
	case "input", "input-limit":
		return InputLimit{OutputCap: c.OutputCap, TargetRatio: c.TargetRatio}, nil
	}
	return nil, fmt.Errorf("config: unknown policy %q (want default, reserve, ratio or input)", c.Policy)
}

// ResolveModel returns the limits of the named model: the registry's
// entry (with the config's models applied), with Window overriding the
// context window. With Config.Model set it is looked up instead of name.
// An unknown model without Window has ContextWindow 0 (unknown).
func (c Config) ResolveModel(reg *Registry, name string) ModelInfo {
	if c.Model != "" {
		name = c.Model
	}
	if len(c.Models) > 0 {
		reg = reg.With(c.Models...)
	}
	m, ok := reg.Lookup(name)
	if !ok {
		m = ModelInfo{ID: name}
	} else if name != "" {
		m.ID = name
	}
	if c.Window > 0 {
		m.ContextWindow = c.Window
	}
	return m
}
