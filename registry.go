package compact

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
)

//go:embed models.json
var modelsJSON []byte

// ModelInfo is what the engine needs to know about a model's limits.
// A zero ContextWindow means the window is unknown.
type ModelInfo struct {
	ID       string `json:"id"`
	Provider string `json:"provider,omitempty"`
	// ContextWindow is the total tokens of input plus output.
	ContextWindow int `json:"contextWindow"`
	// MaxOutput is the most tokens one response may hold.
	MaxOutput int `json:"maxOutput,omitempty"`
	// InputLimit is a separate cap on input tokens, when the provider has
	// one below ContextWindow - MaxOutput.
	InputLimit int `json:"inputLimit,omitempty"`
	// Aliases are other names the model is known by.
	Aliases []string `json:"aliases,omitempty"`
	// Prices are the model's list prices with their source and date; nil
	// when they are not known (its cost is then unknown, not zero). See
	// Cost.
	Prices *Prices `json:"prices,omitempty"`
}

// UsableInput is the most input tokens a request to m may hold: the
// input limit when the model has one below its window, else the window
// (0 when unknown). The trigger policies measure against it.
func (m ModelInfo) UsableInput() int {
	if m.InputLimit > 0 && m.InputLimit < m.ContextWindow {
		return m.InputLimit
	}
	return m.ContextWindow
}

// Registry looks up model limits by model name. The zero value is an
// empty registry; LoadRegistry returns the one shipped with the package.
type Registry struct {
	models []ModelInfo
	byName map[string]int
}

// LoadRegistry parses the registry embedded in the package (models.json).
func LoadRegistry() (*Registry, error) {
	var doc struct {
		Models []ModelInfo `json:"models"`
	}
	if err := json.Unmarshal(modelsJSON, &doc); err != nil {
		return nil, fmt.Errorf("embedded models.json: %w", err)
	}
	for _, m := range doc.Models {
		if err := m.Prices.check(); err != nil {
			return nil, fmt.Errorf("embedded models.json: model %q: %w", m.ID, err)
		}
	}
	return NewRegistry(doc.Models), nil
}

// NewRegistry returns a registry of the given models. A later model with
// the same id or alias as an earlier one replaces it, which is how
// overrides from configuration are applied; a later model that gives no
// prices keeps those of the model it replaces (an override of the window
// alone keeps the model's known prices).
func NewRegistry(models []ModelInfo) *Registry {
	r := &Registry{}
	for _, m := range models {
		r.add(m)
	}
	return r
}

func (r *Registry) add(m ModelInfo) {
	if r.byName == nil {
		r.byName = make(map[string]int)
	}
	key := strings.ToLower(m.ID)
	if i, ok := r.byName[key]; ok {
		if m.Prices == nil {
			m.Prices = r.models[i].Prices
		}
		r.models[i] = m
	} else {
		r.models = append(r.models, m)
		i = len(r.models) - 1
		r.byName[key] = i
	}
	i := r.byName[key]
	for _, a := range m.Aliases {
		r.byName[strings.ToLower(a)] = i
	}
}

// With returns a copy of r with the given models added or replaced.
func (r *Registry) With(models ...ModelInfo) *Registry {
	out := NewRegistry(r.Models())
	for _, m := range models {
		out.add(m)
	}
	return out
}

// Models returns the registry's models in the order they were added.
func (r *Registry) Models() []ModelInfo {
	if r == nil {
		return nil
	}
	return append([]ModelInfo(nil), r.models...)
}

