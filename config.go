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

// TriggerPolicy returns the configured policy with its settings. An
// unknown name is a *FieldError for "policy".
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
	return nil, &FieldError{Field: "policy", Problem: fmt.Sprintf("unknown policy %q; want default, reserve, ratio or input", c.Policy)}
}

// MinWindow is the smallest context window a Config accepts: below it no
// conversation, summary and reply fit.
const MinWindow = 1024

// FieldError is a setting that Validate refuses.
type FieldError struct {
	// Field is the setting's JSON key, such as "reserveTokens".
	Field string
	// Problem says what is wrong in one clause, without the field's name:
	// "must be a positive number of tokens, got -5".
	Problem string
}

// Error returns "field: problem".
func (e *FieldError) Error() string { return e.Field + ": " + e.Problem }

// CheckWindow refuses a context window below MinWindow. Its error is the
// problem alone, for the caller to prefix with where the value came from.
func CheckWindow(tokens int) error {
	if tokens < MinWindow {
		return fmt.Errorf("must be at least %d tokens, got %d", MinWindow, tokens)
	}
	return nil
}

// CheckTokens refuses a token budget (a reserve, a kept part, an output
// cap) that is not a positive number; the error is the problem alone.
func CheckTokens(tokens int) error {
	if tokens <= 0 {
		return fmt.Errorf("must be a positive number of tokens, got %d", tokens)
	}
	return nil
}

// CheckRatio refuses a share of the window outside (0, 1]; the error is
// the problem alone.
func CheckRatio(r float64) error {
	if r <= 0 || r > 1 {
		return fmt.Errorf("must be in (0, 1], got %g", r)
	}
	return nil
}

// Validate checks each setting alone (zero meaning the default) and the
// settings together, and returns the first problem as a *FieldError: a
// window under MinWindow, a budget that is not positive, a ratio outside
// (0, 1], an unknown policy, a reserve or kept part not smaller than the
// configured window, a targetRatio above the ratio policy's trigger.
// Limits that depend on the model's window are ValidateFor's.
func (c Config) Validate() error {
	if c.Window != 0 {
		if err := CheckWindow(c.Window); err != nil {
			return &FieldError{Field: "window", Problem: err.Error()}
		}
	}
	for _, t := range []struct {
		field  string
		tokens int
	}{{"reserveTokens", c.ReserveTokens}, {"keepRecentTokens", c.KeepRecentTokens}, {"outputCap", c.OutputCap}} {
		if t.tokens != 0 {
			if err := CheckTokens(t.tokens); err != nil {
				return &FieldError{Field: t.field, Problem: err.Error()}
			}
		}
	}
	for _, r := range []struct {
		field string
		value float64
	}{{"triggerRatio", c.TriggerRatio}, {"targetRatio", c.TargetRatio}} {
		if r.value != 0 {
			if err := CheckRatio(r.value); err != nil {
				return &FieldError{Field: r.field, Problem: err.Error()}
			}
		}
	}
	for i, m := range c.Models {
		if err := m.Prices.check(); err != nil {
			return &FieldError{Field: fmt.Sprintf("models[%d]", i), Problem: fmt.Sprintf("model %q: %v", m.ID, err)}
		}
	}
	policy, err := c.TriggerPolicy()
	if err != nil {
		return err
	}
	if c.Window > 0 {
		for _, t := range []struct {
			field  string
			tokens int
		}{{"reserveTokens", c.ReserveTokens}, {"keepRecentTokens", c.KeepRecentTokens}} {
			if t.tokens >= c.Window {
				return &FieldError{Field: t.field, Problem: fmt.Sprintf("%d tokens must be smaller than the window (%d tokens)", t.tokens, c.Window)}
			}
		}
	}
	if p, ok := policy.(Ratio); ok {
		target, trigger := c.TargetRatio, p.Ratio
		if target == 0 {
			target = DefaultTargetRatio
		}
		if trigger == 0 {
			trigger = DefaultTriggerRatio
		}
		if target > trigger {
			return &FieldError{Field: "targetRatio", Problem: fmt.Sprintf("%g is above triggerRatio %g: the target must not exceed the trigger, so want targetRatio in (0, %g]", target, trigger, trigger)}
		}
	}
	return nil
}

// ValidateFor checks the settings against model m's limits once they are
// known (m.ContextWindow 0 checks nothing), and returns the first problem
// as a *FieldError: a reserve or kept part not smaller than the model's
// window, or, with the reserve policy, a reserve or targetRatio that puts
// the trigger below the target (every compaction would leave the context
// above the trigger, and the next call compact again). Only values the
// Config sets are refused; the defaults on a small window are left to the
// engine, which adapts its kept part, and DefaultPolicy scales its own.
func (c Config) ValidateFor(m ModelInfo) error {
	w := m.ContextWindow
	if w <= 0 {
		return nil
	}
	for _, t := range []struct {
		field  string
		tokens int
	}{{"reserveTokens", c.ReserveTokens}, {"keepRecentTokens", c.KeepRecentTokens}} {
		if t.tokens > 0 && t.tokens >= w {
			return &FieldError{Field: t.field, Problem: fmt.Sprintf("%d tokens must be smaller than the %d-token context window of model %q", t.tokens, w, m.ID)}
		}
	}
	if c.ReserveTokens <= 0 && c.TargetRatio <= 0 {
		return nil
	}
	policy, err := c.TriggerPolicy()
	if err != nil {
		return err
	}
	p, ok := policy.(Reserve)
	if !ok {
		return nil
	}
	trigger, _ := p.Threshold(m)
	target := p.Target(m)
	if target <= trigger {
		return nil
	}
	reserve := p.Tokens
	if reserve <= 0 {
		reserve = DefaultReserveTokens
	}
	field, what := "reserveTokens", fmt.Sprintf("%d tokens leave", reserve)
	if c.ReserveTokens <= 0 {
		field, what = "targetRatio", fmt.Sprintf("the default reserve (%d tokens) leaves", reserve)
	}
	room := fmt.Sprintf("%d-token window", w)
	if u := m.UsableInput(); u < w {
		room = fmt.Sprintf("%d-token input limit", u)
	}
	return &FieldError{Field: field, Problem: fmt.Sprintf("%s a trigger of %d tokens, below the compaction target of %d (targetRatio of the %s of model %q): "+
		"the reserve may be at most %d tokens here; lower it or targetRatio",
		what, trigger, target, room, m.ID, m.UsableInput()-target)}
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
