package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/anthropic"
	"github.com/compactkit/compact/internal/numfmt"
	"github.com/compactkit/compact/openai"
	"github.com/compactkit/compact/summarize"
	"github.com/compactkit/compact/summarize/extractive"
)

// The summarizers "compact run" can use.
const (
	summarizerExtractive = "extractive"
	summarizerOpenAI     = "openai"
	summarizerAnthropic  = "anthropic"
)

// defaultTotalTimeout bounds a model summary when neither --total-timeout
// nor the config's totalTimeout does: two requests that run into the
// default per-request limit of 10 minutes, where without it a stalled
// server would cost five of them and the waits between.
const defaultTotalTimeout = 20 * time.Minute

// The values of --fallback.
const (
	fallbackNone       = "none"
	fallbackExtractive = "extractive"
)

// duration is a time.Duration that the configuration file writes as a
// string such as "90s" or "2m".
type duration time.Duration

// UnmarshalJSON decodes a Go duration string.
func (d *duration) UnmarshalJSON(b []byte) error {
	return unmarshalDuration("timeout", b, (*time.Duration)(d))
}

// totalDuration is the totalTimeout key: a duration written like
// duration's, whose errors name its own key.
type totalDuration time.Duration

// UnmarshalJSON decodes a Go duration string.
func (d *totalDuration) UnmarshalJSON(b []byte) error {
	return unmarshalDuration("totalTimeout", b, (*time.Duration)(d))
}

// unmarshalDuration decodes the JSON string b into *d, naming key in
// its errors.
func unmarshalDuration(key string, b []byte, d *time.Duration) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return keyErrorf(key, "want a duration string such as \"90s\" or \"2m\", got %s", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return keyErrorf(key, "%q is not a duration such as \"90s\" or \"2m\"", s)
	}
	*d = v
	return nil
}

// summarizerConfig holds the configuration file's keys for the summarizer
// of "compact run". Every key is optional; flags override them.
//
// summaryModel, baseURL and apiKey belong to one provider, so they need
// "summarizer" and apply only while that summarizer is in use: a
// --summarizer flag naming the other provider does not receive the
// file's key. summaryWindow and summaryMaxOutput describe summaryModel
// and are ignored when --summary-model names another model.
type summarizerConfig struct {
	// Summarizer is "extractive" (the default), "openai" or "anthropic".
	Summarizer string `json:"summarizer,omitempty"`
	// SummaryModel is the model that writes summaries.
	SummaryModel string `json:"summaryModel,omitempty"`
	// BaseURL is the provider's API root.
	BaseURL string `json:"baseURL,omitempty"`
	// APIKey is the provider's key; the environment variable is preferred
	// and overrides it.
	APIKey string `json:"apiKey,omitempty"`
	// SummaryWindow and SummaryMaxOutput give the summary model's limits
	// when the registry does not have them, or override it.
	SummaryWindow    int `json:"summaryWindow,omitempty"`
	SummaryMaxOutput int `json:"summaryMaxOutput,omitempty"`
	// Timeout bounds one request to the model.
	Timeout duration `json:"timeout,omitempty"`
	// TotalTimeout bounds the whole summary: every request, retry and
	// wait between them.
	TotalTimeout totalDuration `json:"totalTimeout,omitempty"`
	// Fallback is "none" (the default) or "extractive".
	Fallback string `json:"fallback,omitempty"`
}

