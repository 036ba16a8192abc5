package proxy

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/proxy/store"
)

// The label values the metrics accept. Every label of every metric comes
// from one of these fixed sets (or is an HTTP status code); a value
// outside its set is counted under labelOther. Nothing the client sends
// (a model name, a session id, a header) can become a label value, so the
// number of series stays bounded and no secret reaches /metrics.
const (
	labelOther = "other"

	// Store lookups (storeLookup).
	lookupHit   = "hit"
	lookupMiss  = "miss"
	lookupError = "error"
	// lookupRejected: a record failed authentication (see
	// ErrUnauthenticated) and was treated as absent.
	lookupRejected = "rejected"

	// Stages that fail open (failOpen): the proxy forwards the request
	// unchanged when one of them fails.
	stageBody      = "body"      // reading or decoding the request body
	stageParse     = "parse"     // parsing the request for compaction
	stageStore     = "store"     // reading or writing the conversation record
	stageSummarize = "summarize" // writing the summary
	stageSplice    = "splice"    // building the compacted request
	stageEncode    = "encode"    // re-encoding the compacted body
	stageObserve   = "observe"   // reading usage from the response
	stageInternal  = "internal"  // an unexpected failure (a recovered panic)

	// Fallbacks (fallback).
	fallbackExtractive = "extractive" // a model summary failed; the extractive one was used
	fallbackRejected   = "rejected"   // a model's reply was refused twice by the review; the extractive one was used
	fallbackTruncate   = "truncate"   // the summary did not fit; the history was truncated

	// Summarizer kinds (compaction): the summarizer name is reduced to one
	// of these, "model" for any other model id.
	summarizerExtractive = "extractive"
	summarizerOpenAI     = "openai"
	summarizerAnthropic  = "anthropic"
	summarizerNative     = "native" // the provider's own compaction
	summarizerModel      = "model"
	summarizerNone       = "none"

	// What a model call was (usage): a client's request forwarded, or a
	// summary the proxy had a model write.
	whatRequests  = "requests"
	whatSummaries = "summaries"

	// Kinds of tokens (usage): the provider's usage fields.
	tokensInput      = "input"
	tokensOutput     = "output"
	tokensCacheRead  = "cache_read"
	tokensCacheWrite = "cache_write"

	// reasonAgent is the compaction reason label of a compaction the
	// agent itself asked for (its own /compact request).
	reasonAgent compact.Reason = "agent"
)

var (
	metricAPIs        = []string{string(Anthropic), string(Chat), string(Responses), labelOther}
	metricReasons     = []string{string(compact.ReasonThreshold), string(compact.ReasonOverflow), string(compact.ReasonIdle), string(compact.ReasonManual), string(reasonAgent), labelOther}
	metricAhead       = []string{aheadStarted, aheadStored, aheadFailed, aheadSkipped, aheadSwapped, aheadStale, aheadNotReady, aheadWaited, labelOther}
	metricSummarizers = []string{summarizerExtractive, summarizerOpenAI, summarizerAnthropic, summarizerNative, summarizerModel, summarizerNone}
	metricLookups     = []string{lookupHit, lookupMiss, lookupError, lookupRejected, labelOther}
	metricStages      = []string{stageBody, stageParse, stageStore, stageSummarize, stageSplice, stageEncode, stageObserve, stageInternal, labelOther}
	metricFallbacks   = []string{fallbackExtractive, fallbackRejected, fallbackTruncate, labelOther}
	metricWhats       = []string{whatRequests, whatSummaries}
	metricTokenKinds  = []string{tokensInput, tokensOutput, tokensCacheRead, tokensCacheWrite}
	metricMissCauses  = []string{string(store.MissCompaction), string(store.MissIdle), string(store.MissPrefix), string(store.MissProvider), string(store.MissUnknown), labelOther}
)

// oneOf returns v when it is in set, else labelOther.
func oneOf(v string, set []string) string {
	for _, s := range set {
		if v == s {
			return v
		}
	}
	return labelOther
}

// summarizerKind reduces a summarizer name (compact.Result.Summarizer: a
// kind, or a model id) to a summarizerX label.
func summarizerKind(name string) string {
	switch name {
	case "":
		return summarizerNone
	case summarizerExtractive, summarizerOpenAI, summarizerAnthropic, summarizerNative:
		return name
	}
	return summarizerModel
}

