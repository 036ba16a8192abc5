package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/proxy/store"
)

// scrape serves reg's metrics over loopback and returns the text.
func scrape(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	srv := httptest.NewServer(metricsHandler(reg))
	defer srv.Close()
	status, b := get(t, srv.URL)
	if status != http.StatusOK {
		t.Fatalf("scrape: HTTP %d: %s", status, b)
	}
	return b
}

// served returns the metrics a proxy serves at base + "/metrics".
func served(t *testing.T, base string) string {
	t.Helper()
	_, b := get(t, base+"/metrics")
	return b
}

// get fetches url and returns the status and the body.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// sample returns the value of the series written exactly as series (name
// and labels) in a scrape, failing when it is absent.
func sample(t *testing.T, text, series string) string {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			return rest
		}
	}
	t.Fatalf("no series %s in the scrape", series)
	return ""
}

func TestMetricsScrape(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := newMetrics(reg)
	m.request(Anthropic, 200)
	m.request(Anthropic, 200)
	m.request(Responses, 413)
	m.request("", 404)
	m.compaction(compact.ReasonThreshold, "claude-haiku-4-5", 180000, 20000)
	m.compaction(compact.ReasonOverflow, "extractive", 1000, 400)
	m.compaction(reasonAgent, "", 10, 20) // grew: saves nothing
	m.storeLookup(lookupHit)
	m.storeLookup(lookupMiss)
	m.storeLookup(lookupMiss)
	m.failOpen(stageParse)
	m.fallback(fallbackExtractive)
	m.upstreamLatency(Chat, 1500*time.Millisecond)
	m.overhead(Chat, 3*time.Millisecond)
	m.overflowRetry(Responses)
	m.streamTruncated(Anthropic)

	text := scrape(t, reg)
	for series, want := range map[string]string{
		`compact_proxy_requests_total{api="anthropic",status="200"}`:                 "2",
		`compact_proxy_requests_total{api="responses",status="413"}`:                 "1",
		`compact_proxy_requests_total{api="other",status="404"}`:                     "1",
		`compact_proxy_compactions_total{reason="threshold",summarizer="model"}`:     "1",
		`compact_proxy_compactions_total{reason="overflow",summarizer="extractive"}`: "1",
		`compact_proxy_compactions_total{reason="agent",summarizer="none"}`:          "1",
		`compact_proxy_tokens_before_total`:                                          "181010",
		`compact_proxy_tokens_after_total`:                                           "20420",
		`compact_proxy_tokens_saved_total`:                                           "160600",
		`compact_proxy_store_lookups_total{result="hit"}`:                            "1",
		`compact_proxy_store_lookups_total{result="miss"}`:                           "2",
		`compact_proxy_store_lookups_total{result="error"}`:                          "0",
		`compact_proxy_fail_open_total{stage="parse"}`:                               "1",
		`compact_proxy_fail_open_total{stage="store"}`:                               "0",
		`compact_proxy_fallbacks_total{what="extractive"}`:                           "1",
		`compact_proxy_upstream_latency_seconds_count{api="chat"}`:                   "1",
		`compact_proxy_upstream_latency_seconds_sum{api="chat"}`:                     "1.5",
		`compact_proxy_upstream_latency_seconds_bucket{api="chat",le="2"}`:           "1",
		`compact_proxy_upstream_latency_seconds_bucket{api="chat",le="1"}`:           "0",
		`compact_proxy_overhead_seconds_count{api="chat"}`:                           "1",
		`compact_proxy_overhead_seconds_bucket{api="chat",le="0.005"}`:               "1",
		`compact_proxy_overhead_seconds_count{api="anthropic"}`:                      "0",
		`compact_proxy_passthrough_bytes_modified_total`:                             "0",
		`compact_proxy_overflow_retries_total{api="responses"}`:                      "1",
		`compact_proxy_overflow_retries_total{api="anthropic"}`:                      "0",
		`compact_proxy_stream_truncated_total{api="anthropic"}`:                      "1",
	} {
		if got := sample(t, text, series); got != want {
			t.Errorf("%s = %s; want %s", series, got, want)
		}
	}
	m.passthroughModified()
	if got := sample(t, scrape(t, reg), "compact_proxy_passthrough_bytes_modified_total"); got != "1" {
		t.Errorf("passthrough_bytes_modified_total = %s after one; want 1", got)
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "compact") && !strings.HasPrefix(line, "compact_proxy_") {
			t.Errorf("metric outside compact_proxy_: %s", line)
		}
	}
}

