package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/compactkit/compact"
)

// Where a setting came from, as reported by inspect.
const (
	fromRegistry = "registry"
	fromFlag     = "flag"
	fromConfig   = "config"
	fromSession  = "session"
	fromFile     = "file"
	fromUnknown  = "unknown"
)

// settings is the configuration in effect for one command: the file, the
// environment and the command's flags, in rising order of precedence.
type settings struct {
	cfg compact.Config
	// sum holds the configuration file's summarizer keys (see
	// summarizerConfig); the flags of "compact run" are applied later, in
	// resolveSummarizer.
	sum summarizerConfig
	// proxy holds the configuration file's keys for "compact proxy".
	proxy proxyConfig
	// file is the configuration file that was read, "" if none.
	file string
	// windowFlag and modelFlag are set when --window or --model was given.
	windowFlag, modelFlag bool
	// flagSet reports whether the command's flag of that name was given.
	flagSet func(string) bool
}

// limitFlags are the flags that override configuration values. Commands
// register the subset they accept.
type limitFlags struct {
	window     int
	model      string
	reserve    int
	keepRecent int
	policy     string
}

func (f *limitFlags) addWindow(cmd *cobra.Command) {
	cmd.Flags().IntVar(&f.window, "window", 0, "context window in tokens (at least 1,024), overriding the registry and the config's window")
	cmd.Flags().StringVar(&f.model, "model", "", "model name for the registry lookup, overriding the session's model")
}

func (f *limitFlags) addReserve(cmd *cobra.Command) {
	cmd.Flags().IntVar(&f.reserve, "reserve", compact.DefaultReserveTokens, "tokens kept free for the next response (reserve policy); the summary may use 0.8 x this")
}

func (f *limitFlags) addKeepRecent(cmd *cobra.Command) {
	cmd.Flags().IntVar(&f.keepRecent, "keep-recent", compact.DefaultKeepRecentTokens, "newest tokens of the history kept verbatim")
}

func (f *limitFlags) addPolicy(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.policy, "policy", "reserve", "trigger policy: reserve (window - reserve), ratio (0.9 x window) or input (input limit)")
}

// defaultConfigPath returns the configuration file looked for when neither
// --config nor COMPACT_CONFIG names one.
// In that folder config.json comes first, then config.yaml, then
// config.yml.
func defaultConfigPath(getenv func(string) string) string {
	dir := ""
	if d := getenv("XDG_CONFIG_HOME"); d != "" {
		dir = filepath.Join(d, "compact")
	} else if home := getenv("HOME"); home != "" {
		dir = filepath.Join(home, ".config", "compact")
	} else {
		return ""
	}
	for _, name := range []string{"config.yaml", "config.yml"} {
		if _, err := os.Stat(filepath.Join(dir, "config.json")); err == nil {
			break
		}
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return filepath.Join(dir, name)
		}
	}
	return filepath.Join(dir, "config.json")
}