// statusLabel is an HTTP status code as a label; anything outside
// 100-599 is labelOther.
func statusLabel(status int) string {
	if status < 100 || status > 599 {
		return labelOther
	}
	return strconv.Itoa(status)
}

// metrics are the proxy's Prometheus metrics, all named compact_proxy_*.
// Its methods are what the proxy calls; each is safe on a nil *metrics
// (it does nothing), so tests can run the proxy without metrics.
type metrics struct {
	requestsTotal            *prometheus.CounterVec
	compactionsTotal         *prometheus.CounterVec
	tokensBeforeTotal        prometheus.Counter
	tokensAfterTotal         prometheus.Counter
	tokensSavedTotal         prometheus.Counter
	upstreamLatencySeconds   *prometheus.HistogramVec
	overheadSeconds          *prometheus.HistogramVec
	storeLookupsTotal        *prometheus.CounterVec
	fallbacksTotal           *prometheus.CounterVec
	failOpenTotal            *prometheus.CounterVec
	passthroughModifiedTotal prometheus.Counter
	overflowRetriesTotal     *prometheus.CounterVec
	streamTruncatedTotal     *prometheus.CounterVec
	lockWaitsTotal           prometheus.Counter
	aheadTotal               *prometheus.CounterVec
	callsTotal               *prometheus.CounterVec
	usageTokensTotal         *prometheus.CounterVec
	requestTokensSavedTotal  prometheus.Counter
	costDollarsTotal         *prometheus.CounterVec
	unpricedTotal            *prometheus.CounterVec
	cacheMissesTotal         *prometheus.CounterVec
}