// Lookup finds a model by name. Names are matched without case, first
// exactly, then after normalising (dropping a provider prefix such as
// "anthropic/" or "us.anthropic.", a date or "-latest" suffix, and an
// Ollama-style ":tag"; for Claude models, reading "_" and "." as "-" and
// trying the version and the family in either order, so that
// claude_4_5_opus and claude-opus-4.5 find claude-opus-4-5), then by the
// longest registered id that is a prefix of the normalised name at a word
// boundary. ok is false when nothing
// matches: the window is then unknown.
func (r *Registry) Lookup(name string) (ModelInfo, bool) {
	if r == nil || len(r.models) == 0 || name == "" {
		return ModelInfo{}, false
	}
	lower := strings.ToLower(strings.TrimSpace(name))
	if i, ok := r.byName[lower]; ok {
		return r.models[i], true
	}
	for _, cand := range normalizeModelName(lower) {
		if i, ok := r.byName[cand]; ok {
			return r.models[i], true
		}
	}
	best, bestLen := -1, 0
	for _, cand := range normalizeModelName(lower) {
		for key, i := range r.byName {
			if len(key) <= bestLen || !strings.HasPrefix(cand, key) {
				continue
			}
			if rest := cand[len(key):]; rest != "" && !strings.ContainsRune("-:._@ ", rune(rest[0])) {
				continue
			}
			best, bestLen = i, len(key)
		}
	}
	if best < 0 {
		return ModelInfo{}, false
	}
	return r.models[best], true
}

// normalizeModelName returns the candidate spellings of a lower-case model
// name to try, most specific first.
func normalizeModelName(name string) []string {
	var out []string
	seen := map[string]bool{}
	push := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	for _, p := range []string{"us.", "eu.", "apac.", "global.", "anthropic.", "meta.", "mistral.", "meta-"} {
		name = strings.TrimPrefix(name, p)
	}
	push(name)
	if strings.HasPrefix(name, "claude") {
		// Gateways spell Claude models claude_4_5_opus or claude-opus-4.5.
		name = strings.NewReplacer("_", "-", ".", "-").Replace(name)
		push(name)
	}
	base := name
	if i := strings.IndexByte(base, ':'); i >= 0 {
		push(base) // ollama names such as llama3:70b are registered whole
		base = base[:i]
	}
	base = strings.TrimSuffix(base, "-latest")
	base = stripDateSuffix(base)
	push(base)
	push(claudeOtherOrder(name))
	push(claudeOtherOrder(base))
	return out
}

// claudeOtherOrder returns a Claude model name with its version and family
// swapped, "" if it has no such parts: Anthropic named the models up to
// 3.7 version first (claude-3-7-sonnet) and since 4 family first
// (claude-sonnet-4-5), and people write either order for either.
func claudeOtherOrder(name string) string {
	words := strings.Split(name, "-")
	if len(words) < 3 || words[0] != "claude" {
		return ""
	}
	isVersion := func(w string) bool {
		return w != "" && len(w) <= 2 && strings.Trim(w, "0123456789") == ""
	}
	// versionLen is the length of the version that ws begins with: one or
	// two short numbers (4, 4-5, 3-7).
	versionLen := func(ws []string) int {
		n := 0
		for n < len(ws) && n < 2 && isVersion(ws[n]) {
			n++
		}
		return n
	}
	rest := words[1:]
	if n := versionLen(rest); n > 0 && n < len(rest) && !isVersion(rest[n]) {
		// claude-<version>-<family>...: family first.
		swapped := append([]string{"claude", rest[n]}, rest[:n]...)
		return strings.Join(append(swapped, rest[n+1:]...), "-")
	}
	if n := versionLen(rest[1:]); n > 0 && !isVersion(rest[0]) {
		// claude-<family>-<version>...: version first.
		swapped := append([]string{"claude"}, rest[1:1+n]...)
		swapped = append(swapped, rest[0])
		return strings.Join(append(swapped, rest[1+n:]...), "-")
	}
	return ""
}

// stripDateSuffix removes a trailing -YYYYMMDD or -YYYY-MM-DD.
func stripDateSuffix(s string) string {
	isDigits := func(t string) bool {
		for _, c := range t {
			if c < '0' || c > '9' {
				return false
			}
		}
		return t != ""
	}
	if n := len(s); n > 9 && s[n-9] == '-' && isDigits(s[n-8:]) {
		return s[:n-9]
	}
	if n := len(s); n > 11 && s[n-11] == '-' && isDigits(s[n-10:n-6]) && s[n-6] == '-' && isDigits(s[n-5:n-3]) && s[n-3] == '-' && isDigits(s[n-2:]) {
		return s[:n-11]
	}
	return s
}
