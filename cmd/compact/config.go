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
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
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
	// keys says where the configuration file (keys.file, "" if none was
	// read) set each key, for error messages.
	keys fileKeys
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
	cmd.Flags().IntVar(&f.reserve, "reserve", compact.DefaultReserveTokens, "tokens kept free for the next response (default and reserve policies); the summary may use 0.8 x this")
}

func (f *limitFlags) addKeepRecent(cmd *cobra.Command) {
	cmd.Flags().IntVar(&f.keepRecent, "keep-recent", compact.DefaultKeepRecentTokens, "newest tokens of the history kept verbatim")
}

func (f *limitFlags) addPolicy(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.policy, "policy", "default", "trigger policy: default (input limit - reserve, at most a fifth of the window), reserve (pi's rule: input limit - reserve), ratio (0.9 x input limit) or input (input limit)")
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
// then the flags of cmd that were set. Every mistake in them is a usage
// error (exit code 2) naming the file, line and key, the flag or the
// environment variable.
func (a *app) loadSettings(cmd *cobra.Command, lf *limitFlags) (*settings, error) {
	st := &settings{}
	path, explicit, from := a.configPath, true, "--config"
	if path == "" {
		path, from = a.getenv("COMPACT_CONFIG"), "COMPACT_CONFIG"
	}
	if path == "" {
		path, explicit = defaultConfigPath(a.getenv), false
	}
	if path != "" {
		cfg, err := readConfig(path)
		var ce *configError
		switch {
		case err == nil:
			st.cfg, st.sum, st.proxy, st.keys = cfg.Config, cfg.summarizerConfig, cfg.proxyConfig, cfg.keys
			a.logger.Debug("read configuration", "file", path)
		case !explicit && errors.Is(err, fs.ErrNotExist):
			// No default configuration file: the defaults apply.
		case errors.As(err, &ce):
			return nil, err
		case explicit:
			return nil, &usageError{&configError{key: from, err: err}}
		default:
			return nil, &usageError{&configError{file: path, err: err}}
		}
	}
	st.flagSet = func(string) bool { return false }
	if err := compact.CheckEnv(a.getenv); err != nil {
		return nil, &usageError{&configError{err: err}}
	}
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
		if err := checkWindow(flagOrigin("window"), lf.window); err != nil {
			return nil, err
		}
		st.cfg.Window, st.windowFlag = lf.window, true
	}
	if set("model") {
		st.cfg.Model, st.modelFlag = lf.model, true
	}
	if set("reserve") {
		if err := checkTokens(flagOrigin("reserve"), lf.reserve); err != nil {
			return nil, err
		}
		st.cfg.ReserveTokens = lf.reserve
	}
	if set("keep-recent") {
		if err := checkTokens(flagOrigin("keep-recent"), lf.keepRecent); err != nil {
			return nil, err
		}
		st.cfg.KeepRecentTokens = lf.keepRecent
	}
	if set("policy") {
		st.cfg.Policy = lf.policy
	}
	if err := st.check(); err != nil {
		return nil, err
	}
	return st, nil
}

// checkPolicy refuses a trigger policy, from --policy or the
// configuration, that does not exist (compact.Config.TriggerPolicy).
func checkPolicy(o origin, c compact.Config) error {
	if _, err := c.TriggerPolicy(); err != nil {
		return problemAt(o, err)
	}
	return nil
}

// settingFlags maps a setting's JSON key onto the flag that also sets it.
var settingFlags = map[string]string{"window": "window", "reserveTokens": "reserve", "keepRecentTokens": "keep-recent", "policy": "policy"}

// problemAt is a usage error naming o, saying the library's problem with
// the value (a compact.FieldError's Problem, or a Check function's error)
// with its numbers grouped.
func problemAt(o origin, err error) error {
	msg := err.Error()
	var fe *compact.FieldError
	if errors.As(err, &fe) {
		msg = fe.Problem
	}
	return o.errorf("%s", groupDigits(msg))
}

