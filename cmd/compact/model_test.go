package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/numfmt"
	"github.com/compactkit/compact/internal/testing/sharedtest"
	"github.com/compactkit/compact/summarize"
	"github.com/compactkit/compact/summarize/extractive"
)

// keyVar is the environment variable holding the provider's key.
func keyVar(provider string) string {
	if provider == summarizerOpenAI {
		return "OPENAI_API_KEY"
	}
	return "ANTHROPIC_API_KEY"
}

// authHeader returns the key a request carried, in either provider's
// header.
func authHeader(r *seenRequest) string {
	if v := r.Header.Get("Authorization"); v != "" {
		return strings.TrimPrefix(v, "Bearer ")
	}
	return r.Header.Get("X-Api-Key")
}

// modelArgs are the arguments of "compact run" against a fake server.
func modelArgs(m *fakeModel, file string, extra ...string) []string {
	return append([]string{"run", file, "--summarizer", m.provider, "--base-url", m.baseURL(), "--summary-model", "m"}, extra...)
}

// TestModelSummarizer compacts the example session with each provider's
// wire format, in JSON and in human form.
func TestModelSummarizer(t *testing.T) {
	for _, provider := range []string{summarizerOpenAI, summarizerAnthropic} {
		t.Run(provider, func(t *testing.T) {
			m := newFakeModel(t, provider)
			c := newCLI(t)
			c.env[keyVar(provider)] = "test-key"
			file := sharedtest.TempCopy(t, demoSession)
			before := readFile(t, file)

			var raw map[string]any
			c.okJSON(&raw, append(modelArgs(m, file, "--summary-window", "128000"), "--json")...)
			for _, k := range []string{"summarizer", "summarizerUsage", "fallback", "summary", "entryId", "tokensAfter", "targetTokens"} {
				if _, ok := raw[k]; !ok {
					t.Errorf("run --json has no %q", k)
				}
			}
			for _, k := range []string{"fallbackError", "adjustments"} {
				if _, ok := raw[k]; ok {
					t.Errorf("run --json has %q although nothing failed or was adjusted", k)
				}
			}
			var rr runReport
			b, _ := json.Marshal(raw)
			if err := json.Unmarshal(b, &rr); err != nil {
				t.Fatal(err)
			}

			// One line appended, nothing else changed.
			if !bytes.HasPrefix(readFile(t, file), before) || lineCount(t, file) != bytes.Count(before, []byte("\n"))+1 {
				t.Fatal("run did more than append one line")
			}

			// The requests: one for the history, one for the start of the
			// split turn, each with the system prompt, the transcript,
			// the key, the model and the output budget for a 128,000-token
			// window (8% of it, halved for the turn prefix).
			reqs := m.seen()
			want := 1
			if rr.IsSplitTurn {
				want = 2
			}
			if len(reqs) != want {
				t.Fatalf("%d requests, want %d", len(reqs), want)
			}
			for i, r := range reqs {
				if r.Model != "m" || authHeader(r) != "test-key" || r.System != summarize.SystemPrompt() ||
					!strings.Contains(r.Prompt, "<transcript>") {
					t.Errorf("request %d: model %q, key %q, system prompt %.40q, prompt %.80q", i+1, r.Model, authHeader(r), r.System, r.Prompt)
				}
			}
			// The history's budget less the record appended to it, which
			// the model does not write.
			_, ledger := extractive.SplitLedger(rr.Summary)
			history := max(10240-int(math.Ceil(float64(len(ledger))/summarize.DefaultCharsPerToken)), 10240/2)
			if ledger == "" || reqs[0].MaxTokens != history || (len(reqs) > 1 && reqs[1].MaxTokens != 5120) {
				t.Errorf("max tokens %d, %d; want %d for the history (10240 less the record's %d bytes) and 5120 for the turn prefix",
					reqs[0].MaxTokens, reqs[len(reqs)-1].MaxTokens, history, len(ledger))
			}

			// The report.
			// The default policy's target: half its trigger of 183,616.
			if rr.Summarizer != "m" || rr.Fallback == nil || *rr.Fallback || rr.TargetTokens != 91808 {
				t.Errorf("summarizer %q, fallback %v, target %d", rr.Summarizer, rr.Fallback, rr.TargetTokens)
			}
			wantUsage := usageReport{Input: fakeInputTokens * want, Output: fakeOutputTokens * want}
			if provider == summarizerOpenAI {
				wantUsage.Total = (fakeInputTokens + fakeOutputTokens) * want
			}
			if rr.SummarizerUsage == nil || *rr.SummarizerUsage != wantUsage {
				t.Errorf("summarizerUsage %+v, want %+v", rr.SummarizerUsage, wantUsage)
			}

			// The summary in the file is the server's text plus the file
			// lists, and the details name the summary model.
			s := open(t, file)
			e := s.Entry(rr.EntryID)
			if e == nil || e.Compaction == nil {
				t.Fatalf("entry %s is not a compaction", rr.EntryID)
			}
			sum := e.Compaction.Summary
			if sum != rr.Summary || !strings.HasPrefix(sum, "## Goal\n") || !strings.Contains(sum, fakeSummaryMark+", request 1.") {
				t.Errorf("summary in the file:\n%.300s", sum)
			}
			contains(t, "summary", sum, "<read-files>", "<modified-files>")
			if rr.IsSplitTurn {
				contains(t, "summary", sum, "The current turn began before the kept messages", fakeSummaryMark+", request 2.")
			}
			body := compact.StripFileLists(sum)
			if strings.Contains(body, "<read-files>") {
				t.Errorf("the file lists are not at the end of the summary")
			}
			if d := e.Compaction.Details; d["summarizer"] != "m" || d["reason"] != "manual" || d["fallback"] != nil {
				t.Errorf("details %v", d)
			}

			// Human form, on a fresh copy.
			file2 := sharedtest.TempCopy(t, demoSession)
			out := c.ok(modelArgs(m, file2, "--summary-window", "128000")...)
			contains(t, "run", out, "compacted "+file2, "by m (budget 13,107)",
				"summarizer usage: "+numfmt.Thousands(fakeInputTokens*want)+" input, "+numfmt.Thousands(fakeOutputTokens*want)+" output tokens",
				"appended compaction entry")
			if strings.Contains(out, "adjusted:") || strings.Contains(out, "without a model") {
				t.Errorf("unexpected adjustment or fallback:\n%s", out)
			}
		})
	}
}

