package main

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/compactkit/compact"
)

// The configuration file may be YAML (a name ending in .yaml or .yml). It
// has every key of the JSON file, spelt the same, plus the shape of the
// design note:
//
//	compaction:
//	  enabled: true            # false: no automatic compaction
//	  context_window: 200000   # else context_window, then the registry
//	  reserve_tokens: 16384
//	  keep_recent_tokens: 20000
//	context_window: 200000
//
// The window comes from compaction.context_window, else the top-level
// context_window (or window), else the model registry, else it is unknown
// and automatic compaction stays off.
//
// It is read with github.com/goccy/go-yaml: maintained, strict about
// unknown keys, and its errors carry the line, which the messages keep.

// yamlFile is the YAML file's shape.
type yamlFile struct {
	Config        compact.Config   `yaml:",inline"`
	Summarizer    summarizerConfig `yaml:",inline"`
	Proxy         proxyConfig      `yaml:",inline"`
	ContextWindow int              `yaml:"context_window"`
	Compaction    *yamlCompaction  `yaml:"compaction"`
}

// yamlCompaction is the design note's compaction block.
type yamlCompaction struct {
	Enabled          *bool `yaml:"enabled"`
	ContextWindow    int   `yaml:"context_window"`
	ReserveTokens    int   `yaml:"reserve_tokens"`
	KeepRecentTokens int   `yaml:"keep_recent_tokens"`
}

// isYAML reports whether path names a YAML configuration file.
func isYAML(path string) bool {
	p := strings.ToLower(path)
	return strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")
}

// decodeYAML reads a YAML configuration file's bytes.
func decodeYAML(path string, data []byte) (fileConfig, error) {
	var y yamlFile
	var cfg fileConfig
	if len(bytes.TrimSpace(data)) > 0 {
		if err := yaml.UnmarshalWithOptions(data, &y, yaml.Strict(), yaml.UseJSONUnmarshaler()); err != nil {
			return cfg, yamlError(path, err)
		}
	}
	cfg.Config, cfg.summarizerConfig, cfg.proxyConfig = y.Config, y.Summarizer, y.Proxy
	if y.ContextWindow != 0 {
		cfg.Window = y.ContextWindow
	}
	if c := y.Compaction; c != nil {
		if c.ContextWindow != 0 {
			cfg.Window = c.ContextWindow
		}
		if c.ReserveTokens != 0 {
			cfg.ReserveTokens = c.ReserveTokens
		}
		if c.KeepRecentTokens != 0 {
			cfg.KeepRecentTokens = c.KeepRecentTokens
		}
		if c.Enabled != nil {
			cfg.DisableAuto = !*c.Enabled
		}
	}
	if y.ContextWindow < 0 || (y.Compaction != nil && (y.Compaction.ContextWindow < 0 || y.Compaction.ReserveTokens < 0 || y.Compaction.KeepRecentTokens < 0)) {
		return cfg, fmt.Errorf("config %s: token counts must not be negative", path)
	}
	return cfg, nil
}

// yamlError turns the library's error (several lines, with the source)
// into one line naming the file and the line.
func yamlError(path string, err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		msg := ye.GetMessage()
		var unknown *yaml.UnknownFieldError
		if errors.As(err, &unknown) {
			msg = strings.Replace(msg, "unknown field", "unknown key", 1)
		}
		var te *yaml.TypeError
		if errors.As(err, &te) && te.Token != nil && te.DstType != nil {
			msg = fmt.Sprintf("%q is not %s", te.Token.Value, kindName(te.DstType))
		}
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			return fmt.Errorf("config %s:%d: %s", path, tk.Position.Line, oneLine(msg))
		}
		return fmt.Errorf("config %s: %s", path, oneLine(msg))
	}
	return fmt.Errorf("config %s: %s", path, oneLine(err.Error()))
}

// kindName says in words what a value of type t looks like.
func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "text"
	case reflect.Slice:
		return "a list"
	case reflect.Struct, reflect.Map:
		return "a mapping"
	}
	return t.String()
}