// fieldError turns a *compact.FieldError from Validate or ValidateFor
// into a usage error naming the flag when the value came from one, else
// the configuration file, line and key. Other errors pass unchanged.
func (st *settings) fieldError(err error) error {
	var fe *compact.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	return problemAt(st.origin(settingFlags[fe.Field], fe.Field), fe)
}

// origin returns where a setting came from, for an error message: the
// flag when it was given, else the configuration file's key and line.
func (st *settings) origin(flag, key string) origin {
	if flag != "" && st.flagSet != nil && st.flagSet(flag) {
		return flagOrigin(flag)
	}
	return st.keys.origin(key)
}

// fitWindow refuses a reserve or keep budget, given by a flag or the
// configuration, that does not fit the model's window once that window is
// known (compact.Config.ValidateFor).
func (st *settings) fitWindow(info compact.ModelInfo) error {
	return st.fieldError(st.cfg.ValidateFor(info))
}

// check refuses settings that make no sense together
// (compact.Config.Validate): an unknown policy, a reserve or keep budget
// that fills the whole window, a targetRatio above the ratio policy's
// triggerRatio. (Each value alone was checked as the file was read and
// the flags applied.) The message names the flag when the value came from
// one, else the configuration file, line and key.
func (st *settings) check() error {
	return st.fieldError(st.cfg.Validate())
}

// fileConfig is the configuration file: the library's settings and the
// command's own summarizer keys, side by side in one JSON object.
type fileConfig struct {
	compact.Config
	summarizerConfig
	proxyConfig
	// keys says where the file set each key, for error messages.
	keys fileKeys
}

// fileKeys says where a configuration file set its keys.
type fileKeys struct {
	file  string
	lines keyLines
	// written maps a JSON key ("window") to the key of the file that
	// set it, when that is spelt otherwise ("compaction.context_window"
	// in a YAML file).
	written map[string]string
}

// origin returns where the file set key, a JSON key such as "window".
func (k fileKeys) origin(key string) origin {
	if w, ok := k.written[key]; ok {
		key = w
	}
	written, line := k.lines.find(key)
	if written == "" {
		written = key
	}
	return origin{file: k.file, key: written, line: line}
}

// place completes an error about the file's content with the file's name
// and, when the error names a key but no line, the key's line. Errors
// that are not a configError are returned unchanged.
func (k fileKeys) place(err error) error {
	var ce *configError
	if errors.As(err, &ce) && ce.file == "" {
		ce.file = k.file
		if ce.line == 0 && ce.key != "" {
			if written, line := k.lines.find(ce.key); written != "" {
				ce.key, ce.line = written, line
			}
		}
	}
	return err
}

// readConfig decodes a configuration file. Every mistake in it is a
// usage error naming the file, the line and the key (see configError);
// an unknown key suggests the known key spelt nearly the same, so that a
// misspelt setting is not silently ignored.
func readConfig(path string) (fileConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return fileConfig{}, err
	}
	var cfg fileConfig
	if isYAML(path) {
		cfg, err = decodeYAML(data)
	} else {
		cfg, err = decodeJSON(data)
	}
	if err == nil {
		err = checkConfig(cfg)
	}
	cfg.keys.file = path
	return cfg, cfg.keys.place(err)
}