// TestModelRetryAfter checks that a rate limit is waited out for the time
// the server asked, and the request sent again.
func TestModelRetryAfter(t *testing.T) {
	m := newFakeModel(t, summarizerOpenAI)
	m.answer = func(n int, r *seenRequest) answer {
		if n == 1 {
			return answer{status: http.StatusTooManyRequests, retryAfter: "7",
				body: providerError(summarizerOpenAI, "rate_limit_exceeded", "Rate limit reached for requests")}
		}
		return answer{}
	}
	c := newCLI(t)
	var waits []time.Duration
	c.tune = instantRetries(&waits)
	file := sharedtest.TempCopy(t, demoSession)
	var rr runReport
	c.okJSON(&rr, append(modelArgs(m, file, "--summary-window", "128000"), "--json")...)

	reqs := m.seen()
	// The history took two requests; a split turn's prefix one more.
	want := 2
	if rr.IsSplitTurn {
		want = 3
	}
	if len(reqs) != want || !bytes.Equal(reqs[0].Body, reqs[1].Body) {
		t.Fatalf("%d requests (want %d), the retry resent the same body: %v", len(reqs), want, len(reqs) > 1 && bytes.Equal(reqs[0].Body, reqs[1].Body))
	}
	if len(waits) != 1 || waits[0] != 7*time.Second {
		t.Errorf("waits %v, want [7s] from Retry-After", waits)
	}
	if *rr.Fallback || rr.Summarizer != "m" || !strings.Contains(rr.Summary, fakeSummaryMark+", request 2.") {
		t.Errorf("fallback %v, summarizer %q, summary %.80q", *rr.Fallback, rr.Summarizer, rr.Summary)
	}
}