// check validates the values of the file's summarizer keys.
func (c summarizerConfig) check() error {
	if c.Summarizer != "" && !knownSummarizer(c.Summarizer) {
		return keyErrorf("summarizer", "%q: want extractive, openai or anthropic", c.Summarizer)
	}
	if c.Fallback != "" && c.Fallback != fallbackNone && c.Fallback != fallbackExtractive {
		return keyErrorf("fallback", "%q: want extractive or none", c.Fallback)
	}
	if c.SummaryWindow < 0 {
		return keyErrorf("summaryWindow", "must not be negative, got %d", c.SummaryWindow)
	}
	if c.SummaryMaxOutput < 0 {
		return keyErrorf("summaryMaxOutput", "must not be negative, got %d", c.SummaryMaxOutput)
	}
	if c.Timeout < 0 {
		return keyErrorf("timeout", "%s must not be negative", time.Duration(c.Timeout))
	}
	if c.TotalTimeout < 0 {
		return keyErrorf("totalTimeout", "%s must not be negative", time.Duration(c.TotalTimeout))
	}
	if c.Summarizer == "" || c.Summarizer == summarizerExtractive {
		for _, kv := range [][2]string{{"summaryModel", c.SummaryModel}, {"baseURL", c.BaseURL}, {"apiKey", c.APIKey}} {
			if kv[1] != "" {
				return keyErrorf(kv[0], "needs \"summarizer\": \"openai\" or \"anthropic\" beside it")
			}
		}
	}
	return nil
}

func knownSummarizer(name string) bool {
	switch name {
	case summarizerExtractive, summarizerOpenAI, summarizerAnthropic:
		return true
	}
	return false
}

// summarizerFlags are the flags of "compact run" that choose the
// summarizer and describe its model.
type summarizerFlags struct {
	name      string
	model     string
	baseURL   string
	window    int
	maxOutput int
	timeout   time.Duration
	total     time.Duration
	fallback  string
	noLedger  bool
}

// modelOnlyFlags are the flags that only mean something for a model
// summarizer.
var modelOnlyFlags = []string{"summary-model", "base-url", "summary-window", "summary-max-output", "timeout", "total-timeout", "no-ledger"}

func (f *summarizerFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.name, "summarizer", summarizerExtractive, "what writes the summary: extractive (offline), openai (Chat Completions API or a compatible server) or anthropic (Messages API)")
	fl.StringVar(&f.model, "summary-model", "", "the model that writes the summary (required for openai and anthropic unless the config's summaryModel gives it)")
	fl.StringVar(&f.baseURL, "base-url", "", "API root of the summary model's server, e.g. http://localhost:11434/v1 (default $OPENAI_BASE_URL or $ANTHROPIC_BASE_URL, else the provider's)")
	fl.IntVar(&f.window, "summary-window", 0, "context window of the summary model in tokens, for models missing from the registry (local models) or to override it")
	fl.IntVar(&f.maxOutput, "summary-max-output", 0, "most output tokens the summary model may write in one answer (default: the registry's value, else no limit)")
	fl.DurationVar(&f.timeout, "timeout", 0, "time limit of one request to the summary model (default 10m)")
	fl.DurationVar(&f.total, "total-timeout", 0, "time limit of the whole summary: all requests, retries and waits (default 20m)")
	fl.BoolVar(&f.noLedger, "no-ledger", false, "the model's summary alone, without the record compact appends to it (the user's messages word for word, the errors with their status, the files shell commands touched)")
	fl.StringVar(&f.fallback, "fallback", fallbackNone, "when the model fails: none (fail, write nothing) or extractive (write the offline summary, marked as written without a model); a reply refused twice by the review always gets the offline summary")
}

// summarizerChoice is the summarizer setup in effect for one run.
type summarizerChoice struct {
	// name is summarizerExtractive, summarizerOpenAI or summarizerAnthropic.
	name string
	// model and info are the summary model and its limits (model
	// summarizers only).
	model string
	info  compact.ModelInfo
	// baseURL and apiKey reach the provider; "" means the provider's
	// default URL and no key.
	baseURL, apiKey string
	// timeout bounds one request (0: the client's default); total bounds
	// the whole summary.
	timeout, total time.Duration
	// fallback is true when a failed model summary is replaced by the
	// extractive one.
	fallback bool
	// noLedger leaves the record compact keeps out of model summaries.
	noLedger bool
}

