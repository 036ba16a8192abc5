package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/fakeupstream"
	"github.com/compactkit/compact/internal/testing/syncbuf"
	"github.com/compactkit/compact/proxy/store"
	"github.com/compactkit/compact/summarize"
)

// TestSummaryRidesTheConversation: with the upstream summarizer, a summary
// request is the conversation as the proxy sent it upstream before, cut
// after the summarized messages, plus one closing instruction: the same
// system, tools and settings, the list items byte for byte up to the cut
// (so that a prefix cache reads nearly all of it), tools not callable,
// not streamed. The compaction's log line records where each summary
// request was asked and how much of it the provider read from its cache.
func TestSummaryRidesTheConversation(t *testing.T) {
	toolChoice := map[API]string{Anthropic: `{"type":"none"}`, Chat: `"none"`, Responses: `"none"`}
	maxField := map[API]string{Anthropic: "max_tokens", Chat: "max_completion_tokens", Responses: "max_output_tokens"}
	for _, api := range []API{Anthropic, Chat, Responses} {
		t.Run(string(api), func(t *testing.T) {
			up := newFakeUpstream(t)
			var logs syncbuf.Buffer
			_, ts := newTestProxy(t, up, Config{Window: 12000, Policy: compact.Reserve{Tokens: 3000},
				Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			c := newClient(t, api, ts.URL)
			for i := 1; i <= 20; i++ {
				c.step(i)
			}
			all := up.requests()
			rides := 0
			for k, r := range all {
				if isAgentRequest(r.Path, r.Body) || !bytes.Contains(r.Body, []byte(`"tools"`)) {
					continue
				}
				rides++
				// The agent request the proxy sent just before.
				var prev *seen
				for j := k - 1; j >= 0; j-- {
					if isAgentRequest(all[j].Path, all[j].Body) {
						prev = &all[j]
						break
					}
				}
				if prev == nil {
					t.Fatalf("summary request %d comes before any agent request", k)
				}
				for _, key := range []string{"model", "system", "tools", "instructions", "prompt_cache_key", "thinking"} {
					if a, b := topLevel(r.Body, key), topLevel(prev.Body, key); !bytes.Equal(a, b) {
						t.Errorf("summary request %d: %s is %s, was %s upstream", k, key, a, b)
					}
				}
				if got := topLevel(r.Body, "tool_choice"); string(got) != toolChoice[api] {
					t.Errorf("summary request %d: tool_choice %s, want %s", k, got, toolChoice[api])
				}
				if bytes.Equal(topLevel(r.Body, "stream"), []byte("true")) {
					t.Errorf("summary request %d is streamed", k)
				}
				if topLevel(r.Body, maxField[api]) == nil {
					t.Errorf("summary request %d has no %s", k, maxField[api])
				}
				list, before := listOf(t, api, r.Body), listOf(t, api, prev.Body)
				if len(list) < 2 || len(list)-1 > len(before) {
					t.Fatalf("summary request %d: %d items after %d", k, len(list), len(before))
				}
				for i := range list[:len(list)-1] {
					if !bytes.Equal(list[i], before[i]) {
						t.Fatalf("summary request %d: item %d differs from what went upstream before:\n%s\n%s", k, i, list[i], before[i])
					}
				}
				if !fakeupstream.IsSummaryPrompt(fakeupstream.Prompt(fakeAPIs[r.Path], r.Body)) {
					t.Errorf("summary request %d does not end with the instruction", k)
				}
				// What a prefix cache reads of it: everything but the
				// instruction and the members set for the summary.
				last := list[len(list)-1]
				if share := 1 - float64(len(last)+64)/float64(len(r.Body)); share < 0.8 {
					t.Errorf("summary request %d: only %.0f%% of it is a prefix sent before", k, 100*share)
				}
			}
			if rides < 2 {
				t.Fatalf("%d summary requests on the conversation, want one per compaction (at least 2)", rides)
			}
			if !strings.Contains(logs.String(), `summary_requests="conversation `) {
				t.Errorf("the compaction's log line does not record the summary requests:\n%s", logs.String())
			}
			found := false
			for _, m := range up.modelRequests() {
				found = found || bytes.Contains(m.Body, []byte(fakeupstream.HandoverMark))
			}
			if !found {
				t.Error("the model's summary never reached a later request")
			}
		})
	}
}

// TestForkRequest checks the summary request made on a conversation with
// signed thinking, cut at every point the planner may cut: it validates
// under the API's pairing and thinking rules, keeps every item before the
// cut byte for byte when nothing was compacted before, never ends with an
// unanswered tool call, sizes max_tokens above the thinking budget and
// makes the tools not callable; and it is not made when the prefix does
// not fit the window.
func TestForkRequest(t *testing.T) {
	body := thinkingConversation()
	srv, _ := proxyIn(t, "http://127.0.0.1:1", Config{Window: 200000, Summarizer: SummarizerUpstream})
	p, err := codecFor(Anthropic).parse(body)
	if err != nil {
		t.Fatal(err)
	}
	for _, withCP := range []bool{false, true} {
		for end := 2; end <= len(p.Units); end++ {
			v := &view{api: Anthropic, p: p, info: compact.ModelInfo{ID: "claude-test", ContextWindow: 200000, MaxOutput: 64000}}
			if withCP {
				if p.Units[1].Messages[0].Role == compact.RoleToolResult {
					continue
				}
				v.cp = &store.Checkpoint{Covered: 1, Item: codecFor(Anthropic).summaryItem("earlier summary")}
				if end <= 1 {
					continue
				}
			}
			var sent []byte
			r := &rider{s: srv, v: v, info: v.info, send: senderFunc(func(ctx context.Context, b []byte) (*summarize.Response, error) {
				sent = b
				return &summarize.Response{Text: "notes"}, nil
			})}
			span := p.Units[end-1].Messages
			_, err := r.ask(context.Background(), &summarize.ConversationRequest{
				Summary: &compact.SummaryRequest{Messages: span}, Instruction: "Write the notes. Do not call any tool.", MaxTokens: 4000})
			if withCP && end == 2 && unanswered(p.Units[1]) {
				// Nothing but an unanswered call after the summary.
				if !errors.Is(err, summarize.ErrNotOnConversation) || sent != nil {
					t.Errorf("cut %d after a compaction: err %v, sent %v", end, err, sent != nil)
				}
				continue
			}
			if err != nil {
				t.Fatalf("cut %d (compacted before: %v): %v", end, withCP, err)
			}
			if err := validateBody(Anthropic, sent); err != nil {
				t.Errorf("cut %d (compacted before: %v): invalid: %v", end, withCP, err)
			}
			list := listOf(t, Anthropic, sent)
			lastKept := list[len(list)-2]
			if bytes.Contains(lastKept, []byte(`"tool_use"`)) {
				t.Errorf("cut %d: the fork ends with an unanswered tool call: %s", end, lastKept)
			}
			if bytes.Contains(lastKept, []byte(`"tool_result"`)) {
				// The tool loop in progress at the cut keeps its thinking:
				// the API merges the instruction into that user turn.
				asst := list[len(list)-3]
				var m struct {
					Content []struct{ Type string } `json:"content"`
				}
				_ = json.Unmarshal(asst, &m)
				if len(m.Content) == 0 || !strings.HasSuffix(m.Content[0].Type, "thinking") {
					t.Errorf("cut %d (compacted before: %v): the tool loop at the cut lost its thinking: %s", end, withCP, asst)
				}
				if withCP && !bytes.Contains(topLevel(sent, "thinking"), []byte("drop_block")) {
					t.Errorf("cut %d: thinking kept after a summary without drop_block", end)
				}
			}
			if !withCP {
				for i := range list[:len(list)-1] {
					if !bytes.Equal(list[i], p.Items[i]) {
						t.Fatalf("cut %d: item %d changed", end, i)
					}
				}
			}
			if got := string(topLevel(sent, "max_tokens")); got != "5024" {
				t.Errorf("cut %d: max_tokens %s, want the summary's 4000 plus the thinking budget", end, got)
			}
			if got := string(topLevel(sent, "tool_choice")); got != `{"type":"none"}` {
				t.Errorf("cut %d: tool_choice %s", end, got)
			}
			if !bytes.Contains(list[len(list)-1], []byte(`"cache_control":{"type":"ephemeral"}`)) {
				t.Errorf("cut %d: the instruction carries no cache breakpoint", end)
			}
		}
	}

	// A window the prefix does not fit: nothing is sent, and the
	// summarizer is told to quote a transcript.
	v := &view{api: Anthropic, p: p, info: compact.ModelInfo{ID: "claude-test", ContextWindow: 4000}}
	r := &rider{s: srv, v: v, info: v.info, send: senderFunc(func(context.Context, []byte) (*summarize.Response, error) {
		t.Fatal("a fork that does not fit was sent")
		return nil, nil
	})}
	_, err = r.ask(context.Background(), &summarize.ConversationRequest{
		Summary: &compact.SummaryRequest{Messages: p.Units[len(p.Units)-1].Messages}, Instruction: "notes", MaxTokens: 2000})
	if !errors.Is(err, summarize.ErrNotOnConversation) {
		t.Fatalf("err = %v, want ErrNotOnConversation", err)
	}
}

type senderFunc func(ctx context.Context, body []byte) (*summarize.Response, error)

func (f senderFunc) Send(ctx context.Context, body []byte, _ http.Header) (*summarize.Response, error) {
	return f(ctx, body)
}

// TestSummaryReadsTheCache runs conversations through the proxy against
// the scripted provider (fakeupstream.Fake: prompt-cache accounting by
// prefix, signed thinking and its rules): every summary asked on the
// conversation reads at least 80 % of its input from the provider's
// cache, the checkpoint records it, and no request is refused by the
// thinking rules.
func TestSummaryReadsTheCache(t *testing.T) {
	cases := []struct {
		api     API
		members string
	}{
		// Automatic caching: a breakpoint at the last block of every turn.
		{Anthropic, `"thinking":{"type":"enabled","budget_tokens":1024},"cache_control":{"type":"ephemeral"},`},
		{Chat, ""},
		{Responses, ""},
	}
	for _, tc := range cases {
		t.Run(string(tc.api), func(t *testing.T) {
			fake, base := fakeupstream.Start(t, fakeupstream.Config{Steps: 60, CacheMinTokens: 1})
			var logs syncbuf.Buffer
			// A window the prefix and the summary's output (with the
			// thinking budget) fit together.
			_, ts := proxyIn(t, base, Config{Window: 30000, Policy: compact.Reserve{Tokens: 3000},
				Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			c := newClient(t, tc.api, ts.URL)
			c.marker, c.members = true, tc.members
			for i := 1; i <= 45; i++ {
				c.step(i)
			}
			rides := 0
			for _, r := range fake.Requests() {
				if r.ThinkingRejected {
					t.Errorf("request %d refused by the thinking rules: %s", r.Seq, r.Error)
				}
				if text, ok := lastUserTextOf(fakeupstream.API(tc.api), r.Body); !ok || !strings.Contains(text, "Do not call any tool") {
					continue
				}
				rides++
				if r.Status != 200 {
					t.Errorf("summary request %d: status %d: %s", r.Seq, r.Status, r.Error)
					continue
				}
				if share := float64(r.CacheRead) / float64(r.Tokens); share < 0.8 {
					t.Errorf("summary request %d read %d of %d tokens from the cache (%.0f%%), want at least 80%%", r.Seq, r.CacheRead, r.Tokens, 100*share)
				}
			}
			if rides < 2 {
				t.Fatalf("%d summary requests on the conversation, want at least 2\n%s", rides, logs.String())
			}
			if strings.Contains(logs.String(), "used the offline summary") {
				t.Errorf("a model summary fell back:\n%s", logs.String())
			}
			if !strings.Contains(logs.String(), "% cached") || strings.Contains(logs.String(), `summary_requests="conversation 0 tokens`) {
				t.Errorf("the log lines do not record the cache read share:\n%s", logs.String())
			}
		})
	}
}

// lastUserTextOf is the text of the last message of body when it is a
// user message.
func lastUserTextOf(api fakeupstream.API, body []byte) (string, bool) {
	text := fakeupstream.Prompt(api, body)
	return text, text != ""
}