// TestModelServerError checks that a server failing every request fails
// the run after five tries with the file untouched, and that --fallback
// extractive writes the offline summary instead.
func TestModelServerError(t *testing.T) {
	m := newFakeModel(t, summarizerOpenAI)
	m.answer = func(int, *seenRequest) answer {
		return answer{status: http.StatusInternalServerError,
			body: providerError(summarizerOpenAI, "server_error", "The server had an error while processing your request.")}
	}
	c := newCLI(t)
	var waits []time.Duration
	c.tune = instantRetries(&waits)
	file := sharedtest.TempCopy(t, demoSession)

	msg := c.failsKeeping(file, modelArgs(m, file, "--summary-window", "128000")...)
	contains(t, "error", msg, file, "the file is unchanged", "gave up after 5 tries", "HTTP 500", "The server had an error")
	if n := len(m.seen()); n != 5 {
		t.Errorf("%d requests, want 5 tries", n)
	}
	// Exponential backoff from one second, no jitter.
	if want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}; !slices.Equal(waits, want) {
		t.Errorf("waits %v, want %v", waits, want)
	}

	// With the fallback the offline summary is written, marked, and a
	// warning names the failure.
	r := c.run(append(modelArgs(m, file, "--summary-window", "128000", "--fallback", "extractive"), "--json")...)
	if r.code != 0 {
		t.Fatalf("--fallback extractive: exit %d, stderr %q", r.code, r.stderr)
	}
	if !strings.HasPrefix(r.stderr, "compact: warning: the openai summarizer failed") || strings.Count(r.stderr, "\n") != 1 ||
		!strings.Contains(r.stderr, "HTTP 500") {
		t.Errorf("stderr %q, want one warning line naming the failure", r.stderr)
	}
	var rr runReport
	if err := json.Unmarshal([]byte(r.stdout), &rr); err != nil {
		t.Fatal(err)
	}
	if rr.Fallback == nil || !*rr.Fallback || !strings.Contains(rr.FallbackError, "HTTP 500") || rr.Summarizer != "extractive" || rr.SummarizerUsage != nil {
		t.Errorf("fallback %v, error %q, summarizer %q, usage %v", rr.Fallback, rr.FallbackError, rr.Summarizer, rr.SummarizerUsage)
	}
	e := open(t, file).Entry(rr.EntryID)
	if e == nil || !strings.HasPrefix(e.Compaction.Summary, "> Written without a model") {
		t.Fatalf("the summary is not marked as written without a model: %+v", e)
	}
	if d := e.Compaction.Details; d["fallback"] != true || !strings.Contains(d["summarizerError"].(string), "HTTP 500") || d["summarizer"] != "extractive" {
		t.Errorf("details %v", d)
	}
	if n := len(m.seen()); n != 10 {
		t.Errorf("%d requests in all, want 5 more tries before the fallback", n)
	}

	// The human form says so too.
	file2 := sharedtest.TempCopy(t, demoSession)
	r = c.run(modelArgs(m, file2, "--summary-window", "128000", "--fallback", "extractive")...)
	if r.code != 0 || !strings.Contains(r.stdout, "by extractive, written without a model") || !strings.Contains(r.stderr, "warning:") {
		t.Errorf("human fallback: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestModelOverflow checks that when the server's window turns out
// smaller than --summary-window says, its overflow error makes the
// summarizer cut the history into smaller requests, without waiting.
func TestModelOverflow(t *testing.T) {
	for _, provider := range []string{summarizerOpenAI, summarizerAnthropic} {
		t.Run(provider, func(t *testing.T) {
			// The server takes about 3,500 tokens, not the 10,000 claimed
			// (the prompts, with the notes on the record and on superseded
			// decisions, take some 3,000 bytes of that).
			const limit = 10500
			m := newFakeModel(t, provider)
			m.answer = func(n int, r *seenRequest) answer {
				if r.contentBytes() > limit {
					return answer{status: http.StatusBadRequest, body: overflowBody(provider)}
				}
				return answer{}
			}
			c := newCLI(t)
			c.env[keyVar(provider)] = "k"
			var waits []time.Duration
			c.tune = instantRetries(&waits)
			file := sharedtest.TempCopy(t, demoSession)
			var rr runReport
			c.okJSON(&rr, append(modelArgs(m, file, "--summary-window", "10000"), "--json")...)

			reqs := m.seen()
			if len(reqs) < 3 || reqs[0].contentBytes() <= limit {
				t.Fatalf("%d requests, the first of %d bytes; want an overflow, then smaller requests", len(reqs), reqs[0].contentBytes())
			}
			for i, r := range reqs[1:] {
				if r.contentBytes() > limit {
					t.Errorf("request %d after the overflow has %d bytes, more than the %d the server takes", i+2, r.contentBytes(), limit)
				}
			}
			if len(waits) != 0 {
				t.Errorf("an overflow was waited out: %v", waits)
			}
			// The history was summarized in chunks, the later ones
			// merging into the running summary.
			if !strings.Contains(reqs[2].Prompt, "<running-summary>") || !strings.Contains(reqs[2].Prompt, fakeSummaryMark+", request 2.") {
				t.Errorf("the second chunk does not carry the first one's summary: %.300q", reqs[2].Prompt)
			}
			if rr.Summarizer != "m" || *rr.Fallback {
				t.Errorf("summarizer %q, fallback %v", rr.Summarizer, *rr.Fallback)
			}
		})
	}
}

// TestModelTruncated checks that a summary cut off by the output limit
// fails the run and writes nothing: its last sections would be missing.
func TestModelTruncated(t *testing.T) {
	for _, provider := range []string{summarizerOpenAI, summarizerAnthropic} {
		t.Run(provider, func(t *testing.T) {
			m := newFakeModel(t, provider)
			m.answer = func(int, *seenRequest) answer { return answer{truncated: true} }
			c := newCLI(t)
			c.env[keyVar(provider)] = "k"
			file := sharedtest.TempCopy(t, demoSession)
			msg := c.failsKeeping(file, modelArgs(m, file, "--summary-window", "128000", "--no-ledger")...)
			contains(t, "error", msg, "the file is unchanged", "cut off at its 10240-token output limit")
			if n := len(m.seen()); n != 1 {
				t.Errorf("%d requests; a truncated answer must not be retried", n)
			}
		})
	}
}

// TestModelCancel cancels a run while the server is still thinking, as
// Ctrl-C does: the run returns at once and writes nothing.
func TestModelCancel(t *testing.T) {
	m := newFakeModel(t, summarizerOpenAI)
	m.started = make(chan struct{}, 1)
	m.answer = func(int, *seenRequest) answer { return answer{block: true} }
	c := newCLI(t)
	file := sharedtest.TempCopy(t, demoSession)
	before := readFile(t, file)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan result, 1)
	go func() { done <- c.runCtx(ctx, modelArgs(m, file, "--summary-window", "128000")...) }()
	select {
	case <-m.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the request never reached the server")
	}
	cancelled := time.Now()
	cancel()
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the run did not return after its context was cancelled")
	}
	if d := time.Since(cancelled); d > 2*time.Second {
		t.Errorf("the run took %v to return after the cancel", d)
	}
	if r.code == 0 || !strings.HasPrefix(r.stderr, "compact: ") || strings.Count(r.stderr, "\n") != 1 ||
		!strings.Contains(r.stderr, "interrupted, the file is unchanged") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	unchanged(t, file, before, "a cancelled run")
	if n := len(m.seen()); n != 1 {
		t.Errorf("%d requests; a cancelled request must not be retried", n)
	}
}