func TestMetricsNilIsNoop(t *testing.T) {
	var m *metrics
	m.request(Anthropic, 200)
	m.compaction(compact.ReasonThreshold, "extractive", 2, 1)
	m.storeLookup(lookupHit)
	m.failOpen(stageBody)
	m.fallback(fallbackTruncate)
	m.upstreamLatency(Chat, time.Second)
	m.overhead(Chat, time.Second)
	m.passthroughModified()
	m.overflowRetry(Chat)
	m.streamTruncated(Chat)
	m.cacheMiss(store.MissPrefix)
}

func TestMetricsLabelsAreBounded(t *testing.T) {
	// Whatever strings reach the methods, label values come only from the
	// fixed sets: a credential, a session id or a model name passed by
	// mistake never appears in a scrape.
	const secret = "sk-ant-api03-SECRETSECRET"
	reg := prometheus.NewRegistry()
	m := newMetrics(reg)
	m.request(API(secret), 200)
	m.request(Chat, 999)
	m.compaction(compact.Reason(secret), secret, 10, 5)
	m.storeLookup(secret)
	m.failOpen(secret)
	m.fallback(secret)
	m.upstreamLatency(API(secret), time.Second)
	m.overhead(API(secret), time.Second)
	m.overflowRetry(API(secret))
	m.streamTruncated(API(secret))
	m.usage(API(secret), secret, compact.Usage{Input: 1}, 1, compact.Cost{Input: 1}, true)
	m.cacheMiss(store.MissCause(secret))
	text := scrape(t, reg)
	if strings.Contains(text, "SECRET") {
		t.Fatalf("a string passed to the metrics reached the scrape:\n%s", text)
	}
	allowed := map[string]bool{}
	for _, set := range [][]string{metricAPIs, metricReasons, metricSummarizers, metricLookups, metricStages, metricFallbacks, metricWhats, metricTokenKinds, metricAhead, metricMissCauses} {
		for _, v := range set {
			allowed[v] = true
		}
	}
	label := regexp.MustCompile(`(\w+)="([^"]*)"`)
	for _, mm := range label.FindAllStringSubmatch(text, -1) {
		name, value := mm[1], mm[2]
		switch name {
		case "le", "quantile":
			continue
		case "status":
			if value != labelOther && !regexp.MustCompile(`^[1-5][0-9][0-9]$`).MatchString(value) {
				t.Errorf("status label %q", value)
			}
			continue
		}
		if !allowed[value] {
			t.Errorf("label %s=%q is outside the fixed sets", name, value)
		}
	}
	if got := sample(t, text, `compact_proxy_compactions_total{reason="other",summarizer="model"}`); got != "1" {
		t.Errorf("compaction with an unknown reason counted %s; want 1 under other/model", got)
	}
	if got := sample(t, text, `compact_proxy_requests_total{api="chat",status="other"}`); got != "1" {
		t.Errorf("request with status 999 counted %s; want 1 under other", got)
	}
}

func TestMetricsOwnRegistry(t *testing.T) {
	// Two proxies in one process (tests) each have their own metrics.
	a, b := prometheus.NewRegistry(), prometheus.NewRegistry()
	newMetrics(a).storeLookup(lookupHit)
	newMetrics(b)
	if got := sample(t, scrape(t, b), `compact_proxy_store_lookups_total{result="hit"}`); got != "0" {
		t.Fatalf("second registry saw the first one's lookup: %s", got)
	}
}

// TestMetricsCompactionsStartAtZero: before any compaction, a scrape
// already shows every (reason, summarizer) series of
// compact_proxy_compactions_total at 0, so that Prometheus's increase()
// and rate() count a process's first compaction of each kind (a series
// that appears at 1 hides its first increment from them; see
// scripts/prometheus.sh).
func TestMetricsCompactionsStartAtZero(t *testing.T) {
	text := scrape(t, func() *prometheus.Registry { r := prometheus.NewRegistry(); newMetrics(r); return r }())
	for _, reason := range metricReasons {
		for _, s := range metricSummarizers {
			series := `compact_proxy_compactions_total{reason="` + reason + `",summarizer="` + s + `"}`
			if got := sample(t, text, series); got != "0" {
				t.Errorf("%s = %s before any compaction; want 0", series, got)
			}
		}
	}
}
