package summarize

import (
	"context"
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/sharedtest"
	"github.com/compactkit/compact/session"
)

// pathRecaller is a fake model that remembers file paths and nothing
// else. Its summary lists, one "- file: `PATH`" line each, every path it
// can see in its prompt: in the transcript, the path arguments of tool
// calls (and the "path:" line written when long arguments were cut); in
// the running summary, its own earlier lines.
//
// Each chunk's summary therefore names the files of that chunk plus those
// of the summary it was given. A path from the first chunk survives to the
// final summary only if every later request carried the running summary
// forward, and a path only reaches a summary at all if the transcript kept
// it visible. The final summary naming every file of the plan shows both.
type pathRecaller struct {
	fake
}

var (
	argPath     = regexp.MustCompile(`"(?:path|file_path|filePath|notebook_path)":("(?:[^"\\]|\\.)*")`)
	cutPathLine = regexp.MustCompile(`(?m)^path: (.+)$`)
	ownLine     = regexp.MustCompile("(?m)^- file: `([^`]+)`$")
)

func (p *pathRecaller) recall(req *Request) (*Response, error) {
	seen := map[string]bool{}
	for _, m := range argPath.FindAllStringSubmatch(req.Prompt, -1) {
		var s string
		if json.Unmarshal([]byte(m[1]), &s) == nil {
			seen[s] = true
		}
	}
	for _, re := range []*regexp.Regexp{cutPathLine, ownLine} {
		for _, m := range re.FindAllStringSubmatch(req.Prompt, -1) {
			seen[m[1]] = true
		}
	}
	paths := make([]string, 0, len(seen))
	for s := range seen {
		paths = append(paths, s)
	}
	sort.Strings(paths)
	var b strings.Builder
	b.WriteString(handover("paths", req.Prompt) + "\n\n## Critical Context\n")
	for _, s := range paths {
		b.WriteString("- file: `" + s + "`\n")
	}
	return &Response{Text: b.String(), Usage: compact.Usage{Input: len(req.Prompt) / 3, Output: b.Len() / 3}}, nil
}

// TestFixtureSession summarizes the history of pi's before-compaction
// session, about 117k tokens, with a summarizer whose window is 32k
// tokens.
func TestFixtureSession(t *testing.T) {
	path := sharedtest.PiSession(t, "before-compaction.jsonl")
	sess, err := session.Open(path, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := compact.PlanCompaction(sess.Path(), compact.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.ReadFiles)+len(plan.ModifiedFiles) == 0 {
		t.Fatal("fixture plan has no files")
	}

	p := &pathRecaller{}
	p.respond = func(_ int, req *Request) (*Response, error) { return p.recall(req) }
	var calls []int
	s, _ := newTest(t, p, model32k, func(o *Options) {
		o.Progress = func(done, total int) { calls = append(calls, done) }
	})

	sum, err := s.Summarize(context.Background(), &compact.SummaryRequest{
		Kind: compact.SummaryHistory, Messages: plan.Messages, PreviousSummary: plan.PreviousSummary,
		ReadFiles: plan.ReadFiles, ModifiedFiles: plan.ModifiedFiles,
	})
	if err != nil {
		t.Fatal(err)
	}
	reqs := p.requests()
	if len(reqs) < 2 {
		t.Errorf("%d requests: the history should not fit one 32k request", len(reqs))
	}
	for i, r := range reqs {
		if got := conservative(r); got >= model32k.ContextWindow {
			t.Errorf("request %d: prompt of %d tokens at 3 chars a token, window %d", i+1, got, model32k.ContextWindow)
		}
		if got := conservative(r) + r.MaxTokens; got > model32k.ContextWindow {
			t.Errorf("request %d: prompt plus output %d tokens, window %d", i+1, got, model32k.ContextWindow)
		}
	}
	if len(calls) != len(reqs) {
		t.Errorf("progress called %d times for %d requests", len(calls), len(reqs))
	}
	for _, f := range append(append([]string(nil), plan.ReadFiles...), plan.ModifiedFiles...) {
		if !strings.Contains(sum.Text, f) {
			t.Errorf("final summary lacks %s", f)
		}
	}
	if sum.Summarizer != model32k.ID || sum.Usage == nil || sum.Usage.Input == 0 {
		t.Errorf("summary metadata: %q %+v", sum.Summarizer, sum.Usage)
	}
	t.Logf("%d messages in %d requests, largest prompt %d tokens at 3 chars a token",
		len(plan.Messages), len(reqs), largest(reqs))

	// The split turn's prefix, as the engine asks for it.
	if plan.IsSplitTurn {
		p.reqs = nil
		if _, err := s.Summarize(context.Background(), &compact.SummaryRequest{
			Kind: compact.SummaryTurnPrefix, Messages: plan.TurnPrefix, MaxTokens: 0,
		}); err != nil {
			t.Fatal(err)
		}
		for i, r := range p.requests() {
			if !strings.Contains(r.Prompt, "## Turn Request") {
				t.Errorf("prefix request %d without the prefix prompt", i+1)
			}
			if got := conservative(r) + r.MaxTokens; got > model32k.ContextWindow {
				t.Errorf("prefix request %d: %d tokens", i+1, got)
			}
		}
	}
}

func largest(reqs []Request) int {
	n := 0
	for _, r := range reqs {
		n = max(n, conservative(r))
	}
	return n
}