// decodeJSON reads a JSON configuration file's bytes.
func decodeJSON(data []byte) (fileConfig, error) {
	var cfg fileConfig
	cfg.keys.lines = jsonKeyLines(data)
	lines := cfg.keys.lines
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			line := lineAt(data, syn.Offset)
			return cfg, &usageError{&configError{line: line, key: lines.at(line), err: fmt.Errorf("invalid JSON: %w", err)}}
		}
	}
	if err := checkKeys(lines, reflect.TypeOf(cfg), false); err != nil {
		return cfg, err
	}
	if err := lines.checkRepeats(); err != nil {
		return cfg, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		var te *json.UnmarshalTypeError
		var ce *configError
		switch {
		case errors.As(err, &te):
			line := lineAt(data, te.Offset)
			return cfg, &usageError{&configError{line: line, key: lines.at(line), err: fmt.Errorf("want %s, got %s", jsonrec.KindName(te.Type), te.Value)}}
		case errors.As(err, &ce):
			return cfg, err
		}
		return cfg, &usageError{&configError{err: errors.New(strings.TrimPrefix(err.Error(), "json: "))}}
	}
	if dec.More() {
		return cfg, &usageError{&configError{line: lineAt(data, dec.InputOffset()), err: errors.New("unexpected data after the JSON object")}}
	}
	// A ratio of 0 decodes like an absent key (the default); written out,
	// it is out of range all the same.
	if m, ok := doc.(map[string]any); ok {
		for k, v := range m {
			for _, key := range []string{"triggerRatio", "targetRatio"} {
				if f, isNum := v.(float64); isNum && strings.EqualFold(k, key) && f == 0 {
					return cfg, keyErrorf(k, "must be in (0, 1], got 0")
				}
			}
		}
	}
	return cfg, nil
}

// checkConfig checks the values a decoded configuration file holds, the
// way the flags that override them are checked; a zero stands for the
// default.
func checkConfig(cfg fileConfig) error {
	if cfg.Window != 0 {
		if err := checkWindow(cfg.keys.origin("window"), cfg.Window); err != nil {
			return err
		}
	}
	for _, t := range []struct {
		key    string
		tokens int
	}{{"reserveTokens", cfg.ReserveTokens}, {"keepRecentTokens", cfg.KeepRecentTokens}, {"outputCap", cfg.OutputCap}} {
		if t.tokens != 0 {
			if err := checkTokens(cfg.keys.origin(t.key), t.tokens); err != nil {
				return err
			}
		}
	}
	for _, r := range []struct {
		key   string
		value float64
	}{{"triggerRatio", cfg.TriggerRatio}, {"targetRatio", cfg.TargetRatio}} {
		if r.value != 0 {
			if err := compact.CheckRatio(r.value); err != nil {
				return problemAt(cfg.keys.origin(r.key), err)
			}
		}
	}
	if cfg.Policy != "" {
		if err := checkPolicy(cfg.keys.origin("policy"), cfg.Config); err != nil {
			return err
		}
	}
	return cfg.summarizerConfig.check()
}

// checkWindow refuses a context window, from --window or the
// configuration, too small to hold a conversation (compact.CheckWindow).
func checkWindow(o origin, window int) error {
	if err := compact.CheckWindow(window); err != nil {
		return problemAt(o, err)
	}
	return nil
}