// TestModelChunking compacts a real session that pi compacted twice
// before, with a summary model whose window (32,000 tokens) is far
// smaller than the history: the history is summarized in chunks, every
// request fits the window, and no file is lost along the way.
func TestModelChunking(t *testing.T) {
	const window = 32000
	c := newCLI(t)
	file := fixture(t, "before-compaction.jsonl")
	before := readFile(t, file)
	dry := c.dryRun(file)
	paths := append(append([]string{}, dry.ReadFiles...), dry.ModifiedFiles...)
	if len(paths) == 0 {
		t.Fatal("the plan lists no files")
	}

	m := newFakeModel(t, summarizerOpenAI)
	m.paths = paths
	yes := true
	c.progress = &yes
	r := c.run("run", file, "--json", "--summarizer", "openai", "--base-url", m.baseURL(), "--summary-model", "local-model",
		"--summary-window", "32000")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	var rr runReport
	if err := json.Unmarshal([]byte(r.stdout), &rr); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(readFile(t, file), before) || lineCount(t, file) != bytes.Count(before, []byte("\n"))+1 {
		t.Fatal("run did more than append one line")
	}

	reqs := m.seen()
	history := 0
	for i, q := range reqs {
		// The estimate the summarizer itself uses (3 characters a token)
		// must leave the window room for the answer; the body, JSON
		// escaping included, is bounded by 4 bytes a token as well.
		if est := (q.contentBytes() + 2) / 3; est+q.MaxTokens > window {
			t.Errorf("request %d: ~%d tokens of prompt + %d of output exceed the %d-token window", i+1, est, q.MaxTokens, window)
		}
		if len(q.Body) >= window*4 {
			t.Errorf("request %d: body of %d bytes", i+1, len(q.Body))
		}
		if !strings.Contains(q.Prompt, "## Turn Request") { // the turn prefix's headings
			history++
		}
	}
	if len(reqs) < 3 {
		t.Fatalf("%d requests: the history was not chunked", len(reqs))
	}
	t.Logf("%d requests of %d to %d bytes", len(reqs), minBody(reqs), maxBody(reqs))

	// Progress names the chunks: "summarizing chunk i of n..." as each
	// chunk after the first starts.
	chunks, next := 0, 2
	for _, l := range strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n") {
		var i, n int
		switch {
		case strings.HasPrefix(l, "summarizing chunk "):
			if _, err := fmt.Sscanf(l, "summarizing chunk %d of %d...", &i, &n); err != nil || i != next || i > n {
				t.Errorf("progress line %q, want chunk %d", l, next)
			}
			next, chunks = i+1, n
		case strings.HasPrefix(l, "loading "), strings.HasPrefix(l, "summarizing "):
		default:
			t.Errorf("unexpected stderr line %q", l)
		}
	}
	if chunks < 2 || chunks != next-1 || chunks > history {
		t.Errorf("progress reported %d chunks up to chunk %d, for %d history requests:\n%s", chunks, next-1, history, r.stderr)
	}

	// Every file of the plan is in the summary (the engine appends the
	// lists). Beyond that, the paths the model was shown must survive
	// the chunking in the summary's own text, before the lists: the fake
	// model only repeats what it sees in its prompt, so a path named in
	// chunk 1 reaches the final summary only if every later request
	// carried the running summary forward. Paths that occur in no prompt
	// (files known only from an earlier compaction's lists, which the
	// model is not sent) are covered by the lists alone.
	body := compact.StripFileLists(rr.Summary)
	seen := 0
	for _, p := range paths {
		if !strings.Contains(rr.Summary, p) {
			t.Errorf("the summary lost the file %q", p)
		}
		shown := false
		for _, q := range reqs {
			if strings.Contains(q.Prompt, p) {
				shown = true
				break
			}
		}
		if shown {
			seen++
			if !strings.Contains(body, "`"+p+"`") {
				t.Errorf("the model was shown %q, but the summary text before the file lists lost it", p)
			}
		}
	}
	if seen == 0 {
		t.Error("no file path occurred in any prompt")
	}
	t.Logf("%d of %d files were shown to the model", seen, len(paths))
	if rr.Summarizer != "local-model" || *rr.Fallback {
		t.Errorf("summarizer %q, fallback %v", rr.Summarizer, *rr.Fallback)
	}
}

