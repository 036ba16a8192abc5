package main

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
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
func decodeYAML(data []byte) (fileConfig, error) {
	var y yamlFile
	var cfg fileConfig
	lines := yamlKeyLines(data)
	cfg.keys.lines = lines
	if len(bytes.TrimSpace(data)) > 0 {
		if err := checkKeys(lines, reflect.TypeOf(y), true); err != nil {
			return cfg, err
		}
		if err := yaml.UnmarshalWithOptions(data, &y, yaml.Strict(), yaml.UseJSONUnmarshaler()); err != nil {
			return cfg, yamlError(lines, err)
		}
	}
	cfg.Config, cfg.summarizerConfig, cfg.proxyConfig = y.Config, y.Summarizer, y.Proxy
	written := map[string]string{}
	for _, v := range []struct {
		key, from string
		value     int
		dst       *int
	}{
		{"window", "context_window", y.ContextWindow, &cfg.Window},
		{"window", "compaction.context_window", compactionInt(y.Compaction, func(c *yamlCompaction) int { return c.ContextWindow }), &cfg.Window},
		{"reserveTokens", "compaction.reserve_tokens", compactionInt(y.Compaction, func(c *yamlCompaction) int { return c.ReserveTokens }), &cfg.ReserveTokens},
		{"keepRecentTokens", "compaction.keep_recent_tokens", compactionInt(y.Compaction, func(c *yamlCompaction) int { return c.KeepRecentTokens }), &cfg.KeepRecentTokens},
	} {
		if v.value != 0 {
			*v.dst, written[v.key] = v.value, v.from
		}
	}
	if c := y.Compaction; c != nil && c.Enabled != nil {
		cfg.DisableAuto = !*c.Enabled
	}
	cfg.keys.written = written
	return cfg, nil
}

// compactionInt returns field of the compaction block c, 0 without one.
func compactionInt(c *yamlCompaction, field func(*yamlCompaction) int) int {
	if c == nil {
		return 0
	}
	return field(c)
}

// yamlKeyLines lists the keys of the YAML document data with their lines.
// When data does not parse, it lists the keys the scanner finds before the
// mistake, without the keys they are nested in.
func yamlKeyLines(data []byte) keyLines {
	var out keyLines
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		for _, tk := range lexer.Tokenize(string(data)) {
			if tk.Next != nil && tk.Next.Type == token.MappingValueType && tk.Position != nil {
				out = append(out, keyLine{tk.Value, tk.Position.Line})
			}
		}
		return out
	}
	var walk func(n ast.Node, path string)
	walk = func(n ast.Node, path string) {
		switch n := n.(type) {
		case *ast.DocumentNode:
			walk(n.Body, path)
		case *ast.TagNode:
			walk(n.Value, path)
		case *ast.AnchorNode:
			walk(n.Value, path)
		case *ast.MappingNode:
			for _, v := range n.Values {
				walk(v, path)
			}
		case *ast.MappingValueNode:
			tk := n.Key.GetToken()
			if tk == nil || tk.Position == nil {
				return
			}
			p := joinKey(path, tk.Value)
			out = append(out, keyLine{p, tk.Position.Line})
			walk(n.Value, p)
		case *ast.SequenceNode:
			for i, v := range n.Values {
				walk(v, fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
	for _, doc := range f.Docs {
		walk(doc, "")
	}
	return out
}

// yamlError turns the library's error (several lines, with the source)
// into a configError naming the line and the key there.
func yamlError(lines keyLines, err error) error {
	var ce *configError
	if errors.As(err, &ce) {
		return err // from a value's own decoder, which names its key
	}
	var ye yaml.Error
	if !errors.As(err, &ye) {
		return &usageError{&configError{err: errors.New(oneLine(err.Error()))}}
	}
	msg := ye.GetMessage()
	var unknown *yaml.UnknownFieldError
	if errors.As(err, &unknown) {
		msg = strings.Replace(msg, "unknown field", "unknown key", 1)
	}
	var te *yaml.TypeError
	if errors.As(err, &te) && te.Token != nil && te.DstType != nil {
		msg = fmt.Sprintf("%q is not %s", te.Token.Value, jsonrec.KindName(te.DstType))
	}
	e := &configError{err: errors.New(oneLine(msg))}
	if tk := ye.GetToken(); tk != nil && tk.Position != nil {
		e.line = tk.Position.Line
		e.key = lines.at(e.line)
	}
	return &usageError{e}
}