// resolveSummarizer combines the configuration file, the environment
// and the flags of cmd (in rising order of precedence) into the
// summarizer setup. It checks the names, the summary model and its
// context window; the key is checked by summarizers, which a dry run
// does not call.
func (a *app) resolveSummarizer(cmd *cobra.Command, st *settings, sf *summarizerFlags, reg *compact.Registry) (*summarizerChoice, error) {
	flags := cmd.Flags()
	set := func(name string) bool { f := flags.Lookup(name); return f != nil && f.Changed }
	file := st.sum
	if file.APIKey != "" {
		a.apiKeys = append(a.apiKeys, file.APIKey)
	}

	ch := &summarizerChoice{name: summarizerExtractive, timeout: time.Duration(file.Timeout), total: time.Duration(file.TotalTimeout)}
	if ch.total == 0 {
		ch.total = defaultTotalTimeout
	}
	if file.Summarizer != "" {
		ch.name = file.Summarizer
	}
	if set("summarizer") {
		if !knownSummarizer(sf.name) {
			return nil, usagef("--summarizer %q: want extractive, openai or anthropic", sf.name)
		}
		ch.name = sf.name
	}

	fallback := file.Fallback
	if set("fallback") {
		if sf.fallback != fallbackNone && sf.fallback != fallbackExtractive {
			return nil, usagef("--fallback %q: want extractive or none", sf.fallback)
		}
		fallback = sf.fallback
	}
	ch.fallback = fallback == fallbackExtractive
	ch.noLedger = sf.noLedger

	if ch.name == summarizerExtractive {
		for _, name := range modelOnlyFlags {
			if set(name) {
				return nil, usagef("--%s needs --summarizer openai or anthropic", name)
			}
		}
		return ch, nil
	}

	// The file's provider keys belong to the file's summarizer only.
	fileApplies := file.Summarizer == ch.name
	if fileApplies {
		ch.model, ch.baseURL, ch.apiKey = file.SummaryModel, file.BaseURL, file.APIKey
	}
	var env struct{ baseURL, apiKey string }
	switch ch.name {
	case summarizerOpenAI:
		e := openai.ConfigFromEnv(a.getenv)
		env.baseURL, env.apiKey = e.BaseURL, e.APIKey
	case summarizerAnthropic:
		e := anthropic.ConfigFromEnv(a.getenv)
		env.baseURL, env.apiKey = e.BaseURL, e.APIKey
	}
	if env.baseURL != "" {
		ch.baseURL = env.baseURL
	}
	if env.apiKey != "" {
		ch.apiKey = env.apiKey
	}
	if set("base-url") {
		u, err := url.Parse(sf.baseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, usagef("--base-url %q: want an http or https URL such as http://localhost:11434/v1", sf.baseURL)
		}
		ch.baseURL = sf.baseURL
	}
	if set("summary-model") {
		ch.model = strings.TrimSpace(sf.model)
	}
	if ch.model == "" {
		return nil, usagef("--summarizer %s needs the summary model: give --summary-model (or the config's summaryModel)", ch.name)
	}

	// The summary model's limits: the registry with the config's models,
	// then the file's summaryWindow and summaryMaxOutput when they
	// describe this model, then the flags.
	if len(st.cfg.Models) > 0 {
		reg = reg.With(st.cfg.Models...)
	}
	info, _ := reg.Lookup(ch.model)
	info.ID = ch.model
	if file.SummaryModel == "" || (fileApplies && strings.EqualFold(file.SummaryModel, ch.model)) {
		if file.SummaryWindow > 0 {
			info.ContextWindow = file.SummaryWindow
		}
		if file.SummaryMaxOutput > 0 {
			info.MaxOutput = file.SummaryMaxOutput
		}
	}
	if set("summary-window") {
		if sf.window <= 0 {
			return nil, usagef("--summary-window must be a positive number of tokens, got %d", sf.window)
		}
		info.ContextWindow = sf.window
	}
	if set("summary-max-output") {
		if sf.maxOutput <= 0 {
			return nil, usagef("--summary-max-output must be a positive number of tokens, got %d", sf.maxOutput)
		}
		info.MaxOutput = sf.maxOutput
	}
	if info.ContextWindow <= 0 {
		return nil, usagef("the context window of the summary model %q is unknown: give it with --summary-window N (or the config's summaryWindow, or a models entry)", ch.model)
	}
	ch.info = info

	if set("timeout") {
		if sf.timeout <= 0 {
			return nil, usagef("--timeout must be a positive duration such as 90s or 5m, got %s", sf.timeout)
		}
		ch.timeout = sf.timeout
	}
	if set("total-timeout") {
		if sf.total <= 0 {
			return nil, usagef("--total-timeout must be a positive duration such as 20m or 1h, got %s", sf.total)
		}
		ch.total = sf.total
	}
	return ch, nil
}