// newMetrics creates the proxy's metrics and registers them with reg
// (normally a registry of the proxy's own, served by metricsHandler).
// Series of the bounded label sets start at zero, so a scrape shows them
// before the first event. It panics if reg already holds metrics of the
// same names, as registering twice is a programming error.
func newMetrics(reg prometheus.Registerer) *metrics {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "compact", Subsystem: "proxy", Name: name, Help: help}, labels)
		reg.MustRegister(c)
		return c
	}
	plain := func(name, help string) prometheus.Counter {
		c := prometheus.NewCounter(prometheus.CounterOpts{Namespace: "compact", Subsystem: "proxy", Name: name, Help: help})
		reg.MustRegister(c)
		return c
	}
	histogram := func(name, help string, buckets []float64) *prometheus.HistogramVec {
		h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "compact", Subsystem: "proxy", Name: name, Help: help, Buckets: buckets}, []string{"api"})
		reg.MustRegister(h)
		return h
	}
	m := &metrics{
		requestsTotal:     counter("requests_total", "Requests answered, by API and HTTP status sent to the client.", "api", "status"),
		compactionsTotal:  counter("compactions_total", "Compactions written, by reason and summarizer kind (each counted once, by the request that wrote it).", "reason", "summarizer"),
		tokensBeforeTotal: plain("tokens_before_total", "Sum of the context sizes, in tokens, before each compaction."),
		tokensAfterTotal:  plain("tokens_after_total", "Sum of the context sizes, in tokens, after each compaction."),
		tokensSavedTotal:  plain("tokens_saved_total", "Sum of the tokens each compaction removed from the context."),
		upstreamLatencySeconds: histogram("upstream_latency_seconds", "Time from sending a request upstream to the first byte of its response.",
			[]float64{0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120}),
		overheadSeconds: histogram("overhead_seconds", "Time the proxy spent on a request before sending it upstream (reading, parsing, compacting).",
			[]float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120}),
		storeLookupsTotal:        counter("store_lookups_total", "Conversation record lookups, by result (hit, miss, error, rejected: failed authentication).", "result"),
		fallbacksTotal:           counter("fallbacks_total", "Fallbacks taken: extractive summary after a model summary failed or its reply was refused by the review (rejected), truncation when a summary did not fit.", "what"),
		failOpenTotal:            counter("fail_open_total", "Requests forwarded unchanged because a stage of compaction failed, by stage.", "stage"),
		passthroughModifiedTotal: plain("passthrough_bytes_modified_total", "Requests forwarded with modified bytes on a path that must pass them through untouched. Must stay 0."),
		overflowRetriesTotal:     counter("overflow_retries_total", "Requests retried after compaction because the upstream reported a context overflow.", "api"),
		streamTruncatedTotal:     counter("stream_truncated_total", "Responses that ended without their terminal event (message_stop, [DONE], response.completed).", "api"),
		lockWaitsTotal:           plain("lock_waits_total", "Compactions left to another replica that held the conversation's lock (this replica waited for its result)."),
		callsTotal: counter("model_calls_total", "Model calls that reported usage, by API and what they were: requests (answers forwarded to clients) or summaries "+
			"(summaries the proxy had a model write; one summary may take several calls).", "api", "what"),
		usageTokensTotal: counter("usage_tokens_total", "Tokens the provider reported, by API, what the call was (requests, summaries) and kind "+
			"(input: uncached prompt; cache_read, cache_write: prompt read from or written to the prompt cache; output). A provider's own compaction step (Anthropic usage.iterations) is included.", "api", "what", "kind"),
		requestTokensSavedTotal: plain("request_tokens_saved_total", "Tokens the requests sent with a compaction applied did not send: for each, the context before the compaction minus the context after it (estimated)."),
		costDollarsTotal:        counter("cost_dollars_total", "Estimated cost in US dollars of the model calls whose model has known prices (the model registry's), by API and what the calls were.", "api", "what"),
		unpricedTotal:           counter("unpriced_calls_total", "Model calls whose model has no known prices: their cost is not in cost_dollars_total.", "api", "what"),
		cacheMissesTotal: counter("cache_misses_total", "Requests that missed the provider's prompt cache (read under 90 % of the previous request's prompt), by the proxy's explanation: "+
			"compaction (expected), idle (past the cache lifetime), prefix (what was sent changed), provider (same prefix, not reused), unknown (no record of the previous request on this replica).", "cause"),
		aheadTotal: counter("summaries_ahead_total", "Summaries written ahead of time, by outcome: started, stored, failed, skipped (another replica prepares), "+
			"swapped (in at the trigger), stale (no longer fitted; compacted in line), not_ready (a request over the trigger passed uncompacted), waited (a request that would overflow waited).", "outcome"),
	}
	for _, v := range metricAhead {
		m.aheadTotal.WithLabelValues(v)
	}
	for _, c := range metricMissCauses {
		m.cacheMissesTotal.WithLabelValues(c)
	}
	// Every (reason, summarizer) pair starts at 0 too: a series born at
	// its first compaction reads 1 in its first scrape, and Prometheus's
	// increase() and rate() miss that first compaction.
	for _, r := range metricReasons {
		for _, s := range metricSummarizers {
			m.compactionsTotal.WithLabelValues(r, s)
		}
	}
	for _, api := range metricAPIs {
		m.upstreamLatencySeconds.WithLabelValues(api)
		m.overheadSeconds.WithLabelValues(api)
		m.overflowRetriesTotal.WithLabelValues(api)
		m.streamTruncatedTotal.WithLabelValues(api)
	}
	for _, v := range metricLookups {
		m.storeLookupsTotal.WithLabelValues(v)
	}
	for _, v := range metricStages {
		m.failOpenTotal.WithLabelValues(v)
	}
	for _, v := range metricFallbacks {
		m.fallbacksTotal.WithLabelValues(v)
	}
	for _, api := range metricAPIs {
		for _, what := range metricWhats {
			m.callsTotal.WithLabelValues(api, what)
			m.costDollarsTotal.WithLabelValues(api, what)
			m.unpricedTotal.WithLabelValues(api, what)
			for _, kind := range metricTokenKinds {
				m.usageTokensTotal.WithLabelValues(api, what, kind)
			}
		}
	}
	return m
}

// metricsHandler serves the metrics of reg in the Prometheus text format.
func metricsHandler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}

// apiLabel returns api as a label value.
func apiLabel(api API) string { return oneOf(string(api), metricAPIs) }

// request counts a request answered with status; api is "" (labelled
// "other") for paths the proxy does not compact.
func (m *metrics) request(api API, status int) {
	if m == nil {
		return
	}
	m.requestsTotal.WithLabelValues(apiLabel(api), statusLabel(status)).Inc()
}

// compaction counts a compaction and the context sizes, in tokens, before
// and after it. summarizer is the name of what wrote the summary, reduced
// to its kind (see summarizerKind).
func (m *metrics) compaction(reason compact.Reason, summarizer string, before, after int) {
	if m == nil {
		return
	}
	m.compactionsTotal.WithLabelValues(oneOf(string(reason), metricReasons), summarizerKind(summarizer)).Inc()
	m.tokensBeforeTotal.Add(float64(max(before, 0)))
	m.tokensAfterTotal.Add(float64(max(after, 0)))
	m.tokensSavedTotal.Add(float64(max(before-after, 0)))
}