// checkTokens refuses a token budget, from a flag or the configuration,
// that is not a positive number (compact.CheckTokens).
func checkTokens(o origin, tokens int) error {
	if err := compact.CheckTokens(tokens); err != nil {
		return problemAt(o, err)
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

// configError is a mistake in a setting: in the configuration file, a
// flag or an environment variable. It prints as one line,
// "FILE:LINE: KEY: PROBLEM", with what is unknown left out; returned
// wrapped in a usageError, it makes the command exit with code 2.
type configError struct {
	// file is the configuration file, "" for a flag or a variable.
	file string
	// line is the line of key in file, 0 when unknown.
	line int
	// key is the key as written ("compaction.context_window",
	// "models[0].id"), the flag ("--window") or the variable
	// ("COMPACT_DISABLE_AUTO"); "" when no key is to blame.
	key string
	// err says what is wrong.
	err error
}

// Error returns the one-line message.
func (e *configError) Error() string {
	return e.redacted(func(s string) string { return s })
}

// redacted returns the one-line message with redact applied to the file,
// the key and the problem one by one: redacting the joined line would
// take the word after a key named like a credential label ("apiKey:
// want text") for its value.
func (e *configError) redacted(redact func(string) string) string {
	var b strings.Builder
	if e.file != "" {
		b.WriteString(redact(e.file))
		if e.line > 0 {
			fmt.Fprintf(&b, ":%d", e.line)
		}
		b.WriteString(": ")
	}
	if e.key != "" {
		b.WriteString(redact(e.key))
		b.WriteString(": ")
	}
	b.WriteString(redact(e.err.Error()))
	return b.String()
}

// Unwrap returns what is wrong.
func (e *configError) Unwrap() error { return e.err }

// keyErrorf returns the usage error for the value of configuration key
// key; readConfig adds the file and the line.
func keyErrorf(key, format string, args ...any) error {
	return &usageError{&configError{key: key, err: fmt.Errorf(format, args...)}}
}

// origin is where a setting came from, for an error message: a flag, or
// a key of the configuration file and its line.
type origin struct {
	file, key string
	line      int
}

// errorf returns the usage error for the setting at o.
func (o origin) errorf(format string, args ...any) error {
	return &usageError{&configError{file: o.file, line: o.line, key: o.key, err: fmt.Errorf(format, args...)}}
}

// String names the setting in a message about another one: "--window",
// or "window (line 3)".
func (o origin) String() string {
	if o.line > 0 {
		return fmt.Sprintf("%s (line %d)", o.key, o.line)
	}
	return o.key
}

// flagOrigin is the origin of the value of flag name.
func flagOrigin(name string) origin { return origin{key: "--" + name} }

// keyLine is where a key of the configuration file was written.
type keyLine struct {
	// path is the key with the keys it is nested in, as written:
	// "window", "compaction.context_window", "models[1].id".
	path string
	line int
}

// keyLines lists the keys of a configuration file in document order.
type keyLines []keyLine

// checkRepeats fails on a key written twice in one object, in any case
// (encoding/json would keep the last silently, and matches keys in any
// case): a usage error naming the second and the line of the first, as
// the YAML decoder reports a repeated key.
func (k keyLines) checkRepeats() error {
	first := make(map[string]int, len(k))
	for _, kl := range k {
		p := strings.ToLower(kl.path)
		if line, ok := first[p]; ok {
			return &usageError{&configError{line: kl.line, key: kl.path, err: fmt.Errorf("key already written on line %d", line)}}
		}
		first[p] = kl.line
	}
	return nil
}

// find returns the first of paths that the file holds (spelt in any
// case, as encoding/json matches them) and its line; "" and 0 when the
// file holds none of them.
func (k keyLines) find(paths ...string) (string, int) {
	for _, p := range paths {
		for _, kl := range k {
			if strings.EqualFold(kl.path, p) {
				return kl.path, kl.line
			}
		}
	}
	return "", 0
}

// at returns the key the text at line belongs to: the last key written
// on that line or before it; "" when there is none.
func (k keyLines) at(line int) string {
	key, best := "", 0
	for _, kl := range k {
		if kl.line <= line && kl.line >= best {
			key, best = kl.path, kl.line
		}
	}
	return key
}

// lineAt returns the line of byte offset off of data, counting from 1.
func lineAt(data []byte, off int64) int {
	return 1 + bytes.Count(data[:min(max(int(off), 0), len(data))], []byte("\n"))
}

// jsonKeyLines lists the keys of the JSON document data with their lines.
// It stops at the first syntax error and returns the keys before it.
func jsonKeyLines(data []byte) keyLines {
	dec := json.NewDecoder(bytes.NewReader(data))
	var out keyLines
	var walk func(path string) error
	walk = func(path string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				k, _ := kt.(string)
				p := joinKey(path, k)
				out = append(out, keyLine{p, lineAt(data, dec.InputOffset())})
				if err := walk(p); err != nil {
					return err
				}
			}
			_, err = dec.Token()
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if err := walk(fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
			_, err = dec.Token()
		}
		return err
	}
	_ = walk("")
	return out
}

// joinKey returns the path of key k inside path.
func joinKey(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// checkKeys returns the error for the first key of lines that type t
// (the file's shape) does not have, suggesting a known key spelt nearly
// the same. yamlTags reads the names YAML uses (the yaml tag, else the
// json tag) instead of encoding/json's.
func checkKeys(lines keyLines, t reflect.Type, yamlTags bool) error {
	for _, kl := range lines {
		parent, name := "", kl.path
		if i := strings.LastIndexByte(kl.path, '.'); i >= 0 {
			parent, name = kl.path[:i], kl.path[i+1:]
		}
		known, ok := keysAt(t, parent, yamlTags)
		if !ok {
			continue // inside a value of free shape
		}
		// encoding/json matches keys in any case, the YAML decoder
		// only as spelt.
		if slices.ContainsFunc(known, func(k string) bool { return k == name || !yamlTags && strings.EqualFold(k, name) }) {
			continue
		}
		problem := fmt.Errorf("unknown key (known keys here: %s)", strings.Join(known, ", "))
		if near := nearest(name, known); near != "" {
			problem = fmt.Errorf("unknown key; did you mean %q?", near)
		}
		return &usageError{&configError{line: kl.line, key: kl.path, err: problem}}
	}
	return nil
}

// keysAt returns the keys allowed inside the value at path (nested keys
// joined by dots, list indexes in brackets) of type t, and false when
// that value is not an object with fixed keys.
func keysAt(t reflect.Type, path string, yamlTags bool) ([]string, bool) {
	for path != "" {
		seg, rest, _ := strings.Cut(path, ".")
		path = rest
		name, _, _ := strings.Cut(seg, "[")
		fields, _ := structKeys(t, yamlTags)
		ft, ok := fields[strings.ToLower(name)]
		if !ok {
			return nil, false
		}
		t = ft
		for range strings.Count(seg, "[") {
			for t.Kind() == reflect.Pointer {
				t = t.Elem()
			}
			if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
				return nil, false
			}
			t = t.Elem()
		}
	}
	_, names := structKeys(t, yamlTags)
	return names, names != nil
}

// structKeys returns the keys of struct type t, with their types keyed in
// lower case, and their names in order; nil when t is not a struct. It
// descends into embedded and inlined structs the way the decoders do.
func structKeys(t reflect.Type, yamlTags bool) (map[string]reflect.Type, []string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, nil
	}
	fields := map[string]reflect.Type{}
	var names []string
	var add func(t reflect.Type)
	add = func(t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if y, ok := f.Tag.Lookup("yaml"); yamlTags && ok {
				tag = y
			}
			name, opts, _ := strings.Cut(tag, ",")
			if name == "-" {
				continue
			}
			inline := (f.Anonymous && name == "") || (yamlTags && slices.Contains(strings.Split(opts, ","), "inline"))
			if inline && f.Type.Kind() == reflect.Struct {
				add(f.Type)
				continue
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
				if yamlTags {
					name = strings.ToLower(name)
				}
			}
			fields[strings.ToLower(name)] = f.Type
			names = append(names, name)
		}
	}
	add(t)
	return fields, names
}

// nearest returns the key of known that key is most likely a misspelling
// of (at most two edits apart, comparing without case, and fewer edits
// than half its length), or "" when none is that close. Between keys as
// close, the one closer in case wins: "reserv_tokens" is nearer
// "reserve_tokens" than "reserveTokens".
func nearest(key string, known []string) string {
	best, bestD, bestCase := "", 3, 0
	for _, k := range known {
		d := editDistance(strings.ToLower(key), strings.ToLower(k))
		if d > 2 || 2*d >= len(key) {
			continue
		}
		if dc := editDistance(key, k); d < bestD || d == bestD && dc < bestCase {
			best, bestD, bestCase = k, d, dc
		}
	}
	return best
}

// editDistance returns the Levenshtein distance between a and b: the
// fewest single-byte insertions, deletions and substitutions that turn
// one into the other.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