// loadSettings reads the configuration file, applies the environment and
// then the flags of cmd that were set.
func (a *app) loadSettings(cmd *cobra.Command, lf *limitFlags) (*settings, error) {
	st := &settings{}
	path, explicit := a.configPath, true
	if path == "" {
		path = a.getenv("COMPACT_CONFIG")
	}
	if path == "" {
		path, explicit = defaultConfigPath(a.getenv), false
	}
	if path != "" {
		cfg, err := readConfig(path)
		switch {
		case err == nil:
			st.cfg, st.sum, st.proxy, st.file = cfg.Config, cfg.summarizerConfig, cfg.proxyConfig, path
			a.logger.Debug("read configuration", "file", path)
		case !explicit && errors.Is(err, fs.ErrNotExist):
			// No default configuration file: the defaults apply.
		default:
			return nil, err
		}
	}
	st.flagSet = func(string) bool { return false }
	// The environment wins both ways: COMPACT_DISABLE_AUTO=0 switches
	// automatic compaction back on over the file's disableAuto.
	st.cfg.ApplyEnv(a.getenv)

	if lf == nil {
		return st, nil
	}
	flags := cmd.Flags()
	set := func(name string) bool { f := flags.Lookup(name); return f != nil && f.Changed }
	st.flagSet = set
	if set("window") {
		if lf.window <= 0 {
			return nil, usagef("--window must be a positive number of tokens, got %d", lf.window)
		}
		st.cfg.Window, st.windowFlag = lf.window, true
	}
	if set("model") {
		st.cfg.Model, st.modelFlag = lf.model, true
	}
	if set("reserve") {
		if lf.reserve <= 0 {
			return nil, usagef("--reserve must be a positive number of tokens, got %d", lf.reserve)
		}
		st.cfg.ReserveTokens = lf.reserve
	}
	if set("keep-recent") {
		if lf.keepRecent <= 0 {
			return nil, usagef("--keep-recent must be a positive number of tokens, got %d", lf.keepRecent)
		}
		st.cfg.KeepRecentTokens = lf.keepRecent
	}
	if set("policy") {
		st.cfg.Policy = lf.policy
		if _, err := st.cfg.TriggerPolicy(); err != nil {
			return nil, usagef("--policy %q: want reserve, ratio or input", lf.policy)
		}
	}
	if _, err := st.cfg.TriggerPolicy(); err != nil {
		return nil, fmt.Errorf("%s: %w", st.file, err)
	}
	if err := st.check(); err != nil {
		return nil, err
	}
	return st, nil
}

// minWindow is the smallest context window accepted from --window or the
// configuration: below it no conversation, summary and reply fit.
const minWindow = 1024

// source names where a setting came from, for an error message: the
// flag when it was given, else the configuration key and file.
func (st *settings) source(flag, key string) string {
	if st.flagSet != nil && st.flagSet(flag) {
		return "--" + flag
	}
	return fmt.Sprintf("config %s: %s", st.file, key)
}

// fitWindow refuses a reserve or keep budget, given by a flag or the
// configuration, that is not smaller than the model's context window,
// once that window is known (from the registry or the config's models;
// a window given by --window or the config was checked by check).
func (st *settings) fitWindow(info compact.ModelInfo) error {
	w := info.ContextWindow
	if w <= 0 {
		return nil
	}
	for _, b := range []struct {
		flag, key string
		tokens    int
	}{{"reserve", "reserveTokens", st.cfg.ReserveTokens}, {"keep-recent", "keepRecentTokens", st.cfg.KeepRecentTokens}} {
		if b.tokens > 0 && b.tokens >= w {
			return usagef("%s (%s tokens) must be smaller than the %s-token context window of model %q",
				st.source(b.flag, b.key), num(b.tokens), num(w), info.ID)
		}
	}
	return st.targetUnderTrigger(info)
}

// targetUnderTrigger refuses a reserve policy whose trigger, once the
// model's window is known, lies below its target: every compaction would
// leave the context above the trigger, and the next call compact again.
// Only settings given by a flag or the file are refused; the defaults on
// a small window are left to the engine, which adapts its kept part.
func (st *settings) targetUnderTrigger(info compact.ModelInfo) error {
	c := st.cfg
	if c.ReserveTokens <= 0 && c.TargetRatio <= 0 {
		return nil
	}
	policy, err := c.TriggerPolicy()
	if err != nil {
		return err
	}
	p, ok := policy.(compact.Reserve)
	if !ok {
		return nil
	}
	trigger, _ := p.Threshold(info)
	target := p.Target(info)
	if target <= trigger {
		return nil
	}
	reserve := p.Tokens
	if reserve <= 0 {
		reserve = compact.DefaultReserveTokens
	}
	what := st.source("reserve", "reserveTokens")
	if c.ReserveTokens <= 0 {
		what = "the default reserve"
	}
	room := fmt.Sprintf("%s-token window", num(info.ContextWindow))
	if u := info.UsableInput(); u < info.ContextWindow {
		room = fmt.Sprintf("%s-token input limit", num(u))
	}
	return usagef("%s (%s tokens) leaves a trigger of %s tokens, below the compaction target of %s (targetRatio of the %s of model %q): "+
		"the reserve may be at most %s tokens here; lower it or targetRatio",
		what, num(reserve), num(trigger), num(target), room, info.ID, num(info.UsableInput()-target))
}