// storeLookup counts a lookup of a conversation record; result is
// lookupHit, lookupMiss, lookupError or lookupRejected.
func (m *metrics) storeLookup(result string) {
	if m == nil {
		return
	}
	m.storeLookupsTotal.WithLabelValues(oneOf(result, metricLookups)).Inc()
}

// failOpen counts a request forwarded unchanged because stage (a stageX
// constant) failed.
func (m *metrics) failOpen(stage string) {
	if m == nil {
		return
	}
	m.failOpenTotal.WithLabelValues(oneOf(stage, metricStages)).Inc()
}

// fallback counts a fallback taken (a fallbackX constant).
func (m *metrics) fallback(what string) {
	if m == nil {
		return
	}
	m.fallbacksTotal.WithLabelValues(oneOf(what, metricFallbacks)).Inc()
}

// upstreamLatency records the time from sending a request upstream to
// the first byte of the response.
func (m *metrics) upstreamLatency(api API, d time.Duration) {
	if m == nil {
		return
	}
	m.upstreamLatencySeconds.WithLabelValues(apiLabel(api)).Observe(d.Seconds())
}

// overhead records the time the proxy spent on a request before sending
// it upstream.
func (m *metrics) overhead(api API, d time.Duration) {
	if m == nil {
		return
	}
	m.overheadSeconds.WithLabelValues(apiLabel(api)).Observe(d.Seconds())
}

// passthroughModified counts a request whose bytes were modified on a
// path that must forward them untouched: a bug alarm that must stay 0.
func (m *metrics) passthroughModified() {
	if m == nil {
		return
	}
	m.passthroughModifiedTotal.Inc()
}

// overflowRetry counts a request retried after a context overflow.
func (m *metrics) overflowRetry(api API) {
	if m == nil {
		return
	}
	m.overflowRetriesTotal.WithLabelValues(apiLabel(api)).Inc()
}

// streamTruncated counts a response that ended without its terminal
// event.
func (m *metrics) streamTruncated(api API) {
	if m == nil {
		return
	}
	m.streamTruncatedTotal.WithLabelValues(apiLabel(api)).Inc()
}

// lockWait counts a compaction left to another replica.
func (m *metrics) lockWait() {
	if m == nil {
		return
	}
	m.lockWaitsTotal.Inc()
}

// ahead counts an event of a summary written ahead of time (an aheadX
// outcome).
func (m *metrics) ahead(outcome string) {
	if m == nil {
		return
	}
	m.aheadTotal.WithLabelValues(oneOf(outcome, metricAhead)).Inc()
}

// cacheMiss counts one cache miss by its cause.
func (m *metrics) cacheMiss(cause store.MissCause) {
	if m == nil {
		return
	}
	m.cacheMissesTotal.WithLabelValues(oneOf(string(cause), metricMissCauses)).Inc()
}

// usage counts one model call: what it was (whatRequests or
// whatSummaries), its tokens by kind (a provider's compaction step
// included), the tokens it saved and its estimated cost (priced false:
// unknown, counted in unpriced_calls_total instead).
func (m *metrics) usage(api API, what string, u compact.Usage, saved int, c compact.Cost, priced bool) {
	if m == nil {
		return
	}
	a, w := apiLabel(api), oneOf(what, metricWhats)
	if w == labelOther {
		w = whatRequests
	}
	m.callsTotal.WithLabelValues(a, w).Inc()
	for _, k := range []struct {
		kind string
		n    int
	}{
		{tokensInput, u.Input + u.Compaction.Input}, {tokensOutput, u.Output + u.Compaction.Output},
		{tokensCacheRead, u.CacheRead + u.Compaction.CacheRead}, {tokensCacheWrite, u.CacheWrite + u.Compaction.CacheWrite},
	} {
		if k.n > 0 {
			m.usageTokensTotal.WithLabelValues(a, w, k.kind).Add(float64(k.n))
		}
	}
	if saved > 0 {
		m.requestTokensSavedTotal.Add(float64(saved))
	}
	if priced {
		m.costDollarsTotal.WithLabelValues(a, w).Add(max(c.Total(), 0))
	} else {
		m.unpricedTotal.WithLabelValues(a, w).Inc()
	}
}