func minBody(reqs []*seenRequest) int {
	n := len(reqs[0].Body)
	for _, r := range reqs {
		n = min(n, len(r.Body))
	}
	return n
}

func maxBody(reqs []*seenRequest) int {
	n := 0
	for _, r := range reqs {
		n = max(n, len(r.Body))
	}
	return n
}

// TestModelConfig checks the configuration file's summarizer keys and
// that the environment and the flags override them.
func TestModelConfig(t *testing.T) {
	m := newFakeModel(t, summarizerOpenAI)
	dead := "http://127.0.0.1:1/v1" // nothing listens there
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	writeConfig := func(v map[string]any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, cfg, string(b))
	}
	base := map[string]any{"summarizer": "openai", "summaryModel": "cfg-model", "baseURL": m.baseURL(),
		"apiKey": "cfg-key", "summaryWindow": 32000, "timeout": "30s"}
	writeConfig(base)

	// firstOfRun runs compact and returns the first request of the run:
	// the history's (a split turn's prefix comes after it).
	firstOfRun := func(c *cli, args ...string) *seenRequest {
		t.Helper()
		n := len(m.seen())
		file := sharedtest.TempCopy(t, demoSession)
		// --no-ledger: the whole output budget goes to the model, the
		// number these cases check.
		c.ok(append([]string{"run", file, "--config", cfg, "--no-ledger"}, args...)...)
		reqs := m.seen()
		if len(reqs) <= n {
			t.Fatal("no request")
		}
		return reqs[n]
	}

	c := newCLI(t)
	r := firstOfRun(c)
	if r.Model != "cfg-model" || authHeader(r) != "cfg-key" || r.MaxTokens != 2560 {
		t.Errorf("config: model %q, key %q, max tokens %d; want cfg-model, cfg-key, 2560 (8%% of 32000)", r.Model, authHeader(r), r.MaxTokens)
	}

	for _, tc := range []struct {
		name      string
		env       map[string]string
		cfg       map[string]any
		args      []string
		model     string
		key       string
		maxTokens int
	}{
		{name: "env key over the config's", env: map[string]string{"OPENAI_API_KEY": "env-key"},
			model: "cfg-model", key: "env-key", maxTokens: 2560},
		{name: "env base URL over the config's", env: map[string]string{"OPENAI_BASE_URL": m.baseURL()}, cfg: map[string]any{"baseURL": dead},
			model: "cfg-model", key: "cfg-key", maxTokens: 2560},
		{name: "--base-url over the env's", env: map[string]string{"OPENAI_BASE_URL": dead}, args: []string{"--base-url", m.baseURL()},
			model: "cfg-model", key: "cfg-key", maxTokens: 2560},
		{name: "--summary-window over the config's", args: []string{"--summary-window", "128000"},
			model: "cfg-model", key: "cfg-key", maxTokens: 10240},
		{name: "config summaryMaxOutput", cfg: map[string]any{"summaryMaxOutput": 1000},
			model: "cfg-model", key: "cfg-key", maxTokens: 1000},
		{name: "--summary-max-output", args: []string{"--summary-max-output", "700"},
			model: "cfg-model", key: "cfg-key", maxTokens: 700},
		// summaryWindow describes the config's model, not another one.
		{name: "--summary-model from the registry", args: []string{"--summary-model", "gpt-4o"},
			model: "gpt-4o", key: "cfg-key", maxTokens: 10240},
		{name: "--summary-model with --summary-window", args: []string{"--summary-model", "other", "--summary-window", "16000"},
			model: "other", key: "cfg-key", maxTokens: 1280},
		{name: "config models entry", cfg: map[string]any{"summaryModel": "qwen-local", "summaryWindow": 0,
			"models": []any{map[string]any{"id": "qwen-local", "contextWindow": 64000, "maxOutput": 2000}}},
			model: "qwen-local", key: "cfg-key", maxTokens: 2000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := map[string]any{}
			for k, x := range base {
				v[k] = x
			}
			for k, x := range tc.cfg {
				v[k] = x
			}
			writeConfig(v)
			defer writeConfig(base)
			c := newCLI(t)
			for k, x := range tc.env {
				c.env[k] = x
			}
			r := firstOfRun(c, tc.args...)
			if r.Model != tc.model || authHeader(r) != tc.key || r.MaxTokens != tc.maxTokens {
				t.Errorf("model %q, key %q, max tokens %d; want %q, %q, %d", r.Model, authHeader(r), r.MaxTokens, tc.model, tc.key, tc.maxTokens)
			}
		})
	}

	// The config's key belongs to its provider: --summarizer anthropic
	// does not send it.
	am := newFakeModel(t, summarizerAnthropic)
	file := sharedtest.TempCopy(t, demoSession)
	c.ok("run", file, "--config", cfg, "--summarizer", "anthropic", "--base-url", am.baseURL(), "--summary-model", "claude-haiku-4-5", "--no-ledger")
	if reqs := am.seen(); len(reqs) == 0 {
		t.Error("anthropic with an openai config: no request")
	} else if r := reqs[0]; authHeader(r) != "" || r.Model != "claude-haiku-4-5" || r.MaxTokens != 13107 {
		t.Errorf("anthropic with an openai config: key %q, model %q, max tokens %d; want no key, claude-haiku-4-5, 13107",
			authHeader(r), r.Model, r.MaxTokens)
	}
	// Nor does it take the config's model.
	msg := c.fails(2, "run", file, "--config", cfg, "--summarizer", "anthropic", "--base-url", am.baseURL())
	contains(t, "no model", msg, "--summary-model")
	// --summary-model other without a window: the config's summaryWindow
	// is for cfg-model.
	msg = c.fails(2, "run", file, "--config", cfg, "--summary-model", "other")
	contains(t, "unknown window", msg, `"other"`, "--summary-window")

	// timeout: a slow server fails a short per-request limit; --timeout
	// lifts it.
	slow := newFakeModel(t, summarizerOpenAI)
	slow.answer = func(int, *seenRequest) answer { return answer{delay: 300 * time.Millisecond} }
	writeConfig(map[string]any{"summarizer": "openai", "summaryModel": "m", "baseURL": slow.baseURL(), "summaryWindow": 128000, "timeout": "20ms"})
	var waits []time.Duration
	c.tune = instantRetries(&waits)
	file = sharedtest.TempCopy(t, demoSession)
	msg = c.failsKeeping(file, "run", file, "--config", cfg)
	contains(t, "timeout", msg, "no answer within 20ms", "gave up after 5 tries", "the time limit of one request, --timeout 20ms, ran out")
	if strings.Contains(msg, "--total-timeout") {
		t.Errorf("the total limit is blamed: %s", msg)
	}
	contains(t, "--timeout", c.ok("run", file, "--config", cfg, "--timeout", "10s"), "by m")

	// fallback: from the config, and --fallback none over it.
	failing := newFakeModel(t, summarizerOpenAI)
	failing.answer = func(int, *seenRequest) answer {
		return answer{status: http.StatusServiceUnavailable, body: providerError(summarizerOpenAI, "server_error", "overloaded")}
	}
	writeConfig(map[string]any{"summarizer": "openai", "summaryModel": "m", "baseURL": failing.baseURL(), "summaryWindow": 128000, "fallback": "extractive"})
	file = sharedtest.TempCopy(t, demoSession)
	c.failsKeeping(file, "run", file, "--config", cfg, "--fallback", "none")
	if r := c.run("run", file, "--config", cfg); r.code != 0 || !strings.Contains(r.stdout, "written without a model") {
		t.Errorf("config fallback: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// The config's summarizer is used by run only: inspect ignores it.
	writeConfig(base)
	c.ok("inspect", file, "--config", cfg)
}

// TestModelErrors checks the messages for a wrong summarizer setup.
// Nothing is sent and the file stays as it was.
func TestModelErrors(t *testing.T) {
	m := newFakeModel(t, summarizerOpenAI)
	file := sharedtest.TempCopy(t, demoSession)
	before := readFile(t, file)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	for _, tc := range []struct {
		name   string
		config string
		args   []string
		code   int
		want   []string
	}{
		{name: "unknown summarizer", args: []string{"--summarizer", "gpt"}, code: 2, want: []string{`--summarizer "gpt"`, "extractive, openai or anthropic"}},
		{name: "no summary model", args: []string{"--summarizer", "openai", "--base-url", m.baseURL()}, code: 2, want: []string{"--summary-model"}},
		{name: "unknown window", args: []string{"--summarizer", "openai", "--base-url", m.baseURL(), "--summary-model", "mystery-9"}, code: 2,
			want: []string{`"mystery-9"`, "unknown", "--summary-window"}},
		{name: "model flag without a model summarizer", args: []string{"--summary-model", "gpt-4o"}, code: 2, want: []string{"--summary-model needs --summarizer"}},
		{name: "bad fallback", args: []string{"--fallback", "sometimes"}, code: 2, want: []string{`--fallback "sometimes"`}},
		{name: "negative window", args: []string{"--summarizer", "openai", "--base-url", m.baseURL(), "--summary-model", "m", "--summary-window", "-5"}, code: 2,
			want: []string{"--summary-window must be a positive"}},
		{name: "negative timeout", args: []string{"--summarizer", "openai", "--base-url", m.baseURL(), "--summary-model", "gpt-4o", "--timeout", "-1s"}, code: 2,
			want: []string{"--timeout must be a positive"}},
		{name: "negative total timeout", args: []string{"--summarizer", "openai", "--base-url", m.baseURL(), "--summary-model", "gpt-4o", "--total-timeout", "-1s"}, code: 2,
			want: []string{"--total-timeout must be a positive"}},
		{name: "total timeout without a model summarizer", args: []string{"--total-timeout", "5m"}, code: 2, want: []string{"--total-timeout needs --summarizer"}},
		{name: "bad base URL", args: []string{"--summarizer", "openai", "--base-url", "localhost:11434", "--summary-model", "gpt-4o"}, code: 2,
			want: []string{`--base-url "localhost:11434"`}},
		{name: "window too small", args: []string{"--summarizer", "openai", "--base-url", m.baseURL(), "--summary-model", "m", "--summary-window", "1500"}, code: 1,
			want: []string{"too small"}},
		{name: "no key for OpenAI itself", args: []string{"--summarizer", "openai", "--summary-model", "gpt-4o"}, code: 1,
			want: []string{"no API key", "OPENAI_API_KEY"}},
		{name: "no key for Anthropic itself", args: []string{"--summarizer", "anthropic", "--summary-model", "claude-haiku-4-5"}, code: 1,
			want: []string{"ANTHROPIC_API_KEY"}},
		{name: "config: unknown summarizer", config: `{"summarizer": "local"}`, code: 2, want: []string{cfg + `:1: summarizer: "local": want`}},
		{name: "config: model without summarizer", config: `{"summaryModel": "m"}`, code: 2, want: []string{cfg + ":1: summaryModel: needs \"summarizer\""}},
		{name: "config: bad timeout", config: `{"timeout": "soon"}`, code: 2, want: []string{cfg + `:1: timeout: "soon"`}},
		{name: "config: bad totalTimeout", config: `{"totalTimeout": "later"}`, code: 2, want: []string{cfg + `:1: totalTimeout: "later"`}},
		{name: "config: negative totalTimeout", config: `{"totalTimeout": "-5m"}`, code: 2, want: []string{cfg + ":1: totalTimeout: ", "negative"}},
		{name: "config: timeout as a number", config: `{"timeout": 30}`, code: 2, want: []string{cfg + ":1: timeout: ", "duration string"}},
		{name: "config: bad fallback", config: `{"fallback": "always"}`, code: 2, want: []string{cfg + `:1: fallback: "always"`}},
		{name: "config: misspelt key", config: `{"summaryWindows": 32000}`, code: 2, want: []string{cfg + `:1: summaryWindows: unknown key; did you mean "summaryWindow"?`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCLI(t)
			args := append([]string{"run", file}, tc.args...)
			if tc.config != "" {
				writeFile(t, cfg, tc.config)
				args = append(args, "--config", cfg)
			}
			contains(t, "error", c.fails(tc.code, args...), tc.want...)
		})
	}
	unchanged(t, file, before, "a refused run")
	// A dry run sends nothing, so it needs no key; the other settings
	// are checked all the same.
	c := newCLI(t)
	contains(t, "dry run", c.ok("run", "--dry-run", file, "--summarizer", "openai", "--summary-model", "gpt-4o"), "nothing was written")
	c.fails(2, "run", "--dry-run", file, "--summarizer", "openai", "--summary-model", "mystery-9")
	if n := len(m.seen()); n != 0 {
		t.Errorf("%d requests were sent by refused runs", n)
	}
}

// TestHeadroomAdjustments checks that the policy's target for the
// session model bounds the rebuilt context, and that what was changed to
// meet it is reported.
func TestHeadroomAdjustments(t *testing.T) {
	c := newCLI(t)
	file := sharedtest.TempCopy(t, demoSession)
	// A 30,000-token window: the default policy keeps a fifth of it
	// free, so the trigger is 24,000 and the target half that, 12,000;
	// the 20,000 tokens kept by default would not leave room for a
	// summary.
	var rr runReport
	c.okJSON(&rr, "run", "--json", "--window", "30000", file)
	if rr.TargetTokens != 12000 || len(rr.Adjustments) == 0 || rr.TokensAfter > 12000 {
		t.Fatalf("target %d, adjustments %q, tokens after %d", rr.TargetTokens, rr.Adjustments, rr.TokensAfter)
	}
	contains(t, "adjustment", rr.Adjustments[0], "kept part reduced", "12000")

	file = sharedtest.TempCopy(t, demoSession)
	out := c.ok("run", "--window", "30000", file)
	contains(t, "run", out, "  adjusted: kept part reduced")

	// With an unknown window there is no target and no adjustment. (The
	// demo session on a model the registry does not know: a session as
	// small as tinySession's would have nothing to gain from a summary.)
	mystery := filepath.Join(t.TempDir(), "mystery.jsonl")
	writeFile(t, mystery, strings.ReplaceAll(string(readFile(t, demoSession)), "claude-sonnet-4-5", "mystery-model-9"))
	var unknown runReport
	c.okJSON(&unknown, "run", "--json", "--keep-recent", "1000", mystery)
	if unknown.Window != 0 || unknown.TargetTokens != 0 || len(unknown.Adjustments) != 0 || unknown.EntryID == "" {
		t.Errorf("unknown window: window %d, target %d, adjustments %q", unknown.Window, unknown.TargetTokens, unknown.Adjustments)
	}
}

// TestModelReplyReviewed: a refusal is asked for again, told why; a good
// second reply is used and reported; a second refusal gets the offline
// summary even with --fallback none, with a warning and the entry marked.
func TestModelReplyReviewed(t *testing.T) {
	const refusal = "I'm sorry, but I can't help with that request."
	for _, tt := range []struct {
		name     string
		refusals int
	}{{"refused once", 1}, {"refused twice", 2}} {
		t.Run(tt.name, func(t *testing.T) {
			m := newFakeModel(t, summarizerOpenAI)
			m.answer = func(n int, r *seenRequest) answer {
				if n <= tt.refusals {
					return answer{text: refusal}
				}
				return answer{}
			}
			c := newCLI(t)
			c.env[keyVar(summarizerOpenAI)] = "test-key"
			file := sharedtest.TempCopy(t, demoSession)
			res := c.run(append(modelArgs(m, file, "--summary-window", "128000"), "--json")...)
			if res.code != 0 {
				t.Fatalf("exit %d: %s", res.code, res.stderr)
			}
			var rr runReport
			if err := json.Unmarshal([]byte(res.stdout), &rr); err != nil {
				t.Fatal(err)
			}
			reqs := m.seen()
			if len(reqs) < 2 || !strings.Contains(reqs[1].Prompt, "could not be used as the hand-over notes: it is a refusal or an apology") {
				t.Fatalf("%d requests; the second does not say what was wrong", len(reqs))
			}
			if tt.refusals == 1 {
				if *rr.Fallback || len(rr.Refused) == 0 || !strings.Contains(rr.Summary, fakeSummaryMark) {
					t.Errorf("fallback %v, refused %q, summary %.200q", *rr.Fallback, rr.Refused, rr.Summary)
				}
				contains(t, "stderr", res.stderr, "the model's first reply was refused")
				return
			}
			if !*rr.Fallback || !strings.HasPrefix(rr.Summary, "> Written without a model: the model's summary was refused") ||
				strings.Contains(rr.Summary, refusal) {
				t.Errorf("fallback %v, summary %.200q", *rr.Fallback, rr.Summary)
			}
			contains(t, "stderr", res.stderr, "gave a reply that was refused twice")
			e := open(t, file).Entry(rr.EntryID)
			if e == nil || e.Compaction.Details["summaryRejected"] != true {
				t.Errorf("entry details %v", e.Compaction.Details)
			}
		})
	}
}