// check refuses settings that make no sense together: a window too small
// to hold anything, a reserve or keep budget that fills the whole window,
// ratios outside (0, 1], a targetRatio above the ratio policy's
// triggerRatio. The message names the flag when the value came from one,
// else the configuration key and file.
func (st *settings) check() error {
	name := st.source
	c := st.cfg
	if c.Window > 0 && c.Window < minWindow {
		return usagef("%s must be at least %s tokens, got %s", name("window", "window"), num(minWindow), num(c.Window))
	}
	for _, r := range []struct {
		key   string
		value float64
	}{{"triggerRatio", c.TriggerRatio}, {"targetRatio", c.TargetRatio}} {
		if r.value < 0 || r.value > 1 {
			return usagef("config %s: %s must be in (0, 1], got %g", st.file, r.key, r.value)
		}
	}
	if c.Window > 0 {
		window := name("window", "window")
		if c.ReserveTokens > 0 && c.ReserveTokens >= c.Window {
			return usagef("%s (%s tokens) must be smaller than %s (%s tokens)", name("reserve", "reserveTokens"), num(c.ReserveTokens), window, num(c.Window))
		}
		if c.KeepRecentTokens > 0 && c.KeepRecentTokens >= c.Window {
			return usagef("%s (%s tokens) must be smaller than %s (%s tokens)", name("keep-recent", "keepRecentTokens"), num(c.KeepRecentTokens), window, num(c.Window))
		}
	}
	policy, err := c.TriggerPolicy()
	if err != nil {
		return err
	}
	target := c.TargetRatio
	if target == 0 {
		target = compact.DefaultTargetRatio
	}
	// The other policies' triggers depend on the model's window, known
	// only once the session is read; their target is a share of it.
	if p, ok := policy.(compact.Ratio); ok {
		trigger := p.Ratio
		if trigger == 0 {
			trigger = compact.DefaultTriggerRatio
		}
		if target > trigger {
			return usagef("config %s: targetRatio %g is above triggerRatio %g: the target must not exceed the trigger, so want targetRatio in (0, %g]", st.file, target, trigger, trigger)
		}
	}
	return nil
}

// fileConfig is the configuration file: the library's settings and the
// command's own summarizer keys, side by side in one JSON object.
type fileConfig struct {
	compact.Config
	summarizerConfig
	proxyConfig
}

// readConfig decodes a configuration file. Unknown keys are an error that
// names the key, so that a misspelt setting is not silently ignored.
func readConfig(path string) (fileConfig, error) {
	var cfg fileConfig
	data, err := os.ReadFile(path)
	if err != nil {
		return cfg, fmt.Errorf("config: %w", err)
	}
	if isYAML(path) {
		if cfg, err = decodeYAML(path, data); err != nil {
			return cfg, err
		}
		return cfg, checkConfig(path, cfg)
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err == nil {
		if key, known := unknownKey(doc, reflect.TypeOf(cfg), ""); key != "" {
			return cfg, fmt.Errorf("config %s: unknown key %q (known keys here: %s)", path, key, known)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		msg := err.Error()
		if rest, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
			return cfg, fmt.Errorf("config %s: unknown key %s", path, rest)
		}
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			line := 1 + bytes.Count(data[:min(int(syn.Offset), len(data))], []byte("\n"))
			return cfg, fmt.Errorf("config %s:%d: invalid JSON: %v", path, line, err)
		}
		return cfg, fmt.Errorf("config %s: %s", path, strings.TrimPrefix(msg, "json: "))
	}
	if dec.More() {
		return cfg, fmt.Errorf("config %s: unexpected data after the JSON object", path)
	}
	// A ratio of 0 decodes like an absent key (the default); written out,
	// it is out of range all the same.
	if m, ok := doc.(map[string]any); ok {
		for k, v := range m {
			for _, key := range []string{"triggerRatio", "targetRatio"} {
				if f, isNum := v.(float64); isNum && strings.EqualFold(k, key) && f == 0 {
					return cfg, usagef("config %s: %s must be in (0, 1], got 0", path, key)
				}
			}
		}
	}
	return cfg, checkConfig(path, cfg)
}