// summarizers returns the summarizer of "compact run" and the fallback
// (nil when there is none). reserve is the engine's reserve in tokens. A
// summarizer injected by a test replaces the chosen one. Reaching a
// provider's own API without a key is refused here rather than with the
// provider's 401.
func (a *app) summarizers(ch *summarizerChoice, reserve int) (primary, fallback compact.Summarizer, err error) {
	// The offline summarizer is always at hand: --fallback decides
	// whether a failed model call uses it, and a reply the review refused
	// always does.
	fallback = extractive.New(extractive.Options{})
	switch {
	case a.summarizer != nil:
		return a.summarizer, fallback, nil
	case ch.name == summarizerExtractive:
		return extractive.New(extractive.Options{}), fallback, nil
	}
	if ch.baseURL == "" && ch.apiKey == "" {
		keyVar := "OPENAI_API_KEY"
		if ch.name == summarizerAnthropic {
			keyVar = "ANTHROPIC_API_KEY"
		}
		return nil, nil, fmt.Errorf("--summarizer %s: no API key: set %s (or the config's apiKey), or point --base-url at a server that needs none", ch.name, keyVar)
	}
	var comp summarize.Completer
	switch ch.name {
	case summarizerOpenAI:
		c, err := openai.New(openai.Config{BaseURL: ch.baseURL, APIKey: ch.apiKey, Model: ch.model, Timeout: ch.timeout})
		if err != nil {
			return nil, nil, err
		}
		comp = c
	case summarizerAnthropic:
		c, err := anthropic.New(anthropic.Config{BaseURL: ch.baseURL, APIKey: ch.apiKey, Model: ch.model, Timeout: ch.timeout})
		if err != nil {
			return nil, nil, err
		}
		comp = c
	default:
		return nil, nil, fmt.Errorf("unknown summarizer %q", ch.name)
	}
	opts := summarize.Options{
		Completer: comp,
		Model:     ch.model,
		Info:      ch.info,
		Reserve:   reserve,
		NoLedger:  ch.noLedger,
		Progress: func(done, total int) {
			if done < total {
				a.progressf("summarizing chunk %d of %d...", done+1, total)
			}
		},
	}
	if a.tuneSummarize != nil {
		a.tuneSummarize(&opts)
	}
	s, err := summarize.New(opts)
	if err != nil {
		return nil, nil, fmt.Errorf("summary model %q: %w", ch.model, err)
	}
	timeout := ch.timeout
	if timeout == 0 {
		timeout = openai.DefaultTimeout
		if ch.name == summarizerAnthropic {
			timeout = anthropic.DefaultTimeout
		}
	}
	return &guardedSummarizer{inner: summarize.WithDeadline(s, ch.total), timeout: timeout, secrets: a.secrets()}, fallback, nil
}

// usageReport is a summarizer's token usage in the JSON output.
type usageReport struct {
	Input      int `json:"input"`
	Output     int `json:"output"`
	CacheRead  int `json:"cacheRead"`
	CacheWrite int `json:"cacheWrite"`
	Total      int `json:"total"`
}

func newUsageReport(u *compact.Usage) *usageReport {
	if u == nil {
		return nil
	}
	return &usageReport{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite, Total: u.Total}
}

// String renders the usage for people: "12,345 input, 1,234 output
// tokens", with cached input when there was some.
func (u *usageReport) String() string {
	s := numfmt.Thousands(u.Input) + " input"
	if u.CacheRead > 0 {
		s += " (+" + numfmt.Thousands(u.CacheRead) + " read from cache)"
	}
	if u.CacheWrite > 0 {
		s += " (+" + numfmt.Thousands(u.CacheWrite) + " written to cache)"
	}
	return s + ", " + numfmt.Thousands(u.Output) + " output tokens"
}