// checkConfig checks the values a decoded configuration file holds.
func checkConfig(path string, cfg fileConfig) error {
	if cfg.ReserveTokens < 0 || cfg.KeepRecentTokens < 0 || cfg.Window < 0 || cfg.OutputCap < 0 {
		return fmt.Errorf("config %s: token counts must not be negative", path)
	}
	if err := cfg.summarizerConfig.check(); err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	return nil
}

// modelLimits resolves the model in effect and its limits. sessionModel is
// the model named by the session, and recorded the context window its
// file recorded for it (another agent's file; 0 when none). It returns
// the model info, where the model name and where the window came from.
//
// The window is, in falling order of precedence: --window, the config's
// window, a window configured for the model under models, the window the
// file recorded (unless --model or the config's model names another
// model), the registry's.
func (st *settings) modelLimits(reg *compact.Registry, sessionModel string, recorded int) (info compact.ModelInfo, modelSource, windowSource string) {
	info = st.cfg.ResolveModel(reg, sessionModel)
	name := info.ID
	switch {
	case st.modelFlag:
		modelSource = fromFlag
	case st.cfg.Model != "":
		modelSource = fromConfig
	case name != "":
		modelSource = fromSession
	default:
		modelSource = fromUnknown
	}
	switch {
	case st.windowFlag:
		windowSource = fromFlag
	case st.cfg.Window > 0:
		windowSource = fromConfig
	case configuredModel(st.cfg.Models, name):
		windowSource = fromConfig
	case recorded > 0 && st.cfg.Model == "":
		info.ContextWindow = recorded
		windowSource = fromFile
	case info.ContextWindow > 0:
		windowSource = fromRegistry
	default:
		windowSource = fromUnknown
	}
	return info, modelSource, windowSource
}

// configuredModel reports whether the config's models give name its
// limits.
func configuredModel(models []compact.ModelInfo, name string) bool {
	if len(models) == 0 {
		return false
	}
	m, ok := compact.NewRegistry(models).Lookup(name)
	return ok && m.ContextWindow > 0
}

// unknownKey walks a decoded JSON document against the Go type it is
// meant for and returns the path of the first key the type does not have
// ("models[0].window"), with the keys that are allowed at that place. It
// returns "" when every key is known. Keys are checked in sorted order so
// the answer does not depend on map order.
func unknownKey(doc any, t reflect.Type, prefix string) (key, known string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch v := doc.(type) {
	case map[string]any:
		if t.Kind() != reflect.Struct {
			return "", ""
		}
		fields := map[string]reflect.Type{}
		var names []string
		jsonFields(t, fields, &names)
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ft, ok := fields[strings.ToLower(k)]
			if !ok {
				return prefix + k, strings.Join(names, ", ")
			}
			if key, known := unknownKey(v[k], ft, prefix+k+"."); key != "" {
				return key, known
			}
		}
	case []any:
		if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
			return "", ""
		}
		for i, e := range v {
			p := fmt.Sprintf("%s[%d].", strings.TrimSuffix(prefix, "."), i)
			if key, known := unknownKey(e, t.Elem(), p); key != "" {
				return key, known
			}
		}
	}
	return "", ""
}

// jsonFields collects the JSON keys of struct type t and their types
// into fields (keyed in lower case) and names, descending into embedded
// structs without a JSON name the way encoding/json does.
func jsonFields(t reflect.Type, fields map[string]reflect.Type, names *[]string) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			jsonFields(f.Type, fields, names)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields[strings.ToLower(name)] = f.Type
		*names = append(*names, name)
	}
}
